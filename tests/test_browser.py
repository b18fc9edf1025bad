"""The playground in a real browser: JupyterLab and Notebook 7, driven through Chromium.

The test starts JupyterLab itself, on a free port on 127.0.0.1, in a temporary copy of
``notebooks/``, with its own Jupyter config, data and runtime directories and a settings
overrides file that turns autosave and the news popup off (so it never writes into the lessons).
It opens the playground lesson, runs all cells from the Run menu, and moves an embedding slider
with the keyboard and with the mouse, and the d_k slider with the mouse. After every move the
readout and the picture must change, the picture must decode at its full size, and no cell may
show an error. Then the same with mouse drags in Notebook 7 (keyboard moves do not reach the
slider handle there).

It needs Debian's Chromium (``apt-get install chromium``) and Playwright for Python
(``pip install playwright==1.65.2``, pinned in requirements-test.txt); Playwright's own browser
download is not needed. Screenshots of every step go to a temporary folder named in the output.
Every wait is for a condition in the page or the server, with a generous time limit.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LESSON = "07_whole_picture.ipynb"  # the lesson with the playground
SETTINGS_OVERRIDES = {
    "@jupyterlab/docmanager-extension:plugin": {"autosave": False},
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
}
START_TIMEOUT = 120  # s: the server answering
RUN_TIMEOUT = 240_000  # ms: the page and the kernel starting, every cell of the lesson running
MOVE_TIMEOUT = 30_000  # ms: a slider move reaching the kernel and the new picture coming back

PLAYGROUND = ".attnlib-playground"
IMAGE = f"{PLAYGROUND} img.attnlib-image"
READOUT = f"{PLAYGROUND} .attnlib-readout"
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
# Run All took effect: a cell is queued or running, or the playground is already there.
STARTED = """() => [...document.querySelectorAll('.jp-InputArea-prompt')]
        .some(p => p.textContent.includes('*'))
    || document.querySelector('.attnlib-playground .noUi-handle') !== null"""
# Every cell has run and the kernel is idle again.
FINISHED = """() => {
    const prompts = [...document.querySelectorAll('.jp-InputArea-prompt')];
    const busy = prompts.some(p => p.textContent.includes('*'));
    const indicator = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
    return !busy && indicator !== null && indicator.getAttribute('data-status') === 'idle';
}"""


def _playwright():
    if not Path(CHROMIUM).exists():
        pytest.skip(
            f"Chromium is not installed at {CHROMIUM}: install Debian's package "
            "(sudo apt-get install chromium) to run the browser test"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip(
            "Playwright for Python is not installed: .venv/bin/pip install -r requirements-test.txt "
            "(or pip install playwright==1.65.2); no `playwright install` is needed, the test uses "
            f"{CHROMIUM}"
        )
    return sync_playwright


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

    def api(self, path: str) -> object:
        with urllib.request.urlopen(f"{self.base}/api/{path}?token={self.token}", timeout=10) as response:
            return json.load(response)

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


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """JupyterLab on a free port, serving a temporary copy of the lessons."""
    root = tmp_path_factory.mktemp("jupyterlab")
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
        # the venv's share/jupyter holds the python3 kernel and the jupyter-widgets labextension
        "JUPYTER_PATH": os.path.join(sys.prefix, "share", "jupyter"),
        "JUPYTERLAB_SETTINGS_DIR": str(dirs["user-settings"]),
        "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]),
        "IPYTHONDIR": str(dirs["ipython"]),
    }
    log = root / "jupyterlab.log"
    with open(log, "w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "lab"],
            cwd=lessons,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    server = Server(port, token, process, log)
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


@pytest.fixture(scope="module")
def browser():
    sync_playwright = _playwright()
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    folder = tmp_path_factory.mktemp("browser-screenshots")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():  # shown even when pytest captures output
            reporter.write_line(f"\nbrowser test screenshots: {folder}")
    return folder


@pytest.fixture(scope="module")
def full_size() -> tuple[int, int]:
    """The pixel size of the playground's picture, as the library renders it."""
    from PIL import Image

    from attnlib import widgets

    with Image.open(io.BytesIO(widgets.playground(asynchronous=False).image.value)) as image:
        return image.size


class Lesson:
    """The playground lesson open in one browser page, and the checks the tests make on it."""

    def __init__(
        self, browser, path: str, screenshots: Path, prefix: str, full_size: tuple[int, int]
    ) -> None:
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.context.set_default_timeout(MOVE_TIMEOUT)
        self.page = self.context.new_page()
        self.path, self.screenshots, self.prefix, self.full_size = path, screenshots, prefix, full_size
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.started = 0  # how many page errors came before Run All
        self.shots = 0

    def close(self) -> None:
        self.context.close()

    def shot(self, name: str) -> None:
        self.shots += 1
        self.page.screenshot(path=str(self.screenshots / f"{self.prefix}-{self.shots:02d}-{name}.png"))

    def open_and_run_all(self, server: Server) -> None:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        page = self.page
        page.goto(server.url(self.path), wait_until="domcontentloaded")
        page.wait_for_function(READY, timeout=RUN_TIMEOUT)
        server.wait_for_idle_kernel(LESSON)
        page.wait_for_function(READY, timeout=RUN_TIMEOUT)
        self.shot("opened")
        self.started = len(self.errors)
        for _attempt in range(3):  # Run ▸ Run All Cells, until the cells are seen running
            page.locator(".lm-MenuBar-item", has_text="Run").first.click()
            page.locator(RUN_ALL).click()
            try:
                page.wait_for_function(STARTED, polling="raf", timeout=30_000)
                break
            except PlaywrightTimeout:
                page.keyboard.press("Escape")
        else:
            self.shot("run-all-did-not-start")
            pytest.fail("Run ▸ Run All Cells did not start the cells")
        # JupyterLab renders off-screen cells lazily: wait until the handles exist, not for visible
        page.locator(f"{PLAYGROUND} .noUi-handle").first.wait_for(state="attached", timeout=RUN_TIMEOUT)
        page.wait_for_function(FINISHED, timeout=RUN_TIMEOUT)
        page.locator(IMAGE).scroll_into_view_if_needed()
        self.wait_for_picture("")
        self.settle()
        self.shot("ran-all")
        self.check_no_errors()

    def state(self) -> dict[str, str]:
        return self.page.evaluate(
            """([image, readout]) => ({
                src: document.querySelector(image).src,
                readout: document.querySelector(readout).textContent,
            })""",
            [IMAGE, READOUT],
        )

    def wait_for_picture(self, old_src: str) -> None:
        """Wait for a new picture that has loaded; check that it decodes at its full size."""
        self.page.wait_for_function(
            """([image, old]) => {
                const el = document.querySelector(image);
                return el !== null && el.src !== '' && el.src !== old && el.complete && el.naturalWidth > 0;
            }""",
            arg=[IMAGE, old_src],
            timeout=MOVE_TIMEOUT,
        )
        # A render that lands mid-decode swaps the src and aborts decode(): decode the new picture
        # then. Only a picture that stayed in place and still fails to decode is an error.
        size = self.page.evaluate(
            """async (image) => {
                for (let attempt = 0; attempt < 20; attempt++) {
                    const el = document.querySelector(image);
                    const src = el.src;
                    try {
                        await el.decode();
                        return [el.naturalWidth, el.naturalHeight];
                    } catch (error) {
                        if (el.src === src) throw error;
                    }
                }
                throw new Error('the picture was replaced 20 times while being decoded');
            }""",
            IMAGE,
        )
        assert tuple(size) == self.full_size, f"the picture decodes at {size}, not {self.full_size}"

    def settle(self) -> None:
        """Wait until the picture and the readout stop changing (the last render of a drag came)."""
        previous = self.state()
        for _ in range(40):
            self.page.wait_for_timeout(300)  # the interval between two looks, not a guess of a delay
            current = self.state()
            if current == previous:
                return
            previous = current
        pytest.fail("the picture kept changing for 12 s after the last move")

    def check_moved(self, before: dict[str, str], name: str) -> dict[str, str]:
        """After a move: the readout and the picture changed, the picture decodes, no errors."""
        self.page.wait_for_function(
            "([readout, old]) => document.querySelector(readout).textContent !== old",
            arg=[READOUT, before["readout"]],
            timeout=MOVE_TIMEOUT,
        )
        self.wait_for_picture(before["src"])
        self.settle()
        after = self.state()
        assert after["readout"] != before["readout"] and after["src"] != before["src"]
        self.wait_for_picture("")  # the settled picture decodes at its full size too
        self.shot(name)
        self.check_no_errors()
        return after

    def check_no_errors(self) -> None:
        errors = self.page.locator(ERROR_OUTPUTS)
        assert errors.count() == 0, f"a cell shows an error: {errors.first.text_content()[:800]}"
        message = self.page.locator(f"{PLAYGROUND} .attnlib-message").text_content() or ""
        assert message.strip() == "", message
        early = [e for e in self.errors[: self.started] if e not in KNOWN_STARTUP_ERRORS]
        assert not early and not self.errors[self.started :], f"errors in the page: {self.errors}"

    def handle(self, slider: str):
        handle = self.page.locator(f"{PLAYGROUND} .{slider} .noUi-handle")
        handle.scroll_into_view_if_needed()
        return handle

    def slider_readout(self, slider: str) -> str:
        return (self.page.locator(f"{PLAYGROUND} .{slider} .widget-readout").text_content() or "").strip()

    def drag(self, slider: str, dx: float) -> None:
        box = self.handle(slider).bounding_box()
        assert box is not None, f"the {slider} handle is not on the screen"
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        self.page.mouse.move(x, y)
        self.page.mouse.down()
        self.page.mouse.move(x + dx, y, steps=12)
        self.page.mouse.up()


@pytest.fixture
def lesson_in(browser, screenshots, full_size):
    opened: list[Lesson] = []

    def open_lesson(path: str, prefix: str) -> Lesson:
        opened.append(Lesson(browser, path, screenshots, prefix, full_size))
        return opened[-1]

    yield open_lesson
    for lesson in opened:
        lesson.close()


def test_playground_in_jupyterlab(lab, lesson_in):
    lesson = lesson_in(f"lab/tree/{LESSON}", "lab")
    lesson.open_and_run_all(lab)
    state = lesson.state()
    assert "Token-1" in state["readout"] and "(+0.90, +0.10)" in state["readout"]

    # keyboard: focus Token-1's x handle, one step to the right (0.90 → 0.95)
    lesson.handle("attnlib-x-0").focus()
    lesson.page.keyboard.press("ArrowRight")
    state = lesson.check_moved(state, "keyboard-token1-x")
    assert "(+0.95, +0.10)" in state["readout"]
    assert lesson.slider_readout("attnlib-x-0") == "0.95"

    # mouse: drag Token-2's y handle to the left
    before = lesson.slider_readout("attnlib-y-1")
    lesson.drag("attnlib-y-1", -60)
    state = lesson.check_moved(state, "drag-token2-y")
    assert lesson.slider_readout("attnlib-y-1") != before

    # mouse: drag the d_k slider to the right; the scale in the readout follows
    lesson.drag("attnlib-dk", 80)
    state = lesson.check_moved(state, "drag-d_k")
    d_k = int(lesson.slider_readout("attnlib-dk"))
    assert d_k > 2 and f"1/√{d_k} = {1 / d_k**0.5:.4f}" in state["readout"]


def test_playground_in_notebook_7(lab, lesson_in):
    lesson = lesson_in(f"notebooks/{LESSON}", "notebook7")
    lesson.open_and_run_all(lab)
    state = lesson.state()
    before = lesson.slider_readout("attnlib-x-2")
    lesson.drag("attnlib-x-2", 50)
    state = lesson.check_moved(state, "drag-token3-x")
    assert lesson.slider_readout("attnlib-x-2") != before
    lesson.drag("attnlib-dk", 60)
    state = lesson.check_moved(state, "drag-d_k")
    d_k = int(lesson.slider_readout("attnlib-dk"))
    assert d_k > 2 and f"1/√{d_k} = {1 / d_k**0.5:.4f}" in state["readout"]
