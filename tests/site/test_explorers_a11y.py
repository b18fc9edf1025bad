"""Every explorer of the book is usable on a phone, in dark mode and with a screen reader (issue 19).

Each lesson page with explorers is opened from ``make book`` (no kernel: book/explorers.js draws
them from the stored widget state) at a phone's width (390 px) and a desktop's (1280 px), in the
book's light and dark modes (chosen as its switch does: the theme's stored ``mode`` and the
system's colour scheme). For every explorer:

- the smallest text drawn renders at 11 px or more on the phone, 12 px or more on the desktop
  (the computed font size of each SVG <text> times its SVG's scale on screen);
- no control or readout sticks out of the explorer, and every control is at least 24 × 24 px
  (WCAG 2.5.8);
- it follows the page: its background is dark in dark mode and light in light mode, and its
  text has a contrast of at least 4.5:1 on it.

In the accessibility tree (Playwright's ARIA snapshot) each explorer shows its pictures as images
with a name and nothing inside (the axis ticks are out of the tree), holds its numbers as tables
with column and row headers, and after a key press on its first slider (Home, or End where it is
at its minimum) its polite live region says in one plain sentence what changed ("Weights of h1
rose from 0.880 to 0.920, and 1 other number changed."), with no arrow to be read out as a symbol.
"""

from __future__ import annotations

import re

import pytest
from test_book import (
    LOAD_TIMEOUT,
    MOVE_TIMEOUT,
    WITH_EXPLORERS,
    book,  # noqa: F401  (the fixture: build/book, fresh; book_site needs it)
    explorers_in,
)
from test_book import site as book_site  # noqa: F401  (the fixture: build/book served on 127.0.0.1)

WIDTHS = {390: 11.0, 1280: 12.0}  # page width (px): the smallest text allowed (px)
MODES = ("light", "dark")
MIN_CONTROL = 24  # px, WCAG 2.5.8
ROLE = re.compile(r"^\s*- '?([a-z]+)", re.M)  # the role on each line of an ARIA snapshot
# what a move says (attention_lessons/kit/widgets/js/a11y.js changeSentence, or lesson 15's moveSentence):
# "Weights of h1 rose from 0.880 to 0.920, and 1 other number changed." / "Step 2 (was 1): …."
PLAIN_SENTENCE = re.compile(r"^[A-Z].*(?: (?:rose|fell|changed) from .+ to .+| \(was .+\): .+)\.$")

DRAWN = """n => document.querySelectorAll('.attnlib-explorer .attnlib-pictures svg text').length > 0
    && document.querySelectorAll('.attnlib-explorer').length >= n"""
# An explorer's smallest text on screen (px: its font size times its SVG's scale) and what it says.
SMALLEST_TEXT = """root => {
    let px = Infinity, which = '';
    for (const t of root.querySelectorAll('.attnlib-pictures svg text')) {
        if (!t.getClientRects().length) continue;
        const m = t.ownerSVGElement.getScreenCTM();
        const size = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
        if (size < px) { px = size; which = t.textContent; }
    }
    return { px, which };
}"""
# Per explorer: its smallest text on screen, what sticks out, the small controls, its colours.
MEASURE = """() => [...document.querySelectorAll('.attnlib-explorer')].map(root => {
    const box = root.getBoundingClientRect();
    const { px: smallest, which } = (SMALLEST_TEXT)(root);
    const visible = [...root.querySelectorAll('input, select, button, output')]
        .filter(e => e.getClientRects().length);
    const name = e => e.dataset.control || e.className || e.tagName;
    return {
        kind: root.className,
        smallest, which,
        outside: visible.filter(e => { const b = e.getBoundingClientRect();
            return b.left < box.left - 0.5 || b.right > box.right + 0.5; }).map(name),
        small: visible.filter(e => e.tagName !== 'OUTPUT').map(e => [e, e.getBoundingClientRect()])
            .filter(([, b]) => b.width < 24 || b.height < 24)
            .map(([e, b]) => `${name(e)} ${Math.round(b.width)}x${Math.round(b.height)}`),
        background: getComputedStyle(root).backgroundColor,
        color: getComputedStyle(root).color,
    };
})""".replace("SMALLEST_TEXT", SMALLEST_TEXT)


def luminance(css: str) -> float:
    """WCAG relative luminance of a CSS ``rgb(r, g, b)`` colour."""
    channels = [int(c) / 255 for c in css[css.index("(") + 1 : css.index(")")].split(",")[:3]]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two CSS colours."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def open_lesson(browser, site: str, path: str, **screen):
    """The lesson page on ``screen`` (Playwright's context options; with ``color_scheme``, in that
    mode of the book), its explorers drawn; returns (context, page)."""
    context = browser.new_context(**screen)
    if "color_scheme" in screen:  # what the theme's switch stores
        context.add_init_script(f"localStorage.setItem('mode', '{screen['color_scheme']}')")
    page = context.new_page()
    page.goto(f"{site}/{path}", wait_until="load", timeout=LOAD_TIMEOUT)
    page.wait_for_function(DRAWN, arg=explorers_in(path), timeout=LOAD_TIMEOUT)
    return context, page


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", WITH_EXPLORERS)
def test_explorer_fits_the_page_and_follows_its_mode(browser, book_site, path, width, mode):  # noqa: F811
    context, page = open_lesson(
        browser, book_site, path, viewport={"width": width, "height": 900}, color_scheme=mode
    )
    try:
        assert page.evaluate("() => document.documentElement.dataset.theme") == mode
        explorers = page.evaluate(MEASURE)
        assert len(explorers) == explorers_in(path)
        for seen in explorers:
            where = f"{seen['kind']} at {width} px, {mode}"
            smallest = f"{where}: {seen['which']!r} is {seen['smallest']:.1f} px"
            assert round(seen["smallest"], 2) >= WIDTHS[width], smallest  # to a hundredth of a pixel
            assert seen["outside"] == [], f"{where}: sticking out of the explorer: {seen['outside']}"
            assert seen["small"] == [], f"{where}: controls under {MIN_CONTROL} px: {seen['small']}"
            dark = luminance(seen["background"]) < 0.2
            assert dark == (mode == "dark"), f"{where}: background {seen['background']}"
            ratio = contrast(seen["background"], seen["color"])
            assert ratio >= 4.5, f"{where}: text {seen['color']} on {seen['background']}: {ratio:.2f}:1"
        scroll = page.evaluate(
            "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert scroll[0] <= scroll[1], f"at {width} px the page is {scroll[0]} px wide"
    finally:
        context.close()


@pytest.mark.parametrize("path", WITH_EXPLORERS)
def test_a_screen_reader_finds_the_tables_and_hears_a_move(browser, book_site, path):  # noqa: F811
    context, page = open_lesson(
        browser, book_site, path, viewport={"width": 1280, "height": 900}, color_scheme="light"
    )
    try:
        roots = page.locator(".attnlib-explorer")
        for index in range(roots.count()):
            root = roots.nth(index)
            pictures = root.locator(".attnlib-pictures").aria_snapshot()
            lines = [line for line in pictures.splitlines() if line.strip()]
            assert lines and set(ROLE.findall(pictures)) == {"img"}, f"not images alone: {pictures}"
            # each a name and nothing after it: no tick or number of the drawing in the tree
            assert all(line.rstrip().endswith(('"', "\"'")) for line in lines), f"not names alone: {pictures}"
            numbers = root.locator(".attnlib-numbers").aria_snapshot()
            roles = set(ROLE.findall(numbers))
            assert {"table", "caption", "columnheader", "rowheader", "cell"} <= roles, numbers
            slider = root.locator('input[type="range"]').first
            at_min = slider.evaluate("e => Number(e.value) <= Number(e.min)")
            slider.focus()
            page.keyboard.press("End" if at_min else "Home")  # a move that surely changes what is drawn
            live = root.locator('[aria-live="polite"]')
            said = "e => e.textContent.trim().length > 0"
            page.wait_for_function(said, arg=live.element_handle(), timeout=MOVE_TIMEOUT)
            sentence = live.text_content().strip()
            assert PLAIN_SENTENCE.match(sentence), f"not one plain sentence saying what changed: {sentence!r}"
            assert "\u2192" not in sentence, f"an arrow is read out as a symbol: {sentence!r}"
    finally:
        context.close()
