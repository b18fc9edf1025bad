"""Every explorer of the book is whole on every screen, and a keyboard reaches it at once (issue 32).

Each lesson page with explorers is opened from ``make book`` (no kernel: book/explorers.js draws
them from the stored widget state) at the widths of a laptop, a projector and a large screen
(1024 to 2560 px: opened at 1024, then the window widened) and on a phone (390 × 844, touch,
device scale 3):

- **nothing lies on top of an explorer**: the page is scrolled through each explorer, half a
  window at a time, and at every point of a 16 px grid over the part of the explorer in the window
  ``document.elementFromPoint`` (the topmost element there) must be part of the explorer; the
  explorer lies wholly inside the window's width (on a phone, in light and dark mode). The points
  under the page's top bars (the theme's sticky header and article header, which everything
  scrolls under) are not checked.
  Before issue 32 the sticky "Contents" sidebar covered 4–19% of the explorers at 1280 and 1440 px,
  and at 1024 px a quarter of each explorer lay beyond the window's right edge;
- **on a phone**, in light and dark mode, each explorer takes the screen's width with its panels
  stacked in one column, its smallest text at 11 px or more, no panel scrolls sideways (an
  explorer whose panels are wider than the phone can show at 11 px switches to its narrow drawing:
  controls.js's ``narrowWhen``) and no text is drawn outside its panel's picture (no title cut);
  the narrow drawing shows every number the desktop's does (the explorer's tables, made from the
  numbers drawn, are the same). Before, 21 of 36 panels scrolled sideways inside their box, and in
  dark mode the theme's frame round a widget took 16 px of the phone's width;
- **the page's contents stay reachable**: where the sticky "Contents" sidebar is not shown (below
  1200 px on every page, at every width on a page with an explorer) the article header's
  *Contents* button opens them as a dialog (book/contents.js; before, it did nothing at 992–1199 px
  on a page without an explorer);
- **a skip link leads to each explorer**: each explorer is a region named "Explorer: …", and a link
  "Skip to the explorer: …" follows the theme's "Skip to main content" at the top of the page: two
  Tab presses reach it, Enter moves the focus to the explorer and one more Tab reaches its first
  control (before, that control was 54–106 Tab presses from the top).
"""

from __future__ import annotations

import itertools

import pytest
from test_book import (
    LESSON_PAGES,
    LOAD_TIMEOUT,
    MOVE_TIMEOUT,
    WITH_EXPLORERS,
    book,  # noqa: F401  (the fixture: build/book, fresh; book_site needs it)
    explorers_in,
)
from test_book import site as book_site  # noqa: F401  (the fixture: build/book served on 127.0.0.1)
from test_explorers_a11y import SMALLEST_TEXT, open_lesson

WIDTHS = (1024, 1280, 1440, 1920, 2560)
DESKTOP_HEIGHT = 900
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 3,
    "is_mobile": True,
    "has_touch": True,
}
DESKTOPS = {f"{width}px": {"viewport": {"width": width, "height": DESKTOP_HEIGHT}} for width in WIDTHS}
SCREENS = {**DESKTOPS, "phone": PHONE}
PHONE_SMALLEST_TEXT = 11.0  # px
# A panel is drawn no narrower than its width in units × 11/12 + 1 px (controls.js: its smallest
# text, 12 units, at 11 px): the narrowest a panel can be on a phone.
PANEL_FLOOR = 11 / 12
WITHOUT_EXPLORERS = [page for page in LESSON_PAGES if not explorers_in(page)]
SKIP_TABS = 2  # Tab presses from the top of the page to the first explorer's skip link

# For each explorer: the window scrolled through it half a window at a time; at each stop every
# grid point of the explorer's part below the page's top bars, and what lies on top there when it
# is not part of the explorer (counted by the landmark or element it belongs to).
COVERED = """async (step) => {
    const frames = () => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
    const topBars = () => Math.max(0, ...[...document.querySelectorAll('.bd-header, .bd-header-article')]
        .filter(bar => ['sticky', 'fixed'].includes(getComputedStyle(bar).position))
        .map(bar => bar.getBoundingClientRect()).filter(box => box.top <= 1 && box.height > 0)
        .map(box => box.bottom));
    const nameOf = element => {
        if (!element) return 'nothing';
        const part = element.closest('[id], nav, aside, header, footer');
        const where = part ? (part.id ? '#' + part.id : part.tagName.toLowerCase()) : 'the page';
        const kind = String(element.className?.baseVal ?? element.className).split(' ')[0];
        return `${element.tagName.toLowerCase()} in ${where} (${kind})`;
    };
    const results = [];
    for (const root of document.querySelectorAll('.attnlib-explorer')) {
        const width = document.documentElement.clientWidth, height = innerHeight;
        const top = root.getBoundingClientRect().top + scrollY;
        let points = 0, covered = 0;
        const by = {};
        let box = root.getBoundingClientRect();
        for (let at = top - height / 4; at < top + root.offsetHeight; at += height / 2) {
            scrollTo(0, at);
            await frames();
            box = root.getBoundingClientRect();
            const first = Math.max(box.top, topBars());
            for (let y = first + step / 2; y < Math.min(box.bottom, height - 1); y += step) {
                for (let x = Math.max(box.left, 0) + step / 2; x < Math.min(box.right, width); x += step) {
                    points += 1;
                    const hit = document.elementFromPoint(x, y);
                    if (hit && root.contains(hit)) continue;
                    covered += 1;
                    by[nameOf(hit)] = (by[nameOf(hit)] ?? 0) + 1;
                }
            }
        }
        results.push({ kind: root.className, points, covered, by,
            left: box.left, right: box.right, width });
    }
    return results;
}"""
# For each explorer on the phone: its box, its panels (their boxes, whether each scrolls sideways,
# the width its drawing needs at 11 px), its smallest text on screen, and any text drawn outside
# its panel's picture.
PHONE_LAYOUT = """(floor) => [...document.querySelectorAll('.attnlib-explorer')].map(root => {
    const panels = [...root.querySelectorAll('.attnlib-panel')].map(panel => {
        const svg = panel.querySelector('svg');
        const box = panel.getBoundingClientRect();
        const view = svg.viewBox.baseVal;
        const picture = svg.getBoundingClientRect();
        const outside = [...svg.querySelectorAll('text')].filter(t => t.getClientRects().length).filter(t => {
            const b = t.getBoundingClientRect();
            return b.left < picture.left - 1 || b.right > picture.right + 1
                || b.top < picture.top - 1 || b.bottom > picture.bottom + 1;
        }).map(t => t.textContent);
        return {
            title: svg.querySelector('title').textContent,
            left: box.left, top: box.top, bottom: box.bottom,
            scrolls: panel.scrollWidth > panel.clientWidth + 1,
            frame: panel.clientWidth,
            needs: Math.ceil(view.width * floor) + 1,
            outside,
        };
    });
    const { px: text, which } = (SMALLEST_TEXT)(root);
    const box = root.getBoundingClientRect();
    const width = document.documentElement.clientWidth;
    return { kind: root.className, left: box.left, right: box.right, width, panels, text, which };
})""".replace("SMALLEST_TEXT", SMALLEST_TEXT)
# Each explorer's pictures: the viewBox of each panel, and every element drawn (its tag, its
# attributes sorted, its own text).
DRAWN_ELEMENTS = """() => [...document.querySelectorAll('.attnlib-explorer .attnlib-pictures')].map(p => ({
    boxes: [...p.querySelectorAll(':scope > .attnlib-panel > svg')].map(s => s.getAttribute('viewBox')),
    elements: [...p.querySelectorAll('svg > g *')].map(e => [e.tagName,
        ...[...e.attributes].map(a => `${a.name}=${a.value}`).sort(),
        e.children.length ? '' : e.textContent].join(' ')),
}))"""
# Each explorer's numbers, as its tables read them out (made from the numbers its pictures draw).
NUMBERS = "() => [...document.querySelectorAll('.attnlib-explorer .attnlib-numbers')].map(n => n.textContent)"
TABLES_SETTLE = 600  # ms: the tables follow a redraw (a narrow one, once laid out) 250 ms later
FOCUSED = """() => {
    const e = document.activeElement;
    const root = e?.closest('.attnlib-explorer');
    return { tag: e?.tagName.toLowerCase(), text: e?.textContent.trim().slice(0, 120) ?? '',
        control: e?.dataset?.control ?? null, isRoot: e?.classList.contains('attnlib-explorer') ?? false,
        inExplorer: root ? [...document.querySelectorAll('.attnlib-explorer')].indexOf(root) : -1,
        name: e?.getAttribute('aria-label') ?? '' };
}"""
FIRST_CONTROL = """root => {
    const first = root.querySelector('input, select, button, textarea, a[href]');
    return first === document.activeElement;
}"""


def assert_nothing_lies_on_top(page, path: str, screen: str) -> None:
    """No point of any explorer of ``page`` lies under another element, and each lies within the
    window's width (COVERED)."""
    explorers = page.evaluate(COVERED, 16)
    assert len(explorers) == explorers_in(path)
    for seen in explorers:
        where = f"{seen['kind']} on {path} at {screen}"
        assert seen["points"] > 0, f"{where}: no point of the explorer was in the window"
        covered = 100 * seen["covered"] / seen["points"]
        assert seen["covered"] == 0, f"{where}: {covered:.1f}% of its points lie under {seen['by']}"
        inside = seen["left"] >= -0.5 and seen["right"] <= seen["width"] + 0.5
        span = f"from x = {seen['left']:.0f} to {seen['right']:.0f}"
        assert inside, f"{where}: {span}, the window is {seen['width']} px wide"


@pytest.mark.parametrize("path", WITH_EXPLORERS)
def test_nothing_lies_on_top_of_an_explorer(browser, book_site, path):  # noqa: F811
    """Opened at the narrowest desktop width, the window then widened to each of the others, as a
    teacher drags it onto a projector (on a phone: the test after this one)."""
    context, page = open_lesson(browser, book_site, path, **DESKTOPS[f"{WIDTHS[0]}px"])
    try:
        for screen, options in DESKTOPS.items():
            page.set_viewport_size(options["viewport"])
            assert_nothing_lies_on_top(page, path, screen)
    finally:
        context.close()


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize("path", WITH_EXPLORERS)
def test_on_a_phone_each_explorer_takes_the_width_with_its_panels_stacked(browser, book_site, path, mode):  # noqa: F811
    context, page = open_lesson(browser, book_site, path, **PHONE, color_scheme=mode)
    try:
        explorers = page.evaluate(PHONE_LAYOUT, PANEL_FLOOR)
        assert len(explorers) == explorers_in(path)
        for seen in explorers:
            where = f"{seen['kind']} on {path}, phone, {mode}"
            assert seen["left"] <= 0.5 and seen["right"] >= seen["width"] - 0.5, (
                f"{where}: from x = {seen['left']:.0f} to {seen['right']:.0f} of {seen['width']} px"
            )
            smallest = f"{where}: {seen['which']!r} is {seen['text']:.1f} px"
            assert round(seen["text"], 2) >= PHONE_SMALLEST_TEXT, smallest
            panels = seen["panels"]
            for above, below in itertools.pairwise(panels):
                assert below["top"] >= above["bottom"] - 0.5 and abs(below["left"] - above["left"]) < 1, (
                    f"{where}: {below['title']!r} is beside {above['title']!r}, not below it"
                )
            for panel in panels:
                named = f"{where}: panel {panel['title']!r}"
                assert panel["outside"] == [], f"{named}: text drawn outside its picture: {panel['outside']}"
                sizes = f"{panel['frame']} px, and it needs {panel['needs']} px at its narrowest"
                assert not panel["scrolls"], f"{named} scrolls sideways in {sizes}"
        scroll = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
        assert scroll[0] <= scroll[1], f"on a phone the page is {scroll[0]} px wide"
        assert_nothing_lies_on_top(page, path, f"phone, {mode}")
    finally:
        context.close()


@pytest.mark.parametrize("path", WITH_EXPLORERS)
def test_on_a_phone_each_explorer_shows_every_number_of_the_desktop(browser, book_site, path):  # noqa: F811
    tables = []
    for screen in (SCREENS["1280px"], PHONE):
        context, page = open_lesson(browser, book_site, path, **screen)
        try:
            page.wait_for_timeout(TABLES_SETTLE)
            tables.append(page.evaluate(NUMBERS))
        finally:
            context.close()
    desktop, phone = tables
    assert len(desktop) == explorers_in(path) and all(desktop), f"{path}: an explorer has no numbers"
    for k, (wide, narrow) in enumerate(zip(desktop, phone, strict=True)):
        assert narrow == wide, f"explorer {k + 1} on {path}: its numbers on a phone are not the desktop's"


@pytest.mark.parametrize("path", WITH_EXPLORERS)
def test_after_moves_each_explorer_draws_what_a_fresh_drawing_would(browser, book_site, path):  # noqa: F811
    """A move patches the picture shown (controls.js draw(parts), svg.js groupPart): the picture it
    leaves must be what drawing that state anew makes. Each explorer's first slider is moved on a
    desktop, then the window is made a phone's (the explorer draws narrow, anew) and a desktop's
    again (it draws wide, anew): the elements drawn, their attributes and texts, must be the same."""
    context, page = open_lesson(browser, book_site, path, **SCREENS["1280px"])
    try:
        for k in range(explorers_in(path)):
            page.locator(".attnlib-explorer").nth(k).locator("input[type=range]").first.focus()
            for key in ("End", "ArrowLeft", "ArrowLeft", "Home", "ArrowRight", "ArrowRight"):
                page.keyboard.press(key)
        states = []
        for screen in ("1280px", "phone", "1280px"):
            page.set_viewport_size(SCREENS[screen]["viewport"])
            page.wait_for_timeout(TABLES_SETTLE)
            states.append(page.evaluate(DRAWN_ELEMENTS))
    finally:
        context.close()
    moved, narrow, fresh = states
    redrawn = [
        k
        for k, (wide, phone) in enumerate(zip(moved, narrow, strict=True))
        if wide["boxes"] != phone["boxes"]
    ]
    if not redrawn:
        pytest.skip(
            f"{path}: no explorer has a narrow drawing (it fits a phone as it is), so none draws anew"
        )
    for k in redrawn:
        where = f"explorer {k + 1} on {path}"
        assert moved[k]["elements"] == fresh[k]["elements"], (
            f"{where}: after moves it differs from a fresh drawing"
        )


@pytest.mark.parametrize("screen", ["1024px", "1280px"])
@pytest.mark.parametrize("path", [WITH_EXPLORERS[0], WITHOUT_EXPLORERS[0]])
def test_the_pages_contents_open_where_no_sidebar_shows_them(browser, book_site, path, screen):  # noqa: F811
    context = browser.new_context(**SCREENS[screen])
    try:
        page = context.new_page()
        page.goto(f"{book_site}/{path}", wait_until="load", timeout=LOAD_TIMEOUT)
        sidebar = page.locator("#pst-secondary-sidebar")
        if sidebar.is_visible():
            assert sidebar.get_by_role("link").count() > 1, f"{path} at {screen}: no section in the sidebar"
            return
        button = page.locator(".secondary-toggle").filter(visible=True)
        assert button.count() == 1, f"{path} at {screen}: no sidebar and {button.count()} Contents buttons"
        button.click()
        dialog = page.locator("#pst-secondary-sidebar-modal")
        dialog.wait_for(state="visible", timeout=MOVE_TIMEOUT)
        assert dialog.evaluate("d => d.open"), f"{path} at {screen}: the Contents button opened nothing"
        assert dialog.get_by_role("link").count() > 1, f"{path} at {screen}: the contents list no section"
    finally:
        context.close()


@pytest.mark.parametrize("path", WITH_EXPLORERS)
def test_a_skip_link_leads_to_each_explorer(browser, book_site, path):  # noqa: F811
    context, page = open_lesson(browser, book_site, path, **SCREENS["1280px"])
    try:
        n = explorers_in(path)
        names = [page.locator(".attnlib-explorer").nth(k).get_attribute("aria-label") for k in range(n)]
        for name in names:
            assert name and name.startswith("Explorer: "), f"an explorer's region is named {name!r}"
            assert page.get_by_role("region", name=name).count() == 1, f"no single region named {name!r}"
        page.evaluate("() => { document.activeElement?.blur(); window.scrollTo(0, 0); }")
        for _ in range(SKIP_TABS):
            page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED)
        link = f"Skip to the explorer: {names[0].removeprefix('Explorer: ')}"
        assert focused["tag"] == "a" and focused["text"] == link, (
            f"{SKIP_TABS} Tab presses from the top reach {focused}, not the skip link to the first explorer"
        )
        page.keyboard.press("Enter")
        focused = page.evaluate(FOCUSED)
        assert focused["isRoot"] and focused["inExplorer"] == 0, f"Enter on the skip link focused {focused}"
        page.keyboard.press("Tab")
        first = page.locator(".attnlib-explorer").first
        assert first.evaluate(FIRST_CONTROL), f"the Tab after the skip link reached {page.evaluate(FOCUSED)}"
    finally:
        context.close()
