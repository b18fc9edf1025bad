"""How fast, how light: the explorers old (PNG from the kernel) and new (SVG in the browser), side by side.

    PYTHONPATH=. .venv/bin/python benchmarks/explorers.py [--presses 40] [--old 07f24e1]
        [--reuse RESULTS.json: take the in-process figures from an earlier run, redo the browser]

One run measures both versions on this machine, one after the other:

- **old**: the explorers of commit ``--old`` (ipywidgets sliders, the picture a PNG rendered in the
  kernel). The script checks that commit out into a temporary ``git worktree``.
- **new**: the explorers of this checkout (anywidget, an ES module drawing SVG), if this checkout
  has them (``attnlib/widgets/`` is a package); otherwise its column is empty ("—").

For each version and each explorer (playground, scaling, softmax, similarity):

1. **In the browser.** A JupyterLab of its own (127.0.0.1, a free port, temporary config, data
   and runtime folders, ``PYTHONPATH`` = that version's checkout, checked in the kernel) opens a
   temporary notebook that makes the explorer; Chromium (``/usr/bin/chromium``, headless, through
   Playwright) focuses one slider and presses an arrow key ``--presses`` times (after
   ``--warmup`` untimed presses), one press at a time: each press waits for the picture's update
   and then for the kernel's websocket to stay quiet for ``--quiet`` seconds. Reversing at the
   slider's ends. Measured:

   - *keydown → picture update*: inside the page, ``performance.now()`` in a ``keydown`` listener
     (window, capture phase) to the first ``MutationObserver`` record of the picture: the
     ``<img>``'s ``src`` (old) or any node, attribute or text inside the ``<svg>`` (new). Median and
     95th percentile. Also the time to the next animation frame after that mutation.
   - *bytes kernel → browser per move*: the sizes of every websocket frame the page receives on the
     kernel's channel (Playwright's ``framereceived``; headers, status messages and echoes
     included), from the press to the end of the quiet period, per press.
   - *kernel CPU per move (browser run)*: the CPU time of the kernel process (all its threads,
     psutil, clock ticks) over all timed presses, minus what the kernel uses when
     idle (measured for ``--idle`` seconds before the first press) over the same wall time,
     divided by the number of presses. Everything the kernel does for a move: the message
     handling, attnlib, the trait sync and, for the old explorers, the PNG render.
   - *baseline*: the same presses on a plain ``ipywidgets.IntSlider`` that nothing observes, in
     the same JupyterLab (its "picture" is its own readout): the kernel's CPU and the websocket
     bytes that any widget move costs there (ipykernel's message handling, the busy/idle status
     messages, the echo of the new value). The table also gives each explorer's kernel CPU per
     move minus this baseline's.

2. **In one Python process, no browser** (a subprocess with that version's ``PYTHONPATH``):
   every widget gets a fake comm that serialises what it would send (``jupyter_client``'s
   ``json_packer`` of the message content, plus binary buffers; no message headers).

   - *kernel CPU per change*: the update message a slider move sends from the browser is handed
     to the widget's ``_handle_msg`` (the path a real kernel takes: ``set_state`` → observers →
     attnlib recompute → trait sync → messages serialised); ``time.process_time`` around it;
     median of ``--repeats`` moves after 5 warm-up moves. The old explorers render synchronously
     here (``asynchronous=False``), so the PNG render is inside the timing.
   - *bytes per change*: what the fake comm serialised during one such move (median).
   - *memory per explorer*: create 50 explorers as a learner's cell does, then close them all
     (every widget reachable from the explorer, with its layout and style) and collect garbage.
     Held = (after creating − before) / 50; left = (after closing − before) / 50. Measured twice,
     in separate processes: with ``tracemalloc`` (Python and numpy allocations) and as the
     process's resident set size (RSS, psutil; the allocator may keep freed pages).

Goals (issue 7): 95th percentile ≤ 16 ms for every explorer, kernel CPU per move ≤ 1 ms,
≤ 2 kB per move, ≤ 0.5 MiB per explorer and freed on close. The table prints every figure with
its goal; ``--json`` (default ``benchmarks/results/explorers.json``) keeps all of it, with the
raw per-press times.

Needs Debian's Chromium at ``/usr/bin/chromium``, Playwright for Python (no ``playwright
install``), JupyterLab, psutil; ``--no-browser`` measures only in-process.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))  # the tools are scripts
from slides_browser import CHROMIUM, CHROMIUM_ARGS

REPO = Path(__file__).resolve().parents[1]
OLD_COMMIT = "07f24e1"
KINDS = ("playground", "scaling", "softmax", "similarity")
FACTORIES = {
    "playground": "playground",
    "scaling": "scaling_explorer",
    "softmax": "softmax_explorer",
    "similarity": "similarity_explorer",
}
#: The kernel's floor: a plain ipywidgets slider whose moves nothing observes, pressed in the same
#: JupyterLab the same way (its "picture" is the slider's own readout). What any widget costs per
#: move in this kernel and on this websocket, whatever the explorer does.
BASELINE = "baseline"
BASELINE_CELL = "import ipywidgets\n\nipywidgets.IntSlider(value=50, max=100)"
GOALS = {"p95_ms": 16.0, "cpu_ms": 1.0, "kB": 2.0, "MiB": 0.5}

START_TIMEOUT = 120  # s: the server answering
RUN_TIMEOUT = 240_000  # ms: the kernel starting and the notebook's cells running
MOVE_TIMEOUT = 30_000  # ms: one press reaching the picture
SETTINGS_OVERRIDES = {
    "@jupyterlab/docmanager-extension:plugin": {"autosave": False},
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
}

# Per version: where the explorer is in the page, which element the arrow key goes to, and how
# its picture changes. Old: ipywidgets (noUiSlider handles, an <img>); new: the DOM contract of
# the anywidget explorers (a root div, <input type=range data-control=...>, an <svg>).
PAGE = {
    "old": {
        "root": {k: f".attnlib-{k}" for k in KINDS},
        "key_target": {
            "playground": ".attnlib-playground .attnlib-x-0 .noUi-handle",
            "scaling": ".attnlib-scaling .attnlib-dk .noUi-handle",
            "softmax": ".attnlib-softmax .attnlib-score-0 .noUi-handle",
            "similarity": ".attnlib-similarity .attnlib-x-0 .noUi-handle",
        },
        "picture": "img",
    },
    "new": {
        "root": {k: f".attnlib-explorer.attnlib-{k}" for k in KINDS},
        "key_target": {
            "playground": '.attnlib-explorer.attnlib-playground input[type="range"][data-control="x-0"]',
            "scaling": '.attnlib-explorer.attnlib-scaling input[type="range"][data-control="d_k"]',
            "softmax": '.attnlib-explorer.attnlib-softmax input[type="range"][data-control="score-0"]',
            "similarity": '.attnlib-explorer.attnlib-similarity input[type="range"][data-control="x-0"]',
        },
        "picture": "svg",
    },
}

BASELINE_ROOT = ".widget-slider"

# Installed in the page once the explorer is there. Times from the keydown (window, capture
# phase: before any handler of the page) to the first mutation of the picture, and to the next
# animation frame after it.
INSTRUMENT = """([root, picture]) => {
    const bench = window.__bench = {t0: null, first: null, frame: null, mutations: 0};
    window.addEventListener('keydown', () => {
        bench.t0 = performance.now();
        bench.first = null;
        bench.frame = null;
        bench.mutations = 0;
    }, true);
    const element = node => (node.nodeType === 1 ? node : node.parentElement);
    const inSvg = node => {
        const el = element(node);
        return el !== null && el.closest('svg') !== null && el.closest(root) !== null;
    };
    const inReadout = node => {
        const el = element(node);
        return el !== null && el.closest('.widget-readout') !== null && el.closest(root) !== null;
    };
    const isPicture = {
        img: m => m.type === 'attributes' && m.attributeName === 'src' && m.target.matches('img')
            && m.target.closest(root) !== null,
        svg: m => inSvg(m.target) || [...m.addedNodes, ...m.removedNodes].some(
            n => n.nodeName.toLowerCase() === 'svg'),
        readout: m => inReadout(m.target),
    }[picture];
    const scope = document.querySelector(root).closest('.jp-Cell') || document.body;
    new MutationObserver(records => {
        const now = performance.now();
        if (bench.t0 === null || !records.some(isPicture)) return;
        bench.mutations += 1;
        if (bench.first === null) {
            bench.first = now - bench.t0;
            requestAnimationFrame(() => { bench.frame = performance.now() - bench.t0; });
        }
    }).observe(scope, {subtree: true, childList: true, attributes: true, characterData: true});
}"""
SLIDER_POSITION = """(el) => el.matches('input')
    ? [Number(el.value), Number(el.min), Number(el.max)]
    : ['aria-valuenow', 'aria-valuemin', 'aria-valuemax'].map(a => Number(el.getAttribute(a)))"""
# The notebook is shown (no spinner) and its kernel is named, connected and idle.
READY = """() => {
    const panel = [...document.querySelectorAll('.jp-NotebookPanel')].find(p => p.offsetParent !== null);
    if (!panel || panel.querySelectorAll('.jp-Cell').length === 0) return false;
    if ([...panel.querySelectorAll('.jp-Spinner')].some(s => s.offsetParent !== null)) return false;
    const kernel = panel.querySelector('.jp-Toolbar-kernelName, .jp-KernelName');
    const indicator = panel.querySelector('.jp-Notebook-ExecutionIndicator');
    return window.jupyterapp !== undefined && kernel !== null && kernel.textContent.includes('Python 3')
        && indicator !== null && indicator.getAttribute('data-status') === 'idle';
}"""
# Every cell has run (no prompt shows *) and the kernel is idle again.
FINISHED = """() => {
    const prompts = [...document.querySelectorAll('.jp-InputArea-prompt')];
    const indicator = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
    return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent))
        && indicator !== null && indicator.getAttribute('data-status') === 'idle';
}"""


# --- statistics -------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0…100), linear between the closest ranks (numpy's default)."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


# --- in-process measurements (run as a subprocess with the version's PYTHONPATH) ---------------


def install_counting_comm() -> list[int]:
    """Give every widget made from now on a comm that serialises what it sends; return the counter.

    The counter's one element is the number of bytes serialised so far: ``jupyter_client``'s
    ``json_packer`` of each message's content (as the kernel's session packs it) plus its binary
    buffers. Message headers are not counted.
    """
    import comm
    from comm.base_comm import BaseComm
    from jupyter_client.session import json_packer

    sent = [0]

    class CountingComm(BaseComm):
        def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
            content = {"comm_id": self.comm_id, "data": data or {}, **keys}
            sent[0] += len(json_packer(content)) + sum(memoryview(b).nbytes for b in buffers or [])

    comm.create_comm = CountingComm
    return sent


def update_message(state: dict[str, Any]) -> dict[str, Any]:
    """The comm message a front end sends when the user changes ``state``."""
    return {"content": {"data": {"method": "update", "state": state, "buffer_paths": []}}, "buffers": []}


def bounce(position: int, low: int, high: int, direction: int) -> tuple[int, int]:
    """One step from ``position`` towards ``direction`` (±1), turning round at ``low``/``high``."""
    if not low <= position + direction <= high:
        direction = -direction
    return position + direction, direction


def old_mover(explorer: Any, kind: str) -> Callable[[], None]:
    """One keyboard step of the slider the browser run presses, as the front end sends it."""
    if kind == "playground":
        name = f"{explorer.tokens[0]} x"
    elif kind == "similarity":
        name = f"{explorer.labels[0]} x"
    elif kind == "softmax":
        name = f"score {explorer.labels[0]}"
    else:
        name = "d_k"
    slider = explorer.sliders[name]
    if hasattr(slider, "options"):  # SelectionSlider: the front end sends the index
        state = {"i": slider.index, "direction": 1}

        def move() -> None:
            state["i"], state["direction"] = bounce(
                state["i"], 0, len(slider.options) - 1, state["direction"]
            )
            slider._handle_msg(update_message({"index": state["i"]}))

        return move
    steps = round((slider.max - slider.min) / slider.step)
    state = {"i": round((slider.value - slider.min) / slider.step), "direction": 1}

    def move() -> None:
        state["i"], state["direction"] = bounce(state["i"], 0, steps, state["direction"])
        slider._handle_msg(update_message({"value": round(slider.min + state["i"] * slider.step, 10)}))

    return move


def new_mover(explorer: Any, kind: str) -> Callable[[], None]:
    """One keyboard step of the slider the browser run presses, as the new front end sends it.

    The new front ends send the whole input trait that a slider belongs to (``model.set`` and
    ``save_changes``): the playground its ``embeddings``, the similarity explorer its
    ``vectors``, the softmax explorer its ``scores``, the scaling explorer its ``d_k``.
    """
    if kind == "scaling":
        values = list(explorer.d_k_values)
        state = {"i": values.index(explorer.d_k), "direction": 1}

        def move_d_k() -> None:
            state["i"], state["direction"] = bounce(state["i"], 0, len(values) - 1, state["direction"])
            explorer._handle_msg(update_message({"d_k": values[state["i"]]}))

        return move_d_k
    trait = {"playground": "embeddings", "similarity": "vectors", "softmax": "scores"}[kind]
    low, high, step = explorer.value_min, explorer.value_max, explorer.step
    first = getattr(explorer, trait)[0]
    start = first[0] if isinstance(first, list) else first  # token 0's x, or score 0
    steps = round((high - low) / step)
    state = {"i": round((start - low) / step), "direction": 1}

    def move() -> None:
        state["i"], state["direction"] = bounce(state["i"], 0, steps, state["direction"])
        value = round(low + state["i"] * step, 10)
        current = json.loads(json.dumps(getattr(explorer, trait)))  # what the front end sends: a copy
        if isinstance(current[0], list):
            current[0][0] = value
        else:
            current[0] = value
        explorer._handle_msg(update_message({trait: current}))

    return move


def close_everything(widget: Any, seen: set[int] | None = None) -> None:
    """Close ``widget`` and every widget reachable from its traits (children, layout, style)."""
    from ipywidgets import Widget

    seen = set() if seen is None else seen
    if id(widget) in seen:
        return
    seen.add(id(widget))
    for name in widget.trait_names():
        value = getattr(widget, name, None)
        for item in value if isinstance(value, list | tuple) else [value]:
            if isinstance(item, Widget):
                close_everything(item, seen)
    widget.close()


def top_widget(explorer: Any) -> Any:
    """The widget an explorer displays as (old: ``explorer.widget``; new: the explorer itself)."""
    from ipywidgets import Widget

    return explorer if isinstance(explorer, Widget) else explorer.widget


def worker_cpu(version: str, kinds: list[str], repeats: int) -> dict[str, Any]:
    """Kernel CPU and bytes per change, in this process, for each of ``kinds``."""
    sent = install_counting_comm()
    import attnlib
    from attnlib import widgets

    results: dict[str, Any] = {"attnlib": attnlib.__file__}
    for kind in kinds:
        factory = getattr(widgets, FACTORIES[kind])
        explorer = factory(asynchronous=False) if version == "old" else factory()
        move = old_mover(explorer, kind) if version == "old" else new_mover(explorer, kind)
        for _ in range(5):
            move()
        cpu, wall, sizes = [], [], []
        for _ in range(repeats):
            before = sent[0]
            start_cpu, start_wall = time.process_time(), time.perf_counter()
            move()
            cpu.append(time.process_time() - start_cpu)
            wall.append(time.perf_counter() - start_wall)
            sizes.append(sent[0] - before)
        results[kind] = {
            "cpu_ms_median": statistics.median(cpu) * 1000,
            "cpu_ms_p95": percentile(cpu, 95) * 1000,
            "wall_ms_median": statistics.median(wall) * 1000,
            "bytes_median": statistics.median(sizes),
            "repeats": repeats,
        }
        close_everything(top_widget(explorer))
    return results


def worker_memory(how: str, kind: str, count: int) -> dict[str, Any]:
    """Memory held per explorer after creating ``count`` of ``kind``, and left after closing them.

    One kind per process: memory freed by one kind would otherwise be reused by the next.
    """
    import gc

    import psutil

    install_counting_comm()
    from attnlib import widgets

    process = psutil.Process()
    if how == "tracemalloc":
        import tracemalloc

        tracemalloc.start()

        def measure() -> int:
            return tracemalloc.get_traced_memory()[0]
    else:

        def measure() -> int:
            return process.memory_info().rss

    factory = getattr(widgets, FACTORIES[kind])
    close_everything(top_widget(factory()))  # imports, caches and first-use costs come first
    gc.collect()
    base = measure()
    explorers = [factory() for _ in range(count)]
    for explorer in explorers:
        if hasattr(explorer, "wait"):
            explorer.wait()  # old explorers: no render left running
    gc.collect()
    held = measure() - base
    for explorer in explorers:
        close_everything(top_widget(explorer))
    del explorers, explorer
    gc.collect()
    left = measure() - base
    return {
        "count": count,
        "held_MiB_per_explorer": held / count / 2**20,
        "left_MiB_per_explorer": left / count / 2**20,
    }


def run_worker(root: Path, argv: list[str]) -> dict[str, Any]:
    """This script's ``--worker`` mode in a fresh interpreter with ``root`` on PYTHONPATH."""
    env = os.environ | {"PYTHONPATH": str(root), "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *argv],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"worker {argv} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- the browser run --------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class JupyterLab:
    """A JupyterLab of its own on 127.0.0.1 serving ``folder``, its kernels importing ``root``."""

    def __init__(self, folder: Path, root: Path) -> None:
        self.folder, self.root = folder, root
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = folder.parent / f"{folder.name}-jupyterlab.log"
        self.process: subprocess.Popen | None = None

    def url(self, path: str) -> str:
        return f"{self.base}/{path}?reset&token={self.token}"

    def api(self, path: str, method: str = "GET") -> Any:
        request = urllib.request.Request(f"{self.base}/api/{path}?token={self.token}", method=method)
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def __enter__(self) -> JupyterLab:
        settings = self.folder.parent / f"{self.folder.name}-settings"
        dirs = {
            n: settings / n for n in ("config", "data", "runtime", "app", "user", "workspaces", "ipython")
        }
        for path in dirs.values():
            path.mkdir(parents=True)
        (dirs["app"] / "overrides.json").write_text(json.dumps(SETTINGS_OVERRIDES))
        config = {
            "ServerApp": {
                "ip": "127.0.0.1",
                "port": self.port,
                "port_retries": 0,
                "open_browser": False,
                "root_dir": str(self.folder),
                "allow_root": hasattr(os, "geteuid") and os.geteuid() == 0,
            },
            "IdentityProvider": {"token": self.token},
            "LabApp": {
                "app_settings_dir": str(dirs["app"]),
                "check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
                "extension_manager": "readonly",
                "expose_app_in_browser": True,  # window.jupyterapp: run the cells by command
            },
            "LabServerApp": {
                "user_settings_dir": str(dirs["user"]),
                "workspaces_dir": str(dirs["workspaces"]),
            },
        }
        (dirs["config"] / "jupyter_server_config.json").write_text(json.dumps(config))
        env = os.environ | {
            "PYTHONPATH": str(self.root),
            "JUPYTER_CONFIG_DIR": str(dirs["config"]),
            "JUPYTER_DATA_DIR": str(dirs["data"]),
            "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
            "JUPYTER_PATH": os.path.join(sys.prefix, "share", "jupyter"),
            "JUPYTERLAB_SETTINGS_DIR": str(dirs["user"]),
            "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]),
            "IPYTHONDIR": str(dirs["ipython"]),
        }
        with open(self.log, "w") as output:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "jupyter", "lab"],
                cwd=self.folder,
                env=env,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited:\n{self.log.read_text()[-3000:]}")
            try:
                self.api("status")
                return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"JupyterLab did not answer:\n{self.log.read_text()[-3000:]}"
                    ) from None
                time.sleep(0.5)

    def __exit__(self, *exc: object) -> None:
        assert self.process is not None
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def wait_for_idle_kernel(self, notebook: str) -> None:
        """Wait until the notebook's session has a kernel that is idle (started and answering)."""
        deadline = time.monotonic() + RUN_TIMEOUT / 1000
        while time.monotonic() < deadline:
            states = [
                s["kernel"]["execution_state"] for s in self.api("sessions") if s["path"].endswith(notebook)
            ]
            if "idle" in states:
                return
            time.sleep(0.5)
        raise RuntimeError(f"the kernel of {notebook} did not become idle:\n{self.log.read_text()[-3000:]}")

    def kernel_process(self, notebook: str) -> tuple[str, Any]:
        """The session id and the kernel process (psutil) of ``notebook``."""
        import psutil

        assert self.process is not None
        for session in self.api("sessions"):
            if session["path"].endswith(notebook):
                kernel_id = session["kernel"]["id"]
                for child in psutil.Process(self.process.pid).children(recursive=True):
                    if any(kernel_id in part for part in child.cmdline()):
                        return session["id"], child
        raise RuntimeError(f"no kernel process found for {notebook}")


def write_notebook(path: Path, kind: str) -> None:
    """A notebook that shows which attnlib it imports, then makes one explorer (or the baseline)."""
    cells = [
        "import attnlib\nfrom attnlib import widgets\n\nprint(attnlib.__file__)",
        BASELINE_CELL if kind == BASELINE else f"widgets.{FACTORIES[kind]}()",
    ]
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"c{i}",
                "metadata": {},
                "outputs": [],
                "source": source,
            }
            for i, source in enumerate(cells)
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook))


def measure_in_browser(
    version: str, root: Path, work: Path, args: argparse.Namespace, log: Callable[[str], None]
) -> dict[str, Any]:
    """Press a slider's arrow key in every explorer of ``version`` in Chromium; see the docstring."""
    from playwright.sync_api import sync_playwright

    folder = work / f"{version}-notebooks"
    folder.mkdir()
    kinds = [*args.kinds, BASELINE]
    for kind in kinds:
        write_notebook(folder / f"{kind}.ipynb", kind)
    page_spec = PAGE[version]
    results: dict[str, Any] = {}
    with JupyterLab(folder, root) as lab, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for kind in kinds:
                log(f"{version} {kind}: browser")
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                try:
                    results[kind] = press_keys(
                        context.new_page(), lab, f"{kind}.ipynb", root, page_spec, kind, args
                    )
                except RuntimeError as error:  # kept in the results, shown under the table
                    log(f"{version} {kind}: {error}")
                    results.setdefault("errors", {})[kind] = str(error)
                finally:
                    context.close()
                    for session in lab.api("sessions"):
                        lab.api(f"sessions/{session['id']}", method="DELETE")
        finally:
            browser.close()
    floor = results.get(BASELINE, {}).get("kernel_cpu_ms_per_move")
    for kind in args.kinds:
        if floor is not None and kind in results:
            results[kind]["kernel_cpu_ms_above_baseline"] = results[kind]["kernel_cpu_ms_per_move"] - floor
    return results


def press_keys(
    page: Any,
    lab: JupyterLab,
    notebook: str,
    root: Path,
    spec: dict[str, Any],
    kind: str,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Open ``notebook``, run it, press the arrow key; the per-press figures of the docstring."""
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    traffic = {"received": 0, "sent": 0, "frames": 0, "last": time.monotonic()}

    def count(direction: str) -> Callable[[Any], None]:
        def on_frame(payload: str | bytes) -> None:
            traffic[direction] += len(payload.encode() if isinstance(payload, str) else payload)
            if direction == "received":
                traffic["frames"] += 1
                traffic["last"] = time.monotonic()

        return on_frame

    def on_websocket(ws: Any) -> None:
        if "/api/kernels/" in ws.url:
            ws.on("framereceived", count("received"))
            ws.on("framesent", count("sent"))

    page.on("websocket", on_websocket)
    page.set_default_timeout(MOVE_TIMEOUT)
    page.goto(lab.url(f"lab/tree/{notebook}"), wait_until="domcontentloaded")
    page.wait_for_function(READY, timeout=RUN_TIMEOUT)
    lab.wait_for_idle_kernel(notebook)
    page.wait_for_function(READY, timeout=RUN_TIMEOUT)
    # not awaited: the command's promise ends with the run, and a page call should not wait on it
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    explorer_root = BASELINE_ROOT if kind == BASELINE else spec["root"][kind]
    key_target = f"{BASELINE_ROOT} .noUi-handle" if kind == BASELINE else spec["key_target"][kind]
    picture = "readout" if kind == BASELINE else spec["picture"]
    page.locator(explorer_root).first.wait_for(state="attached", timeout=RUN_TIMEOUT)
    page.wait_for_function(FINISHED, timeout=RUN_TIMEOUT)
    printed = page.locator(".jp-OutputArea-output").first.text_content() or ""
    if str(root) not in printed:
        raise RuntimeError(f"the kernel imported attnlib from {printed.strip()!r}, not from {root}")
    page.evaluate(INSTRUMENT, [explorer_root, picture])
    target = page.locator(key_target).first
    target.scroll_into_view_if_needed()
    wait_quiet(page, traffic, args.quiet)
    _, kernel = lab.kernel_process(notebook)
    idle_start, idle_cpu = time.monotonic(), cpu_seconds(kernel)
    page.wait_for_timeout(args.idle * 1000)  # the kernel's CPU use when nobody moves anything
    idle_rate = (cpu_seconds(kernel) - idle_cpu) / (time.monotonic() - idle_start)

    direction = "ArrowRight"
    first, frame, received, sent, frames, mutations, missed = [], [], [], [], [], [], 0
    cpu_start = wall_start = 0.0
    for press in range(args.warmup + args.presses):
        if press == args.warmup:
            cpu_start, wall_start = cpu_seconds(kernel), time.monotonic()
        target.focus()
        value, low, high = target.evaluate(SLIDER_POSITION)
        if direction == "ArrowRight" and value >= high:
            direction = "ArrowLeft"
        elif direction == "ArrowLeft" and value <= low:
            direction = "ArrowRight"
        before = dict(traffic)
        page.keyboard.press(direction)
        try:
            page.wait_for_function("() => window.__bench.first !== null", polling="raf", timeout=MOVE_TIMEOUT)
        except Exception:  # Playwright's TimeoutError: no update came; counted, not timed
            if target.evaluate(SLIDER_POSITION)[0] == value:
                raise RuntimeError(
                    f"{kind}: {direction} did not move the slider {key_target} (the key "
                    f"did not reach it); page errors: {errors}"
                ) from None
            missed += press >= args.warmup
            continue
        wait_quiet(page, traffic, args.quiet)
        bench = page.evaluate("() => window.__bench")
        if press < args.warmup:
            continue
        first.append(bench["first"])
        frame.append(bench["frame"] if bench["frame"] is not None else float("nan"))
        mutations.append(bench["mutations"])
        received.append(traffic["received"] - before["received"])
        sent.append(traffic["sent"] - before["sent"])
        frames.append(traffic["frames"] - before["frames"])
    cpu, wall = cpu_seconds(kernel) - cpu_start, time.monotonic() - wall_start
    if not first:
        raise RuntimeError(f"{kind}: no press updated the picture ({missed} missed); page errors: {errors}")
    return {
        "presses": len(first),
        "missed": missed,
        "update_ms": first,
        "update_ms_median": statistics.median(first),
        "update_ms_p95": percentile(first, 95),
        "frame_ms_median": statistics.median(frame),
        "mutations_median": statistics.median(mutations),
        "received_bytes_per_move": statistics.mean(received),
        "received_bytes_median": statistics.median(received),
        "sent_bytes_per_move": statistics.mean(sent),
        "frames_per_move": statistics.mean(frames),
        "kernel_cpu_ms_per_move_raw": cpu / args.presses * 1000,
        "kernel_idle_cpu_ms_per_s": idle_rate * 1000,
        "kernel_cpu_ms_per_move": (cpu - idle_rate * wall) / args.presses * 1000,
        "page_errors": errors,
    }


def cpu_seconds(process: Any) -> float:
    """CPU time of ``process`` (psutil) so far, in s: user + system of all its threads.

    The process's own counters (``/proc/PID/stat``) include threads that have ended (the old
    explorers render on short-lived threads); they count in clock ticks (10 ms), so over 40
    presses a figure per move is good to about ±0.25 ms.
    """
    times = process.cpu_times()
    return times.user + times.system


def wait_quiet(page: Any, traffic: dict[str, Any], quiet: float) -> None:
    """Wait until no websocket frame came from the kernel for ``quiet`` seconds (at most 30 s)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        page.wait_for_timeout(50)  # also lets Playwright deliver the frame events
        if time.monotonic() - traffic["last"] >= quiet:
            return


# --- versions, the table ----------------------------------------------------------------------


@contextlib.contextmanager
def old_checkout(commit: str, work: Path) -> Iterator[Path]:
    """``commit`` checked out in a temporary, detached git worktree (removed afterwards)."""
    path = work / f"old-{commit}"
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), commit],
        check=True,
        capture_output=True,
    )
    try:
        yield path
    finally:
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)],
            check=False,
            capture_output=True,
        )


def has_new_explorers(root: Path) -> bool:
    return (root / "attnlib" / "widgets" / "__init__.py").exists()


def measure_version(
    version: str, root: Path, work: Path, args: argparse.Namespace, log: Callable[[str], None]
) -> dict[str, Any]:
    figures: dict[str, Any] = {"root": str(root)}
    if args.reuse is not None:  # the in-process figures of an earlier run; only the browser again
        earlier = json.loads(args.reuse.read_text())["versions"][version]
        figures.update({key: earlier[key] for key in ("in_process", "tracemalloc", "rss")})
        figures["browser"] = measure_in_browser(version, root, work, args, log)
        return figures
    log(f"{version}: in-process CPU and bytes per change")
    figures["in_process"] = run_worker(
        root, ["--worker", "cpu", version, "--repeats", str(args.repeats), "--kinds", *args.kinds]
    )
    for how in ("tracemalloc", "rss"):
        figures[how] = {}
        for kind in args.kinds:
            log(f"{version}: memory ({how}), {args.create} {kind} explorers")
            figures[how][kind] = run_worker(
                root, ["--worker", how, version, "--create", str(args.create), "--kinds", kind]
            )
    if not args.no_browser:
        figures["browser"] = measure_in_browser(version, root, work, args, log)
    return figures


ROWS = [
    # (metric, where it is in a version's figures, format, goal, goal text)
    ("keydown → picture update, median (ms)", ("browser", "update_ms_median"), ".1f", None, ""),
    ("keydown → picture update, p95 (ms)", ("browser", "update_ms_p95"), ".1f", GOALS["p95_ms"], "≤ 16"),
    ("keydown → next frame after it, median (ms)", ("browser", "frame_ms_median"), ".1f", None, ""),
    (
        "kernel CPU per move, browser run (ms)",
        ("browser", "kernel_cpu_ms_per_move"),
        ".2f",
        GOALS["cpu_ms"],
        "≤ 1",
    ),
    ("  the same minus the baseline's (ms)", ("browser", "kernel_cpu_ms_above_baseline"), ".2f", None, ""),
    (
        "kernel CPU per change, in-process (ms)",
        ("in_process", "cpu_ms_median"),
        ".2f",
        GOALS["cpu_ms"],
        "≤ 1",
    ),
    (
        "kernel → browser per move, websocket (kB)",
        ("browser", "received_bytes_per_move"),
        ".1f",
        GOALS["kB"],
        "≤ 2",
    ),
    ("serialised per change, in-process (kB)", ("in_process", "bytes_median"), ".1f", GOALS["kB"], "≤ 2"),
    (
        "held per explorer, tracemalloc (MiB)",
        ("tracemalloc", "held_MiB_per_explorer"),
        ".2f",
        GOALS["MiB"],
        "≤ 0.5",
    ),
    ("left after close, tracemalloc (MiB)", ("tracemalloc", "left_MiB_per_explorer"), ".2f", None, "≈ 0"),
    ("held per explorer, RSS (MiB)", ("rss", "held_MiB_per_explorer"), ".2f", GOALS["MiB"], "≤ 0.5"),
    ("left after close, RSS (MiB)", ("rss", "left_MiB_per_explorer"), ".2f", None, "≈ 0"),
]
KILO = {"received_bytes_per_move": 1000, "bytes_median": 1000}


def cell(
    figures: dict[str, Any] | None, kind: str, where: tuple[str, str], fmt: str
) -> tuple[str, float | None]:
    value = (figures or {}).get(where[0], {}).get(kind, {}).get(where[1])
    if value is None:
        return "—", None
    value /= KILO.get(where[1], 1)
    return f"{value:{fmt}}", value


def table(results: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    lines, rows = [], []
    header = f"{'explorer':<11}{'metric':<45}{'old':>10}{'new':>10}  goal"
    lines += [header, "-" * len(header)]
    for kind in (*KINDS, BASELINE):
        for metric, where, fmt, goal, goal_text in ROWS:
            if kind == BASELINE and where[0] != "browser":
                continue
            old_text, old = cell(results["versions"].get("old"), kind, where, fmt)
            new_text, new = cell(results["versions"].get("new"), kind, where, fmt)
            met = (
                ""
                if goal is None or new is None or kind == BASELINE
                else ("  met" if new <= goal else "  NOT met")
            )
            lines.append(f"{kind:<11}{metric:<45}{old_text:>10}{new_text:>10}  {goal_text}{met}")
            rows.append({"explorer": kind, "metric": metric, "old": old, "new": new, "goal": goal_text})
        lines.append("")
    return "\n".join(lines), rows


def save(path: Path, results: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, default=str) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=30, help="timed key presses per explorer (≥ 30)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed presses first")
    parser.add_argument("--quiet", type=float, default=0.5, help="s without kernel frames that end a move")
    parser.add_argument("--idle", type=float, default=5.0, help="s of kernel idle CPU measured first")
    parser.add_argument("--repeats", type=int, default=30, help="in-process moves per explorer")
    parser.add_argument("--create", type=int, default=50, help="explorers created for the memory figure")
    parser.add_argument("--old", default=OLD_COMMIT, help="the commit with the old explorers")
    parser.add_argument("--new", type=Path, default=REPO, help="the checkout with the new explorers")
    parser.add_argument("--json", type=Path, default=REPO / "benchmarks" / "results" / "explorers.json")
    parser.add_argument("--reuse", type=Path, help="take the in-process figures from this results file")
    parser.add_argument("--no-browser", action="store_true", help="only the in-process figures")
    parser.add_argument("--only", choices=("old", "new"), help="measure one version only")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS), help="explorers to measure")
    parser.add_argument("--worker", nargs=2, metavar=("WHAT", "VERSION"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        what, version = args.worker
        if what == "cpu":
            result = worker_cpu(version, args.kinds, args.repeats)
        else:
            result = worker_memory(what, args.kinds[0], args.create)
        print(json.dumps(result))
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped run still cleans up
    if args.presses < 30:
        parser.error("--presses must be at least 30")
    if not args.no_browser and not Path(CHROMIUM).exists():
        parser.error(f"Chromium is not at {CHROMIUM} (apt-get install chromium), or give --no-browser")

    def log(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    import psutil

    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", args.old], capture_output=True, text=True, check=True
    ).stdout.strip()
    results: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": " ".join(["benchmarks/explorers.py", *(argv if argv is not None else sys.argv[1:])]),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "machine": platform.machine(),
            "memory_GiB": round(psutil.virtual_memory().total / 2**30, 1),
            "chromium": subprocess.run(
                [CHROMIUM, "--version"], capture_output=True, text=True, check=False
            ).stdout.strip()
            if Path(CHROMIUM).exists()
            else None,
        },
        "old_commit": commit,
        "settings": {k: v for k, v in vars(args).items() if k not in ("worker", "json", "new")},
        "goals": GOALS,
        "versions": {},
    }
    with tempfile.TemporaryDirectory(prefix="attnlib-bench-") as temporary:
        work = Path(temporary)
        if args.only != "new":
            with old_checkout(commit, work) as old_root:
                results["versions"]["old"] = measure_version("old", old_root, work, args, log)
                save(args.json, results)  # kept even if what follows fails
        if args.only != "old":
            if has_new_explorers(args.new):
                results["versions"]["new"] = measure_version("new", args.new.resolve(), work, args, log)
            else:
                log(f"new: {args.new} has no attnlib/widgets/ package yet: not measured")
    text, rows = table(results)
    results["table"] = rows
    save(args.json, results)
    print(
        f"Python {results['machine']['python']} · {results['machine']['cpus']} CPUs · "
        f"{results['machine']['chromium']} · old = {commit[:7]}, new = {args.new}"
    )
    print(
        f"browser: {args.presses} timed presses (+{args.warmup} warm-up) per explorer; in-process: "
        f"median of {args.repeats} changes; memory: {args.create} explorers created, then closed"
    )
    print()
    print(text)
    for version, figures in results["versions"].items():
        for kind, error in figures.get("browser", {}).get("errors", {}).items():
            print(f"NOT MEASURED in the browser: {version} {kind}: {error}")
    print(f"all figures, with every press's time: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
