"""The explorers in a real browser: JupyterLab, Notebook 7 and the book, through Chromium.

For each explorer that a lesson's tests declare (``BROWSER`` in ``tests/lessons/lNN_slug/declared.py``:
today lesson 01's similarity, 04's scaling, 05's softmax and 07's playground) and each place it
runs in, the test moves sliders with the keyboard and with the mouse (and toggles a checkbox where
the explorer has one). After every move it reads the explorer's controls and the numbers drawn in
its SVG from the DOM and checks, in Python, that a number changed and that every number equals
attnlib's value for the new control values; the text shown agrees with that value to its last
printed digit. No page may log a console error or throw, and no request may leave 127.0.0.1.

- JupyterLab 4 and Notebook 7: the test starts each itself (``jupyter lab``, ``jupyter notebook``),
  on a free port on 127.0.0.1, in a temporary copy of ``notebooks/``, with its own Jupyter config,
  data and runtime directories and a settings overrides file that turns autosave and the news popup
  off (so it never writes into the lessons). It opens a lesson, runs all cells from the Run menu,
  then moves the explorer.
- The book's lesson pages, with no kernel anywhere: ``tests/site/test_book.py`` drives the explorers
  there with the same moves and checks (``Explorer``, ``Page``).

The explorers follow one DOM contract (attention_lessons.kit.widgets): a root
``div.attnlib-explorer.attnlib-KIND``; controls ``<input data-control=NAME>``; numbers ``<text
data-quantity=Q data-row=i data-col=j data-value=String(x)>``.

It needs Debian's Chromium (``apt-get install chromium``) and Playwright for Python (pinned in
requirements-test.txt); Playwright's own browser download is not needed. Screenshots of every step
go to a temporary folder named in the output. Every wait is for a condition in the page or the
server, with a generous time limit.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, declared

NOTEBOOKS = ROOT / "notebooks"
SETTINGS_OVERRIDES = {
    "@jupyterlab/docmanager-extension:plugin": {"autosave": False},
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
}
START_TIMEOUT = 120  # s: the server answering
RUN_TIMEOUT = 240_000  # ms: the page and the kernel starting, every cell of the lesson running
MOVE_TIMEOUT = 30_000  # ms: a move redrawn (in Jupyter: also its round trip through the kernel)

RUN_ALL = '.lm-Menu-item[data-command="runmenu:run-all"]:not(.lm-mod-disabled)'  # Run ▸ Run All Cells
ERROR_OUTPUTS = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
# Uncaught errors that Notebook 7.6 itself raises while it starts, on every notebook page (with or
# without widgets); any other error in the page, and any error after Run All, fails the test.
KNOWN_STARTUP_ERRORS = (
    "Command 'filebrowser:open-path' not registered.",
    "Cannot read properties of undefined (reading 'schema')",
)

# The notebook is shown (no spinner) and its kernel is named, connected and idle.
READY = """() => {
    const panel = [...document.querySelectorAll('.jp-NotebookPanel')].find(p => p.offsetParent !== null);
    if (!panel || panel.querySelectorAll('.jp-Cell').length === 0) return false;
    if ([...panel.querySelectorAll('.jp-Spinner')].some(s => s.offsetParent !== null)) return false;
    const kernel = panel.querySelector('.jp-Toolbar-kernelName, .jp-KernelName');
    const indicator = panel.querySelector('.jp-Notebook-ExecutionIndicator');
    return kernel !== null && kernel.textContent.includes('Python 3')
        && indicator !== null && indicator.getAttribute('data-status') === 'idle';
}"""
# Run All took effect: a cell is queued or running, or an explorer is already there.
STARTED = """() => [...document.querySelectorAll('.jp-InputArea-prompt')]
        .some(p => p.textContent.includes('*'))
    || document.querySelector('.attnlib-explorer') !== null"""
# Every cell has run and the kernel is idle again.
FINISHED = """() => {
    const prompts = [...document.querySelectorAll('.jp-InputArea-prompt')];
    const busy = prompts.some(p => p.textContent.includes('*'));
    const indicator = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
    return !busy && indicator !== null && indicator.getAttribute('data-status') === 'idle';
}"""
# The explorer's controls and the numbers drawn in its SVG, as the DOM holds them now.
READ_EXPLORER = """(root) => ({
    controls: Object.fromEntries([...root.querySelectorAll('input[data-control], select[data-control]')]
        .map(e => [e.dataset.control, e.type === 'checkbox' ? e.checked : e.value])),
    numbers: [...root.querySelectorAll('svg text[data-quantity]')].map(e => ({
        quantity: e.dataset.quantity, row: e.dataset.row ?? null, col: e.dataset.col ?? null,
        value: e.dataset.value ?? null, text: e.textContent,
    })),
})"""


@dataclass(frozen=True)
class Explorer:
    """One explorer: the lesson that shows it, the moves the test makes, attnlib's values."""

    kind: str
    lesson: str
    moves: tuple[tuple[str, str], ...]  # ("key" | "drag" | "toggle", control name)
    quantities: tuple[str, ...]
    values: Callable[[dict[str, object]], dict[str, object]]

    @property
    def selector(self) -> str:
        return f".attnlib-explorer.attnlib-{self.kind}"


#: The explorers that their lessons' tests declare for a browser to drive (``BROWSER`` in
#: ``tests/lessons/lNN_slug/declared.py``), by kind.
EXPLORERS = {
    declaration["kind"]: Explorer(lesson=folder.removeprefix("l"), **declaration)
    for folder, declaration in declared("BROWSER").items()
}


# --- reading and checking what the page shows ---------------------------------------------------


def _number(value: str | None) -> float | None:
    """A ``data-value`` (JavaScript's ``String(x)``) as a float; ``None`` for no number."""
    if value is None or value in ("", "null", "undefined"):
        return None
    return float(value)  # also "NaN", "Infinity", "-Infinity"


def _pick(expected: object, row: str | None, col: str | None) -> float | None:
    """The element of attnlib's value that a ``<text data-row data-col>`` shows."""
    if expected is None:
        return None
    array = np.asarray(expected, dtype=np.float64)
    if array.ndim == 0:
        return float(array)
    indices = [int(i) for i in (row, col) if i is not None]
    if array.ndim == 1 and len(indices) == 2:
        indices = indices[-1:] if array.shape[0] > 1 else indices[:1]  # a row vector drawn as a row
    assert len(indices) == array.ndim, f"{array.ndim}-D value shown with data-row={row} data-col={col}"
    return float(array[tuple(indices)])


def _close(shown: float | None, expected: float | None) -> bool:
    if shown is None or expected is None:
        return shown is None and expected is None
    if math.isnan(expected) or math.isinf(expected):
        return shown == expected or (math.isnan(shown) and math.isnan(expected))
    return math.isclose(shown, expected, rel_tol=1e-9, abs_tol=1e-12)


PRINTED_NUMBER = re.compile(r"^[+\-−]?\d+(?:\.(\d+))?$")


def check_numbers(explorer: Explorer, state: dict) -> None:
    """Every number drawn equals attnlib's value for the controls; its text rounds that value."""
    expected = explorer.values(state["controls"])
    shown = {number["quantity"] for number in state["numbers"]}
    missing = set(explorer.quantities) - shown
    assert not missing, f"the {explorer.kind} explorer draws no {sorted(missing)} (it draws {sorted(shown)})"
    for number in state["numbers"]:
        if number["quantity"] not in expected:
            continue
        value = _number(number["value"])
        want = _pick(expected[number["quantity"]], number["row"], number["col"])
        assert _close(value, want), (
            f"{explorer.kind}: {number['quantity']}[{number['row']}, {number['col']}] shows "
            f"{number['value']}, attnlib gives {want!r} for {state['controls']}"
        )
        text = number["text"].strip().replace("°", "").replace("%", "")
        match = PRINTED_NUMBER.match(text)
        if match and value is not None and math.isfinite(value):
            printed = float(text.replace("−", "-"))
            decimals = len(match[1] or "")
            assert abs(printed - value) <= 0.5 * 10.0**-decimals + 1e-12, (
                f"{explorer.kind}: {number['quantity']} prints {number['text']!r} for {value}"
            )


def _values_of(state: dict) -> list[tuple]:
    return [(n["quantity"], n["row"], n["col"], n["value"]) for n in state["numbers"]]


class Page:
    """One explorer in one browser page, and the checks made on it."""

    def __init__(self, browser, explorer: Explorer, screenshots: Path, prefix: str) -> None:
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.context.set_default_timeout(MOVE_TIMEOUT)
        self.page = self.context.new_page()
        self.explorer, self.screenshots, self.prefix = explorer, screenshots, prefix
        self.errors: list[str] = []  # uncaught exceptions: their messages
        self.stacks: list[str] = []  # and where they were thrown
        self.console_errors: list[str] = []
        self.outside: list[str] = []  # requests to anywhere but 127.0.0.1
        self.page.on("pageerror", self._page_error)
        self.page.on("console", self._console)
        self.context.on("request", lambda request: self._check_url(request.url))
        self.page.on("websocket", lambda socket_: self._check_url(socket_.url))
        self.started = 0  # how many page errors came before the explorer was there
        self.shots = 0

    def _page_error(self, error) -> None:
        self.errors.append(error.message)
        self.stacks.append(error.stack or error.message)

    def _console(self, message) -> None:
        if message.type == "error":
            self.console_errors.append(f"{message.text} ({message.location})")

    def _check_url(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme in ("blob", "data"):
            return
        if parts.hostname != "127.0.0.1":
            self.outside.append(url)

    def close(self) -> None:
        self.context.close()

    def shot(self, name: str) -> None:
        self.shots += 1
        self.page.screenshot(path=str(self.screenshots / f"{self.prefix}-{self.shots:02d}-{name}.png"))

    @property
    def root(self):
        return self.page.locator(self.explorer.selector).first

    def read(self) -> dict:
        return self.root.evaluate(READ_EXPLORER)

    def wait_for_explorer(self, timeout: float) -> None:
        """Wait until the explorer has drawn its numbers."""
        self.page.locator(f"{self.explorer.selector} svg text[data-quantity]").first.wait_for(
            state="attached", timeout=timeout
        )
        self.root.scroll_into_view_if_needed()
        self.settle()

    def settle(self) -> dict:
        """Wait until the numbers stop changing (the last redraw of a move, or its echo, came)."""
        previous = self.read()
        for _ in range(40):
            self.page.wait_for_timeout(250)  # the interval between two looks, not a guess of a delay
            current = self.read()
            if current == previous:
                return current
            previous = current
        pytest.fail("the numbers kept changing for 10 s after the last move")

    def control(self, name: str):
        locator = self.root.locator(f'[data-control="{name}"]')
        assert locator.count() == 1, f"{self.explorer.kind}: {locator.count()} controls named {name!r}"
        locator.scroll_into_view_if_needed()
        return locator

    def press(self, name: str) -> None:
        """One arrow key on a focused slider: right, or left when it is at its maximum."""
        control = self.control(name)
        at_max = control.evaluate("e => Number(e.value) >= Number(e.max)")
        control.focus()
        self.page.keyboard.press("ArrowLeft" if at_max else "ArrowRight")

    def toggle(self, name: str) -> None:
        control = self.control(name)
        control.focus()
        self.page.keyboard.press("Space")

    def drag(self, name: str) -> None:
        """Drag a slider's thumb a quarter of its length (toward the side with more room)."""
        control = self.control(name)
        fraction = control.evaluate(
            "e => (Number(e.value) - Number(e.min)) / (Number(e.max) - Number(e.min))"
        )
        box = control.bounding_box()
        assert box is not None, f"the {name} slider is not on the screen"
        thumb = min(16.0, box["width"] / 4)  # Chromium's thumb; the track is the rest

        def x_at(f: float) -> float:
            return box["x"] + thumb / 2 + f * (box["width"] - thumb)

        target = fraction + (0.25 if fraction < 0.5 else -0.25)
        y = box["y"] + box["height"] / 2
        self.page.mouse.move(x_at(fraction), y)
        self.page.mouse.down()
        self.page.mouse.move(x_at(target), y, steps=10)
        self.page.mouse.up()

    def move(self, how: str, name: str) -> dict:
        """Make one move; check that the control and a number changed and every number is right."""
        before = self.read()
        {"key": self.press, "drag": self.drag, "toggle": self.toggle}[how](name)
        self.page.wait_for_function(
            "([root, old]) => JSON.stringify([...document.querySelector(root)"
            ".querySelectorAll('svg text[data-quantity]')].map(e => e.dataset.value)) !== old",
            arg=[self.explorer.selector, json.dumps([n["value"] for n in before["numbers"]])],
            timeout=MOVE_TIMEOUT,
        )
        after = self.settle()
        self.shot(f"{how}-{name}")
        assert after["controls"][name] != before["controls"][name], f"{how} did not change {name}"
        assert _values_of(after) != _values_of(before), f"no number changed after {how} {name}"
        check_numbers(self.explorer, after)
        self.check_clean()
        return after

    def check_clean(self) -> None:
        early = [e for e in self.errors[: self.started] if e not in KNOWN_STARTUP_ERRORS]
        late = self.stacks[self.started :]
        assert not early and not late, "errors in the page:\n" + "\n".join(early + late)
        assert not self.console_errors, f"console errors: {self.console_errors}"
        assert not self.outside, f"requests that left 127.0.0.1: {self.outside}"

    def exercise(self) -> None:
        """Check the first drawing, then make every move of the explorer."""
        state = self.read()
        self.shot("first")
        check_numbers(self.explorer, state)
        self.check_clean()
        for how, name in self.explorer.moves:
            self.move(how, name)


# --- servers and the browser ---------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """A running JupyterLab: its URLs and its REST API."""

    def __init__(self, port: int, token: str, process: subprocess.Popen, log: Path) -> None:
        self.base, self.token, self.process, self.log = f"http://127.0.0.1:{port}", token, process, log

    def url(self, path: str) -> str:
        return f"{self.base}/{path}?reset&token={self.token}"

    def api(self, path: str, method: str = "GET") -> object:
        request = urllib.request.Request(f"{self.base}/api/{path}?token={self.token}", method=method)
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def log_tail(self) -> str:
        return self.log.read_text()[-3000:]

    def wait_until_up(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"JupyterLab exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                self.api("status")
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.5)
        pytest.fail(f"JupyterLab did not answer within {START_TIMEOUT} s:\n{self.log_tail()}")

    def wait_for_idle_kernel(self, notebook: str) -> None:
        """Wait until the notebook's session has a kernel that is idle (started and answering)."""
        deadline = time.monotonic() + RUN_TIMEOUT / 1000
        states: list[str] = []
        while time.monotonic() < deadline:
            sessions = self.api("sessions")
            assert isinstance(sessions, list)
            states = [s["kernel"]["execution_state"] for s in sessions if s["path"].endswith(notebook)]
            if "idle" in states:
                return
            time.sleep(0.5)
        pytest.fail(f"the kernel of {notebook} is not idle ({states}):\n{self.log_tail()}")

    def shut_down_sessions(self) -> None:
        """End every session and its kernel (one lesson's kernel at a time on a small machine)."""
        sessions = self.api("sessions")
        assert isinstance(sessions, list)
        for session in sessions:
            self.api(f"sessions/{session['id']}", method="DELETE")


def _start_jupyter(root: Path, app: str) -> tuple[Server, subprocess.Popen]:
    """``jupyter <app>`` on a free port, serving a temporary copy of the lessons under ``root``."""
    lessons = root / "notebooks"
    shutil.copytree(NOTEBOOKS, lessons, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    names = ("config", "data", "runtime", "app-settings", "user-settings", "workspaces", "ipython")
    dirs = {name: root / name for name in names}
    for path in dirs.values():
        path.mkdir()
    (dirs["app-settings"] / "overrides.json").write_text(json.dumps(SETTINGS_OVERRIDES, indent=2))
    port, token = _free_port(), secrets.token_hex(16)
    config = {
        "ServerApp": {
            "ip": "127.0.0.1",
            "port": port,
            "port_retries": 0,
            "open_browser": False,
            "root_dir": str(lessons),
            "allow_root": hasattr(os, "geteuid") and os.geteuid() == 0,  # CI containers run as root
        },
        "IdentityProvider": {"token": token},
        "LabApp": {
            "app_settings_dir": str(dirs["app-settings"]),  # holds overrides.json
            "check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
            "extension_manager": "readonly",  # no requests to PyPI
        },
        "JupyterNotebookApp": {"app_settings_dir": str(dirs["app-settings"])},
        "LabServerApp": {
            "user_settings_dir": str(dirs["user-settings"]),
            "workspaces_dir": str(dirs["workspaces"]),
        },
    }
    (dirs["config"] / "jupyter_server_config.json").write_text(json.dumps(config, indent=2))
    env = os.environ | {
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_DATA_DIR": str(dirs["data"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        # the venv's share/jupyter holds the python3 kernel and the widget and anywidget labextensions
        "JUPYTER_PATH": os.path.join(sys.prefix, "share", "jupyter"),
        "JUPYTERLAB_SETTINGS_DIR": str(dirs["user-settings"]),
        "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]),
        "IPYTHONDIR": str(dirs["ipython"]),
    }
    log = root / f"jupyter-{app}.log"
    with open(log, "w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyter", app],
            cwd=lessons,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    return Server(port, token, process, log), process


@contextlib.contextmanager
def _jupyter(root: Path, app: str) -> Iterator[Server]:
    server, process = _start_jupyter(root, app)
    try:
        server.wait_until_up()
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


# One server for each front end: a jupyter_server that served JupyterLab's pages answers 403 to
# Notebook 7's requests for the font files the two bundle under the same name (its static file
# cache is keyed by file name alone), which a learner using one front end never meets.
@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """JupyterLab on a free port, serving a temporary copy of the lessons."""
    with _jupyter(tmp_path_factory.mktemp("jupyterlab"), "lab") as server:
        yield server


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Notebook 7 on a free port, serving a temporary copy of the lessons."""
    with _jupyter(tmp_path_factory.mktemp("notebook7"), "notebook") as server:
        yield server


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    folder = tmp_path_factory.mktemp("browser-screenshots")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():  # shown even when pytest captures output
            reporter.write_line(f"\nbrowser test screenshots: {folder}")
    return folder


@pytest.fixture
def page_for(browser, screenshots):
    opened: list[Page] = []

    def open_page(explorer: Explorer, prefix: str) -> Page:
        opened.append(Page(browser, explorer, screenshots, f"{prefix}-{explorer.kind}"))
        return opened[-1]

    yield open_page
    for page in opened:
        page.close()


def run_all_in_jupyter(page: Page, server: Server, path: str) -> None:
    """Open a lesson in JupyterLab or Notebook 7, run every cell, wait for the explorer."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    notebook = f"{page.explorer.lesson}.ipynb"
    page.page.goto(server.url(path), wait_until="domcontentloaded")
    page.page.wait_for_function(READY, timeout=RUN_TIMEOUT)
    server.wait_for_idle_kernel(notebook)
    page.page.wait_for_function(READY, timeout=RUN_TIMEOUT)
    page.started = len(page.errors)
    for _attempt in range(3):  # Run ▸ Run All Cells, until the cells are seen running
        page.page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        page.page.locator(RUN_ALL).click()
        try:
            page.page.wait_for_function(STARTED, polling="raf", timeout=30_000)
            break
        except PlaywrightTimeout:
            page.page.keyboard.press("Escape")
    else:
        page.shot("run-all-did-not-start")
        pytest.fail("Run ▸ Run All Cells did not start the cells")
    # JupyterLab renders off-screen cells lazily: wait until the explorer exists, not for visible
    page.page.locator(page.explorer.selector).first.wait_for(state="attached", timeout=RUN_TIMEOUT)
    page.page.wait_for_function(FINISHED, timeout=RUN_TIMEOUT)
    page.wait_for_explorer(RUN_TIMEOUT)
    errors = page.page.locator(ERROR_OUTPUTS)
    assert errors.count() == 0, f"a cell shows an error: {errors.first.text_content()[:800]}"


KINDS = list(EXPLORERS)


#: The two Jupyter front ends: the fixture of each one's server, and the path it opens a notebook at.
FRONT_ENDS = {"lab": "lab/tree", "notebook7": "notebooks"}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_explorer_in_jupyter(request, page_for, front_end, kind):
    server = request.getfixturevalue(front_end)
    explorer = EXPLORERS[kind]
    page = page_for(explorer, front_end)
    try:
        run_all_in_jupyter(page, server, f"{FRONT_ENDS[front_end]}/{explorer.lesson}.ipynb")
        page.exercise()
    finally:
        server.shut_down_sessions()


# --- what the committed lessons hold ------------------------------------------------------------


@pytest.mark.parametrize("notebook", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda path: path.stem)
def test_committed_lessons_keep_no_widget_state(notebook):
    """GitHub refuses to render a notebook whose widget metadata has no state: keep none at all."""
    metadata = json.loads(notebook.read_text(encoding="utf-8"))["metadata"]
    assert "widgets" not in metadata
