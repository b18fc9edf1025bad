"""The PDF handouts of ``make handouts`` (tools/build_handouts.py), opened and read page by page.

Every deck is printed here into a temporary folder, the teacher's from ``build/slides`` and the
students' from ``build/slides-student`` as ``make slides`` left them (the slide test's freshness
check; the test skips with a hint, and fails under CI, without fresh decks), on A4, and lessons 00
and 07 on Letter too. No student handout holds any piece of a solution cell that the teacher's shows
(like the book's student edition). Each PDF has pages of its paper size, printed at 100 % (a figure's
smallest text at least 7.5 pt), every slide once and in order, at most two slides' height to a page
(and a page more for each table that runs on), every figure of its deck, the figures' tables unfolded,
and, in the teacher's edition only, speaker notes whose formulas are typeset: no TeX left in the
notes' text on the page (``\\frac``, ``$``, ``\\(``).

No PDF library is installed with the tests: :class:`Pdf` reads what Chromium's PDFs (Skia) hold,
uncompressed objects with Flate streams, and the text of each page through its fonts' ToUnicode
maps.
"""

from __future__ import annotations

import math
import re
import unicodedata
import zlib
from pathlib import Path

import build_handouts
import build_slides
import nbformat
import pytest
import slides_browser
from build_student import is_solution
from conftest import ROOT, require_build
from test_book import fingerprints
from test_slides import DECKS, LESSONS, STUDENT_DECKS, stale_or_missing_decks

STUDENT_NOTEBOOKS = ROOT / "build" / "student" / "notebooks"
FOLDERS = {"teacher": DECKS, "student": STUDENT_DECKS}
ON_LETTER = ["00_start_here", "07_whole_picture"]
A4, LETTER = build_handouts.PAPERS
PAPER_POINTS = {"A4": (595.28, 841.89), "Letter": (612.0, 792.0)}
TEX = re.compile(r"\\(frac|sqrt|top|operatorname|mathrm|\(|\[)|\$")
TABLE = "The numbers in this figure"


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

    def scale(self, page: int) -> float:
        """Points per CSS pixel on a page: 0.75 where Chromium printed it at 100 % (its first two
        matrices: pixels to points, then any shrinking to fit the paper)."""
        contents = re.search(rb"/Contents (\d+) 0 R", self._dict(page))
        first, second = re.findall(
            rb"([-\d.]+) 0 0 [-\d.]+ [-\d.]+ [-\d.]+ cm", self.stream(int(contents[1]))
        )[:2]
        return float(first) * float(second)


def _slides(deck: str, edition: str) -> list[tuple[int, bool]]:
    """(number of figures, whether a figure's table is on it) of each slide of ``deck`` in its
    ``edition`` (the students' is made from the student copy), as built."""
    folder = STUDENT_NOTEBOOKS if edition == "student" else ROOT / "notebooks"
    notebook = build_slides.deck_notebook(nbformat.read(folder / f"{deck}.ipynb", as_version=4))
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
    """Every deck printed, both editions, on A4 (and two on Letter), in a temporary folder (skips
    without fresh decks)."""
    for folder in FOLDERS.values():
        require_build(stale_or_missing_decks(folder), "make slides")
    out = tmp_path_factory.mktemp("handouts")
    for edition, folder in FOLDERS.items():
        with slides_browser.serve(folder) as base:
            for deck in LESSONS:
                papers = (A4, LETTER) if deck in ON_LETTER else (A4,)
                build_handouts.print_deck(browser, base, deck, out, edition, papers)
    return out


def _compact(text: str) -> str:
    """``text`` without white space: a PDF places words where a page breaks lines and sets spaces."""
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize("deck", LESSONS)
def test_no_student_handout_holds_a_solution(handouts, deck):
    """No piece of a solution cell that the teacher's handout shows is in the student's."""
    teacher, student = (
        Pdf(handouts / build_handouts.handout_name(deck, edition, A4)) for edition in ("teacher", "student")
    )
    teacher_text = _compact("".join(teacher.text(page) for page in teacher.pages))
    student_text = _compact("".join(student.text(page) for page in student.pages))
    cells = nbformat.read(ROOT / "notebooks" / f"{deck}.ipynb", as_version=4).cells
    solutions = [cell for cell in cells if is_solution(cell)]
    kept = _compact(" ".join(cell.source for cell in cells if cell not in solutions))
    found = 0
    for cell in solutions:
        shown = {_compact(p) for p in fingerprints(cell)} - {""}
        shown = {piece for piece in shown if piece not in kept and piece in teacher_text}
        found += bool(shown)
        leaked = sorted(piece for piece in shown if piece in student_text)
        assert not leaked, f"{deck}: solution cell {cell.id} is in the student handout: {leaked[:3]}"
    assert found or not solutions, f"{deck}: no solution cell found in the teacher's handout to look for"


@pytest.mark.parametrize("edition", build_handouts.EDITIONS)
@pytest.mark.parametrize("deck", LESSONS)
def test_every_slide_printed_whole_at_full_size(handouts, deck, edition):
    """Every slide once, in order ("slide 3 of 40" under each), at most two slides' height to a page
    (and a page more for each table that runs on), printed at 100 %, every figure and table there."""
    papers = (A4, LETTER) if deck in ON_LETTER else (A4,)
    slides = _slides(deck, edition)
    tables = sum(table for _, table in slides)
    for paper in papers:
        pdf = Pdf(handouts / build_handouts.handout_name(deck, edition, paper))
        text = "".join(pdf.text(page) for page in pdf.pages)
        labels = [(int(k), int(n)) for k, n in re.findall(r"slide (\d+) of (\d+)", text)]
        assert labels == [(k, len(slides)) for k in range(1, len(slides) + 1)], f"{deck}: {labels}"
        if edition == "student":
            most = math.ceil(len(slides) / 2) + tables
            assert len(pdf.pages) <= most, f"{deck}: {len(pdf.pages)} pages for {len(slides)} slides"
        for number, page in enumerate(pdf.pages, start=1):
            width, height = pdf.size(page)
            want = PAPER_POINTS[paper.name]
            assert abs(width - want[0]) < 1 and abs(height - want[1]) < 1, (
                f"page {number}: {width}×{height} pt"
            )
            assert abs(pdf.scale(page) - 0.75) < 1e-4, f"{deck}, page {number}: shrunk to fit the paper"
        assert sum(map(pdf.images, pdf.pages)) == sum(figures for figures, _ in slides), deck
        # a table's caption is printed once on the slide (folded) and once more under it (unfolded)
        assert text.count(TABLE) == 2 * tables, f"{deck}: {text.count(TABLE)} captions for {tables} tables"
    assert build_handouts.figure_text_pt(build_handouts.SLIDE_MM * build_handouts.PX_PER_MM) >= 7.5


@pytest.mark.parametrize("deck", ON_LETTER)
def test_the_teachers_notes_are_printed_with_their_math_typeset(handouts, deck):
    title_notes, pauses = build_slides.lesson_notes(
        (ROOT / "docs" / "instructor_guide.md").read_text(encoding="utf-8")
    )[deck[:2]]
    for paper in build_handouts.PAPERS:
        teacher = Pdf(handouts / build_handouts.handout_name(deck, "teacher", paper))
        student = Pdf(handouts / build_handouts.handout_name(deck, "student", paper))
        first = teacher.text(teacher.pages[0])
        assert "Speaker notes" in first
        assert not any("Speaker notes" in student.text(page) for page in student.pages)
        words = re.sub(r"[^a-z]+", " ", title_notes.split("\n")[0].lower()).split()[:3]
        assert all(word in first.lower() for word in words), (
            f"{deck}: the title notes {words} not in {first[:400]!r}"
        )
        # the notes follow their label; a slide may show a `$` in code or its output
        notes = [text.partition("Speaker notes")[2] for text in map(teacher.text, teacher.pages)]
        raw = [
            (number, TEX.search(text)[0], text[:200])
            for number, text in enumerate(notes, 1)
            if TEX.search(text)
        ]
        assert not raw, f"{deck} ({paper.name}): TeX printed as written: {raw}"
    assert (
        "$" in title_notes + "".join(pauses.values()) or deck != "07_whole_picture"
    )  # there was math to typeset
