"""One colour per meaning: attention_lessons.kit.plots.palette, and that figures and lessons take colours
from it. The lessons come from their manifests (attention_lessons.manifest.lessons()); a lesson's own
figure drawing its meanings' colours is tested in its folder (tests/lessons/lNN_slug/test_lNN_plots.py)."""

from __future__ import annotations

import ast
import re

import nbformat
import numpy as np
import pytest
from conftest import ROOT
from matplotlib.colors import to_rgb

from attention_lessons.kit import plots
from attention_lessons.kit.plots import contrast_ratio, palette
from attention_lessons.manifest import Lesson, lessons

COURSE = ROOT / "attention_lessons"
#: Every lesson: its manifest says whether its code takes every colour by meaning, and which.
LESSONS = lessons()
#: The figure modules: the kit's drawing tools and every lesson's figures (lesson 12's in two files).
FIGURE_MODULES = sorted(
    [
        *(COURSE / "kit" / "plots").glob("*.py"),
        *(lesson.folder / "plots.py" for lesson in LESSONS if (lesson.folder / "plots.py").is_file()),
        *(COURSE / "l12_attention_at_scale" / name for name in ("at_scale.py", "flash.py")),
    ]
)
#: Modules that may write colours as literals: the palette itself, the styles' page colours (text,
#: background, grid) and the black and white of the numbers on cells.
LITERALS_ALLOWED = {"kit/plots/palette.py", "kit/plots/styles.py", "kit/plots/contrast.py"}
#: Figure modules of other lessons that still pick Okabe–Ito colours by position, not by meaning.
#: Shrink this set; never grow it.
INDEXING_LEFT = {"l01_embeddings/plots.py", "l05_softmax/plots.py"}

HEX = re.compile(r"""["']#[0-9a-fA-F]{3,8}["']""")
COLOR_KEYWORDS = {"color", "colors", "facecolor", "edgecolor", "c"}


def _literal_colours(source: str) -> list[str]:
    """Hex strings anywhere, and string literals passed as a colour keyword (color="grey")."""
    found = HEX.findall(source)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.keyword) and node.arg in COLOR_KEYWORDS:
            value = node.value
            # "none" draws nothing (a hollow face), so it is not a colour
            if isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value != "none":
                found.append(value.value)
    return found


def test_the_meanings_have_distinct_colours_with_contrast_on_both_styles():
    colours = [m.color.lower() for m in palette.MEANINGS.values()]
    assert len(set(colours)) == len(colours), "two meanings share a colour"
    for name, meaning in palette.MEANINGS.items():
        assert meaning.reason, f"{name} has no reason"
        if name == "query":  # always drawn with its label
            continue
        for background in (plots.STYLES["light"]["axes.facecolor"], plots.STYLES["dark"]["axes.facecolor"]):
            assert contrast_ratio(meaning.color, background) >= palette.MIN_CONTRAST, (name, background)


def test_color_names_the_meaning_or_refuses():
    assert plots.color("raw score") == plots.RAW_COLOR
    assert plots.color("scaled score") == plots.SCALED_COLOR
    assert palette.meaning_of(plots.RAW_COLOR) == "raw score"
    assert palette.meaning_of((0.0, 0.0, 0.0)) is None
    with pytest.raises(ValueError, match="meaning must be one of"):
        plots.color("raw")
    ordered = plots.ordered(4)
    assert len(set(ordered)) == 4 and not any(palette.meaning_of(c) for c in ordered)
    with pytest.raises(ValueError, match="n must be"):
        plots.ordered(0)


@pytest.mark.parametrize("path", FIGURE_MODULES, ids=lambda p: p.relative_to(COURSE).as_posix())
def test_figure_modules_take_colours_from_the_palette(path):
    source = path.read_text(encoding="utf-8")
    name = path.relative_to(COURSE).as_posix()
    if name not in LITERALS_ALLOWED:
        assert not _literal_colours(source), f"{name} writes colours as literals: {_literal_colours(source)}"
    if name not in INDEXING_LEFT | {"kit/plots/palette.py"}:
        assert "OKABE_ITO[" not in source, f"{name} picks an Okabe–Ito colour by position, not by meaning"


def test_the_scan_finds_literal_colours():
    """The check above can fail: it sees a hex colour, a named one, and one in a colours list."""
    assert _literal_colours('ax.plot(x, color="#d55e00")')
    assert _literal_colours('COLOURS = ("#D55E00", "#0072B2")')
    assert _literal_colours('ax.axhline(1, color="grey")') == ["grey"]
    assert _literal_colours('ax.plot(x, color=plots.color("reference"))') == []


def _colours_not_by_meaning(code: str) -> list[str]:
    """The colours ``code`` writes as literals, and the old names that pick one by position."""
    return [
        *_literal_colours(code),
        *(old for old in ("OKABE_ITO", "RAW_COLOR", "SCALED_COLOR") if old in code),
    ]


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.id)
def test_lessons_take_colours_by_meaning(lesson: Lesson) -> None:
    nb = nbformat.read(lesson.path, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    manifest = lesson.folder / "lesson.toml"
    if lesson.colours_by_meaning:
        assert not _colours_not_by_meaning(code), (
            f"{lesson.notebook}: colours not by meaning {_colours_not_by_meaning(code)}: take the colour "
            "by meaning, plots.color(...)"
        )
    else:  # a lesson left from before the palette: the flag goes as soon as the lesson takes them by meaning
        assert _colours_not_by_meaning(code), (
            f"{lesson.notebook} takes every colour by meaning: say so in {manifest}"
        )
    meanings = sorted(set(re.findall(r"plots\.color\(\"([^\"]+)\"\)", code)))
    assert meanings == sorted(lesson.colour_meanings), (
        f"{lesson.notebook} takes {meanings}; {manifest} says otherwise"
    )
    for meaning in meanings:
        assert meaning in palette.MEANINGS, f"{lesson.notebook}: no meaning {meaning!r}"


def test_a_masked_heatmap_hatches_the_hidden_cells_and_says_so():
    fig, axes = plots.figure(1, 2)
    w = np.array([[1.0, 0.0, 0.0], [0.4, 0.6, 0.0]])
    hidden = np.triu(np.ones((2, 3), bool), 1)
    drawn = plots.heatmap(axes[0, 0], w, ["a", "b"], ["x", "y", "z"], vmin=0, vmax=1, masked=hidden)
    plain = plots.heatmap(axes[0, 1], w, ["a", "b"], ["x", "y", "z"], vmin=0, vmax=1)
    assert np.ma.getmaskarray(drawn.mesh.get_array()).reshape(2, 3).tolist() == hidden.tolist()
    assert not np.ma.getmaskarray(plain.mesh.get_array()).any()
    assert drawn.ax.patch.get_hatch() == "//" and not plain.ax.patch.get_hatch()
    assert [t.get_text() for t in drawn.texts] == ["1.00", "0.00", "0.00", "0.40", "0.60", "0.00"]
    assert "3 of 6 cells hidden by the mask (hatched)" in plots.description(fig).text
    with pytest.raises(ValueError, match="masked must be a boolean array"):
        plots.heatmap(axes[0, 1], w, ["a", "b"], ["x", "y", "z"], masked=hidden[:, :2])


def _lab(colour: str) -> np.ndarray:
    """CIELAB (D65) of a colour, for a simple perceptual distance (CIE76 ΔE)."""
    rgb = np.array(to_rgb(colour))
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > 0.008856, np.cbrt(t), 7.787 * t + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


#: The least CIE76 distance between two meanings' colours: lesson 12's first rose (#CC6677, 21 from
#: position's #CC79A7) and teal (#009988, 16 from the key's #009E73) were near-duplicates.
MIN_DISTANCE = 24.0


def test_no_two_meanings_are_near_duplicates():
    assert np.linalg.norm(_lab("#CC6677") - _lab("#CC79A7")) < MIN_DISTANCE  # the check can fail
    items = list(palette.MEANINGS.items())
    for i, (a, ma) in enumerate(items):
        for b, mb in items[i + 1 :]:
            distance = float(np.linalg.norm(_lab(ma.color) - _lab(mb.color)))
            assert distance >= MIN_DISTANCE, f"{a} {ma.color} and {b} {mb.color} are {distance:.0f} apart"


def test_every_gpu_backend_has_a_meaning_and_a_marker_of_its_own():
    looks = palette.BACKEND_LOOKS.values()
    assert all(look.meaning in palette.MEANINGS for look in looks)
    assert len({(look.marker, look.linestyle) for look in looks}) == len(looks)
    assert len({look.marker for look in looks}) == len(looks)
