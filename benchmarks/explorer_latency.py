"""How fast each explorer answers a key: keydown on its first slider → the next animation frame
after its drawing changed, in the student edition of the book, in headless Chromium.

    .venv/bin/python benchmarks/explorer_latency.py [--book build/book-student] [--before main] \\
        [--presses 60] [--rounds 3] [--lessons 07 14] [--profiles desktop phone] [--no-write]

The book is served from this process (127.0.0.1, a free port). Each lesson page with an explorer is
opened once per version of the explorers' ES modules: ``after``, the modules of this working tree,
and with ``--before REF`` also ``before``, the modules of the git revision REF (``git archive``),
both put into the page's widget state in place of the ones the book was built with (the page is
rewritten as it is served, so no lesson is executed again). The two versions alternate lesson by
lesson in the same browser, so that a loaded machine slows both alike.

On each page the first slider of the explorer is focused and pressed ``--presses`` times (right
arrow, left where the slider is at its maximum). In the page, a keydown listener (capture phase,
on the window) takes the time of the key, a MutationObserver on the explorer's pictures sees the
first change of its drawing, and a requestAnimationFrame callback after that change takes the
time of the next frame: the latency is the difference (``performance.now()`` both). After each
press the script waits for that frame and two more before the next key. A press that changes no
drawing within 2 s counts as lost (reported, not in the percentiles).

The whole measurement is repeated ``--rounds`` times (every lesson and profile once per round, so
that a busy minute of a shared machine falls on one round of a few lessons, not on all rounds of
one). A lesson's p50 and p95 are the medians of its rounds' p50 and p95; the worst round's p95 is
kept beside them.

Two profiles: ``desktop`` (1280×800) and ``phone`` (390×844, touch, device scale 3, the CPU
slowed 4× with the DevTools protocol's ``Emulation.setCPUThrottlingRate``, as Chromium's
mid-tier-mobile preset does). Goals (issue 32): p95 ≤ 16.7 ms on the desktop, ≤ 50 ms on the phone.

Prints p50/p95 per lesson, profile and version, and writes ``results/explorer_latency.json`` with
the machine (``tools/machine.py``) and the load average before and after.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from machine import machine_description  # noqa: E402  tools/machine.py

STATE_SCRIPT = re.compile(
    r'(<script type="application/vnd\.jupyter\.widget-state\+json">)(.*?)(</script>)', re.DOTALL
)
PROFILES: dict[str, dict[str, Any]] = {
    "desktop": {"viewport": {"width": 1280, "height": 800}, "device_scale_factor": 1, "cpu_slowdown": 1},
    "phone": {
        "viewport": {"width": 390, "height": 844},
        "device_scale_factor": 3,
        "is_mobile": True,
        "has_touch": True,
        "cpu_slowdown": 4,
    },
}
GOALS_MS = {"desktop": 16.7, "phone": 50.0}

# In the page: arm() before a key; wait() after it returns a promise that resolves to keydown →
# frame in ms, or null when no drawing changed within 2 s.
MEASURE = """
(() => {
  const root = document.querySelector(".attnlib-explorer");
  const pictures = root.querySelector(".attnlib-pictures") ?? root;
  const lat = { armed: false, t0: null, changed: false, resolve: null, timer: null };
  const key = () => {
    if (lat.armed && lat.t0 === null) lat.t0 = performance.now();
  };
  addEventListener("keydown", key, { capture: true });
  new MutationObserver(() => {
    if (!lat.armed || lat.t0 === null || lat.changed) return;
    lat.changed = true;
    requestAnimationFrame(() => {
      const ms = performance.now() - lat.t0;
      lat.armed = false;
      clearTimeout(lat.timer);
      // two more frames, so that the next key does not land in this one's paint
      requestAnimationFrame(() => requestAnimationFrame(() => lat.resolve(ms)));
    });
  }).observe(pictures, { subtree: true, childList: true, attributes: true, characterData: true });
  window.__latency = {
    arm() {
      // a press whose frame came before its wait() left that wait's timer running: it must not
      // end this press
      clearTimeout(lat.timer);
      Object.assign(lat, { armed: true, t0: null, changed: false });
      lat.promise = new Promise((resolve) => {
        lat.resolve = resolve;
      });
    },
    wait() {
      lat.timer = setTimeout(() => { lat.armed = false; lat.resolve(null); }, 2000);
      return lat.promise;
    },
  };
})();
"""


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0–100) with linear interpolation, as numpy's default."""
    ordered = sorted(values)
    at = (len(ordered) - 1) * q / 100
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def summary(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """A lesson's figures over its rounds: the medians of their p50 and p95, the worst p95, and each round."""
    p50s = [row["p50_ms"] for row in rounds if row["p50_ms"] is not None]
    p95s = [row["p95_ms"] for row in rounds if row["p95_ms"] is not None]
    return {
        "p50_ms": round(statistics.median(p50s), 1) if p50s else None,
        "p95_ms": round(statistics.median(p95s), 1) if p95s else None,
        "worst_p95_ms": max(p95s) if p95s else None,
        "lost": sum(row["lost"] for row in rounds),
        "rounds": rounds,
    }


def explorer_classes(page: str) -> set[str]:
    """The anywidget classes in a book page's widget state,
    ``attention_lessons.l13_real_model.widgets.HeadExplorer``…"""
    match = STATE_SCRIPT.search(page)
    if not match:
        return set()
    models = json.loads(match.group(2))["state"].values()
    return {m["state"]["_anywidget_id"] for m in models if "_anywidget_id" in m.get("state", {})}


def modules_of(root: Path, classes: set[str]) -> dict[str, str]:
    """Each explorer class's ``_esm`` (its ES module as anywidget loads it) in the tree at ``root``."""
    program = (
        "import importlib, json, sys\n"
        "def esm(name):\n"
        "    module, cls = name.rsplit('.', 1)\n"
        "    text = getattr(importlib.import_module(module), cls)._esm\n"
        "    return text if isinstance(text, str) else text.default_value\n"
        "print(json.dumps({name: esm(name) for name in json.loads(sys.argv[1])}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [sys.executable, "-c", program, json.dumps(sorted(classes))]
    done = subprocess.run(command, env=env, cwd=root, check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def tree_of(ref: str, into: Path) -> Path:
    """The files ``attention_lessons/`` of git revision ``ref``, extracted under ``into``."""
    archive = into / "attention_lessons.tar"
    subprocess.run(
        ["git", "-C", str(ROOT), "archive", "-o", str(archive), ref, "attention_lessons"], check=True
    )
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into


def git(*args: str) -> str:
    """What a git command prints in this repository."""
    done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def revision(ref: str) -> str:
    """The commit a git revision names."""
    return git("rev-parse", ref)


def with_modules(page: str, modules: dict[str, str]) -> str:
    """A book page whose anywidgets' ``_esm`` in its widget state are their classes' in ``modules``."""
    match = STATE_SCRIPT.search(page)
    if not match:
        raise ValueError("the page holds no widget state")
    state = json.loads(match.group(2))
    for model in state["state"].values():
        if "_esm" in model.get("state", {}):
            model["state"]["_esm"] = modules[model["state"]["_anywidget_id"]]
    text = json.dumps(state).replace("</", "<\\/")
    return page[: match.start(2)] + text + page[match.end(2) :]


def serve(book: Path, versions: dict[str, dict[str, str]]) -> tuple[http.server.ThreadingHTTPServer, int]:
    """Serve ``book``; a lesson page asked with ``?js=VERSION`` comes with that version's module."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            path, _, query = self.path.partition("?")
            version = dict(p.split("=", 1) for p in query.split("&") if "=" in p).get("js")
            lesson = re.match(r"/notebooks/(\d\d)_[^/]*\.html$", path)
            if version is None or lesson is None:
                super().do_GET()
                return
            page = (book / path.lstrip("/")).read_text(encoding="utf-8")
            body = with_modules(page, versions[version]).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

    handler = functools.partial(Handler, directory=str(book))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def measure(context: Any, url: str, profile: dict[str, Any], presses: int) -> dict[str, Any]:
    """Open ``url``, press its explorer's first slider ``presses`` times; the latencies in ms."""
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url, wait_until="load")
    page.wait_for_selector(".attnlib-explorer .attnlib-pictures svg", state="attached", timeout=30_000)
    page.wait_for_timeout(300)
    if profile["cpu_slowdown"] != 1:
        cdp = context.new_cdp_session(page)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": profile["cpu_slowdown"]})
    page.evaluate(MEASURE)
    slider = page.locator(".attnlib-explorer input[type=range]").first
    slider.scroll_into_view_if_needed()
    slider.focus()
    latencies: list[float] = []
    lost = 0
    for _ in range(presses):
        at_max = slider.evaluate("s => Number(s.value) + Number(s.step || 1) > Number(s.max)")
        page.evaluate("window.__latency.arm()")
        page.keyboard.press("ArrowLeft" if at_max else "ArrowRight")
        ms = page.evaluate("window.__latency.wait()")
        if ms is None:
            lost += 1
        else:
            latencies.append(ms)
    page.close()
    if errors:
        raise RuntimeError(f"{url}: {errors}")
    return {
        "ms": [round(v, 2) for v in latencies],
        "lost": lost,
        "p50_ms": round(percentile(latencies, 50), 1) if latencies else None,
        "p95_ms": round(percentile(latencies, 95), 1) if latencies else None,
    }


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--book", type=Path, default=ROOT / "build" / "book-student")
    parser.add_argument("--before", metavar="REF", help="also measure the modules of git revision REF")
    parser.add_argument("--presses", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3, help="times the whole measurement is repeated")
    parser.add_argument("--lessons", nargs="*", help="lesson numbers (default: every page with an explorer)")
    parser.add_argument("--profiles", nargs="*", choices=sorted(PROFILES), default=["desktop", "phone"])
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    if not (args.book / "notebooks").is_dir():
        raise SystemExit(f"{args.book} holds no built book: build it with tools/build_book.py")
    from playwright.sync_api import sync_playwright

    load_before = os.getloadavg()
    pages, classes = {}, set()
    for path in sorted((args.book / "notebooks").glob("[0-9][0-9]_*.html")):
        lesson = path.name[:2]
        found = explorer_classes(path.read_text(encoding="utf-8"))
        if found and (not args.lessons or lesson in args.lessons):
            pages[lesson] = path.name
            classes |= found
    versions = {"after": modules_of(ROOT, classes)}
    if args.before:
        with tempfile.TemporaryDirectory() as tmp:
            versions["before"] = modules_of(tree_of(args.before, Path(tmp)), classes)
    server, port = serve(args.book.resolve(), versions)
    order = [v for v in ("before", "after") if v in versions]
    rounds: dict[str, dict[str, dict[str, list[dict[str, Any]]]]] = {}
    started = time.perf_counter()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium)
        for r in range(args.rounds):
            for name in args.profiles:
                profile = PROFILES[name]
                options = {k: v for k, v in profile.items() if k != "cpu_slowdown"}
                for k, (lesson, page) in enumerate(pages.items()):
                    for version in order if (k + r) % 2 == 0 else order[::-1]:
                        context = browser.new_context(**options)
                        url = f"http://127.0.0.1:{port}/notebooks/{page}?js={version}"
                        row = measure(context, url, profile, args.presses)
                        context.close()
                        rounds.setdefault(version, {}).setdefault(name, {}).setdefault(lesson, []).append(row)
                        p50, p95, lost = row["p50_ms"], row["p95_ms"], row["lost"]
                        where = f"round {r + 1} {name:8} {lesson} {version:6}"
                        print(f"{where} p50 {p50:6.1f} p95 {p95:6.1f} ms lost {lost}", flush=True)
        browser.close()
    server.shutdown()
    results = {
        version: {name: {k: summary(rows) for k, rows in lessons.items()} for name, lessons in by.items()}
        for version, by in rounds.items()
    }
    seconds = time.perf_counter() - started
    load_after = os.getloadavg()

    goals = f"desktop {GOALS_MS['desktop']}, phone {GOALS_MS['phone']}"
    print(f"\nkeydown → frame, ms, median of {args.rounds} rounds (p50, p95; and the worst round's p95)")
    print(f"goals p95: {goals}")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}; {seconds:.0f} s")
    header = "| lesson | " + " | ".join(pages) + " |"
    print(header)
    print("| --- " * (len(pages) + 1) + "|")
    for name in args.profiles:
        for version in order:
            for q in ("p50_ms", "p95_ms", "worst_p95_ms"):
                cells = [f"{results[version][name][lesson][q]:.1f}" for lesson in pages]
                what = q.removesuffix("_ms").replace("_", " ")
                print(f"| {name} {version} {what} | " + " | ".join(cells) + " |")
    if args.no_write:
        return
    chromium = subprocess.run([args.chromium, "--version"], capture_output=True, text=True).stdout.strip()
    record = {
        "command": "benchmarks/explorer_latency.py " + " ".join(sys.argv[1:]),
        "machine": machine_description(chromium=chromium),
        "load_average_1_5_15": {"before": load_before, "after": load_after},
        "seconds": round(seconds, 1),
        "settings": {
            "presses": args.presses,
            "rounds": args.rounds,
            "profiles": {n: PROFILES[n] for n in args.profiles},
            "before": args.before,
            "before_commit": revision(args.before) if args.before else None,
            "after_commit": revision("HEAD"),
            "after_tree_modified": bool(git("status", "--porcelain", "attention_lessons")),
        },
        "goals_p95_ms": GOALS_MS,
        "results": results,
    }
    out = ROOT / "benchmarks" / "results" / "explorer_latency.json"
    out.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
