"""No figure in a saved lesson lacks a real text alternative (WCAG 2.1 AA, 1.1.1 Non-text Content).

Every image output carries its text in the two places readers take it from: the ``<img alt>`` of
its ``text/html`` (what JupyterLab, the book and the decks show) and the output metadata
``{"image/png": {"alt": …}}`` (nbconvert's and other tools' place for it). A real text alternative
is words about the picture: not empty, not a file name or path, not nbconvert's stock sentence.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import nbformat
import pytest
from conftest import ROOT

NOTEBOOKS = ROOT / "notebooks"
LESSONS = sorted(path.name for path in NOTEBOOKS.glob("*.ipynb"))
STOCK = "No description has been provided for this image"
IMAGE_TYPES = ("image/png", "image/jpeg", "image/svg+xml", "image/gif")


class _ImageAlts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.alts: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            self.alts.append(dict(attrs).get("alt"))


def image_alts(page: str) -> list[str | None]:
    """The alt attribute of every ``<img>`` in ``page`` (None where there is none)."""
    parser = _ImageAlts()
    parser.feed(page)
    return parser.alts


def why_not_real(alt: str | None) -> str | None:
    """Why ``alt`` is not a real text alternative, or None when it is."""
    if alt is None:
        return "no alt text"
    text = alt.strip()
    if not text:
        return "an empty alt text"
    if text == STOCK:
        return f"nbconvert's stock {STOCK!r}"
    if re.fullmatch(r"\S*[/\\]\S*|\S+\.(png|jpe?g|svg|gif)", text, flags=re.IGNORECASE):
        return f"a file name or path {text!r}"
    if len(text.split()) < 4:
        return f"too few words to say what the picture shows: {text!r}"
    return None


@pytest.mark.parametrize(
    ("alt", "real"),
    [
        ("Attention weights: heatmap of 2 queries × 2 keys. q1: k1 0.73, k2 0.27.", True),
        (None, False),
        ("  ", False),
        (STOCK, False),
        ("../_images/521d0c3b.png", False),
        ("figure.png", False),
        ("a heatmap", False),
    ],
)
def test_why_not_real_tells_real_text_from_placeholders(alt, real):
    assert (why_not_real(alt) is None) == real


def test_image_alts_reads_every_img():
    assert image_alts('<p><img src="a.png" alt="one two"><img src="b.png"></p>') == ["one two", None]


@pytest.mark.parametrize("name", LESSONS)
def test_every_figure_of_the_lesson_has_a_real_text_alternative(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    problems = []
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    for index, cell in enumerate(code_cells, start=1):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            for mime in (m for m in IMAGE_TYPES if m in data):
                reason = why_not_real(out.get("metadata", {}).get(mime, {}).get("alt"))
                if reason:
                    problems.append(f"cell [{index}] {mime} metadata: {reason}")
                alts = image_alts(data.get("text/html", ""))
                if not alts:
                    problems.append(
                        f"cell [{index}] {mime}: no <img alt> in text/html (run it through plots.show)"
                    )
                problems += [f"cell [{index}] <img>: {r}" for r in map(why_not_real, alts) if r]
    assert not problems, f"{name}: " + "; ".join(problems)
