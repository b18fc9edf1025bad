"""The PDF handouts of ``make handouts`` (tools/build_handouts.py), opened and read page by page.

Two decks are printed here into a temporary folder from ``build/slides`` as ``make slides`` left it
(the slide test's freshness check; the test skips with a hint, and fails under CI, without fresh
decks): lesson 07, whose main figure is split over two pages, and lesson 00. Each of the four PDFs
of a deck (student and teacher, A4 and Letter) must have one page per slide (no blank page), pages
of its paper size, an image on every page whose slide shows a figure, the figures' tables unfolded
under them, and, in the teacher's edition, speaker notes whose formulas are typeset: no TeX left
in the notes' text on the page (``\\frac``, ``$``, ``\\(``).

No PDF library is installed with the tests: :class:`Pdf` reads what Chromium's PDFs (Skia) hold,
uncompressed objects with Flate streams, and the text of each page through its fonts' ToUnicode
maps.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from pathlib import Path

import build_handouts
import build_slides
import nbformat
import pytest
import slides_browser
from conftest import ROOT, require_build
from test_slides import DECKS, stale_or_missing_decks

PRINTED = ["00_start_here", "07_whole_picture"]
PAPER_POINTS = {"A4": (595.28, 841.89), "Letter": (612.0, 792.0)}
TEX = re.compile(r"\\(frac|sqrt|top|operatorname|mathrm|\(|\[)|\$")


class Pdf:
    """The pages of a PDF as Chromium writes it: their size, their images and their text."""

    def __init__(self, path: Path) -> None:
        data = path.read_bytes()
        self.objects = {int(m[1]): m[2] for m in re.finditer(rb"(\d+) 0 obj\s*(.*?)endobj", data, re.S)}
        catalog = next(body for body in self.objects.values() if re.search(rb"/Type /Catalog\b", body))
        self.pages = self._leaves(self._ref(catalog, b"Pages"))
        self._maps: dict[int, dict[int, str]] = {}  # a font's glyph codes → text

    def _dict(self, number: int) -> bytes:
        return self.objects[number].split(b"stream", 1)[0]

    @staticmethod
    def _ref(body: bytes, key: bytes) -> int:
        return int(re.search(rb"/" + key + rb" (\d+) 0 R", body)[1])

    def _leaves(self, number: int) -> list[int]:
        body = self._dict(number)
        kids = re.search(rb"/Kids \[([^\]]*)\]", body)
        if kids is None:
            return [number]
        return [leaf for kid in re.findall(rb"(\d+) 0 R", kids[1]) for leaf in self._leaves(int(kid))]

    def stream(self, number: int) -> bytes:
        body = self.objects[number]
        raw = body.split(b"stream", 1)[1].lstrip(b"\r\n").rsplit(b"endstream", 1)[0]
        return zlib.decompress(raw) if b"/FlateDecode" in self._dict(number) else raw

    def size(self, page: int) -> tuple[float, float]:
        box = re.search(rb"/MediaBox \[([^\]]*)\]", self._dict(page))[1].split()
        return float(box[2]) - float(box[0]), float(box[3]) - float(box[1])

    def _resources(self, number: int, kind: bytes) -> dict[bytes, int]:
        """The named resources of ``kind`` (Font, XObject) of a page or form, inline or referenced."""
        body = self._dict(number)
        found = re.search(rb"/Resources (\d+) 0 R", body)
        if found:
            body = self._dict(int(found[1]))
        found = re.search(rb"/" + kind + rb" (?:<<(.*?)>>|(\d+) 0 R)", body, re.S)
        if not found:
            return {}
        names = found[1] if found[1] is not None else self._dict(int(found[2]))
        return {name: int(ref) for name, ref in re.findall(rb"/(\S+?) (\d+) 0 R", names)}

    def images(self, page: int) -> int:
        """How many images the page draws, in it or in the forms it draws."""
        count = 0
        for number in self._resources(page, b"XObject").values():
            body = self._dict(number)
            count += (
                1 if b"/Subtype /Image" in body else self.images(number) if b"/Subtype /Form" in body else 0
            )
        return count

    def _unicode(self, font: int) -> dict[int, str]:
        """A font's glyph codes → text, from its ToUnicode map."""
        if font not in self._maps:
            found = re.search(rb"/ToUnicode (\d+) 0 R", self._dict(font))
            table: dict[int, str] = {}
            if found:
                cmap = self.stream(int(found[1])).decode("latin-1")
                for block in re.findall(r"beginbfchar(.*?)endbfchar", cmap, re.S):
                    for code, text in re.findall(r"<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>", block):
                        table[int(code, 16)] = bytes.fromhex(text).decode("utf-16-be", "replace")
                for block in re.findall(r"beginbfrange(.*?)endbfrange", cmap, re.S):
                    for low, high, text in re.findall(r"<(\w+)>\s*<(\w+)>\s*<(\w+)>", block):
                        start = int(text, 16)
                        for offset in range(int(high, 16) - int(low, 16) + 1):
                            table[int(low, 16) + offset] = chr(start + offset)
            self._maps[font] = table
        return self._maps[font]

    def text(self, number: int) -> str:
        """The text a page (or form) shows, in the order it draws it, forms included."""
        fonts, forms = self._resources(number, b"Font"), self._resources(number, b"XObject")
        contents = re.search(rb"/Contents (?:(\d+) 0 R|\[([^\]]*)\])", self._dict(number))
        if contents is None:
            streams = [number]  # a form is its own stream
        else:
            streams = (
                [int(contents[1])]
                if contents[1]
                else [int(r) for r in re.findall(rb"(\d+) 0 R", contents[2])]
            )
        shown, font = [], None
        for stream in streams:
            tokens = re.finditer(
                rb"/(\S+) [\d.]+ Tf|<([0-9a-fA-F]*)>|\[((?:[^\]\\]|\\.)*)\]\s*TJ|/(\S+) Do|(ET)",
                self.stream(stream),
            )
            for token in tokens:
                if token[1]:
                    font = fonts.get(token[1])
                elif token[2] is not None and font is not None:
                    shown.append(self._decode(font, token[2]))
                elif token[3] is not None and font is not None:
                    shown += [self._decode(font, part) for part in re.findall(rb"<([0-9a-fA-F]*)>", token[3])]
                elif token[4] and token[4] in forms and b"/Subtype /Form" in self._dict(forms[token[4]]):
                    shown.append(self.text(forms[token[4]]))
                elif token[5]:
                    shown.append(" ")
        return unicodedata.normalize("NFKC", "".join(shown))  # ligatures (ﬁ) as their letters

    def _decode(self, font: int, hexes: bytes) -> str:
        width = 4 if b"/Subtype /Type0" in self._dict(font) else 2
        table = self._unicode(font)
        codes = [int(hexes[i : i + width], 16) for i in range(0, len(hexes), width)]
        return "".join(table.get(code, "") for code in codes)


def _slides(deck: str) -> list[tuple[int, bool]]:
    """(number of figures, whether a figure's table is on it) of each slide of ``deck``, as built."""
    lesson = nbformat.read(ROOT / "notebooks" / f"{deck}.ipynb", as_version=4)
    notebook = build_slides.deck_notebook(lesson)
    slides: list[list[str]] = []
    for cell in notebook.cells:
        if cell.metadata["slideshow"]["slide_type"] in ("slide", "subslide") or not slides:
            slides.append([])
        slides[-1] += [output.get("data", {}).get("text/html", "") for output in cell.get("outputs", [])]
    return [
        (sum(page.count("<img") for page in pages), any("<details>" in page for page in pages))
        for pages in slides
    ]


@pytest.fixture(scope="module")
def handouts(browser, tmp_path_factory) -> Path:
    """The handouts of the printed decks, in a temporary folder (skips without fresh decks)."""
    require_build(stale_or_missing_decks(), "make slides")
    out = tmp_path_factory.mktemp("handouts")
    with slides_browser.serve(DECKS) as base:
        for deck in PRINTED:
            build_handouts.print_deck(browser, base, deck, out)
    return out


@pytest.mark.parametrize("paper", build_handouts.PAPERS, ids=lambda paper: paper.name)
@pytest.mark.parametrize("edition", build_handouts.EDITIONS)
@pytest.mark.parametrize("deck", PRINTED)
def test_a_page_per_slide_on_the_paper(handouts, deck, edition, paper):
    pdf = Pdf(handouts / build_handouts.handout_name(deck, edition, paper))
    slides = _slides(deck)
    assert len(pdf.pages) == len(slides), f"{deck}: {len(pdf.pages)} pages for {len(slides)} slides"
    for number, page in enumerate(pdf.pages, start=1):
        width, height = pdf.size(page)
        want = PAPER_POINTS[paper.name]
        assert abs(width - want[0]) < 1 and abs(height - want[1]) < 1, f"page {number}: {width}×{height} pt"
    for number, (page, (figures, table)) in enumerate(zip(pdf.pages, slides, strict=True), start=1):
        assert (pdf.images(page) > 0) == (figures > 0), (
            f"{deck}, page {number}: {figures} figures on the slide"
        )
        if table:
            text = pdf.text(page)
            # the table's caption is printed once on the slide (folded) and once more under it (unfolded)
            assert text.count("The numbers in this figure") == 2, f"{deck}, page {number}: {text[:300]!r}"


@pytest.mark.parametrize("deck", PRINTED)
def test_the_teachers_notes_are_printed_with_their_math_typeset(handouts, deck):
    title_notes, pauses = build_slides.lesson_notes(
        (ROOT / "docs" / "instructor_guide.md").read_text(encoding="utf-8")
    )[deck[:2]]
    for paper in build_handouts.PAPERS:
        teacher = Pdf(handouts / build_handouts.handout_name(deck, "teacher", paper))
        student = Pdf(handouts / build_handouts.handout_name(deck, "student", paper))
        first = teacher.text(teacher.pages[0])
        assert "Speaker notes" in first and "Speaker notes" not in student.text(student.pages[0])
        words = re.sub(r"[^a-z]+", " ", title_notes.split("\n")[0].lower()).split()[:3]
        assert all(word in first.lower() for word in words), (
            f"{deck}: the title notes {words} not in {first[:400]!r}"
        )
        # the notes follow their label; a slide may show a `$` in code or its output
        notes = [teacher.text(page).partition("Speaker notes")[2] for page in teacher.pages]
        raw = [
            (number, TEX.search(text)[0], text[:200])
            for number, text in enumerate(notes, 1)
            if TEX.search(text)
        ]
        assert not raw, f"{deck} ({paper.name}): TeX printed as written: {raw}"
    assert (
        "$" in title_notes + "".join(pauses.values()) or deck != "07_whole_picture"
    )  # there was math to typeset
