"""What the Makefile's commands do, read from ``make -n`` (which prints and runs nothing)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from attention_lessons.manifest import lessons

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _dry_run(target: str, **variables: str) -> list[str]:
    """The commands ``make <target>`` would run, one string each."""
    args = ["make", "--no-print-directory", "-n", target, *(f"{k}={v}" for k, v in variables.items())]
    # not the variables of a make that runs this test (.ci/run's make test TORCH_INDEX=): the Makefile's own.
    # make passes its command line's variables down in MAKEFLAGS and exports each into the environment too
    words = shlex.split(os.environ.get("MAKEFLAGS", ""))
    overridden = {word.split("=", 1)[0] for word in words if "=" in word}
    inherited = {"MAKEFLAGS", "MAKEOVERRIDES", "MFLAGS", "MAKELEVEL", *overridden}
    env = {k: v for k, v in os.environ.items() if k not in inherited}
    result = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=True, env=env)
    return result.stdout.replace("\\\n", " ").splitlines()


def test_make_lab_serves_the_lessons_without_terminals() -> None:
    """A lesson server needs no shell; with terminals on, the token would give one to anyone."""
    lab = [shlex.split(line) for line in _dry_run("lab") if " lab " in f" {line} "]
    assert len(lab) == 1, lab
    options = lab[0]
    assert "--ServerApp.terminals_enabled=False" in options
    assert "--ServerApp.ip=127.0.0.1" in options
    assert not [o for o in options if "token" in o.lower() or "password" in o.lower()], "token auth stays on"


def test_the_terminals_option_exists_in_the_pinned_jupyter_server() -> None:
    """A misspelt option would only warn at start-up, and the terminals would stay on."""
    serverapp = pytest.importorskip("jupyter_server.serverapp")
    assert "terminals_enabled" in serverapp.ServerApp.class_trait_names()


def test_make_refuses_a_venv_of_another_python(tmp_path: Path) -> None:
    """PYTHON=python3.X make test must test 3.X, not silently reuse a venv made with another Python."""
    other = next(
        (
            f"python3.{minor}"
            for minor in (11, 12, 13)
            if minor != sys.version_info[1] and shutil.which(f"python3.{minor}")
        ),
        None,
    )
    if other is None or subprocess.run([other, "-V"], capture_output=True).returncode != 0:
        pytest.skip("needs a second Python 3.11–3.13 on PATH")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    result = subprocess.run(
        ["make", "--no-print-directory", "test-env", f"PYTHON={other}", f"VENV={venv}"],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode != 0
    assert f"runs Python {sys.version_info[0]}.{sys.version_info[1]}, but PYTHON={other}" in result.stderr


def test_make_help_lists_every_target() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    phony = re.findall(r"^\.PHONY:(.*)$", makefile, re.MULTILINE)
    targets = {name for line in phony for name in line.split()}
    help_text = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=True)
    listed = set(re.findall(r"^make (\S+)", help_text.stdout, re.MULTILINE))
    assert "book" in targets
    assert targets == listed, f"make help lists {sorted(listed)}, the Makefile has {sorted(targets)}"


def test_make_lab_installs_lesson_19s_torch_as_the_cpu_build(tmp_path: Path) -> None:
    """PyPI's torch for Linux is the CUDA build: make lab adds PyTorch's CPU index, where the pin
    torch==2.13.0 is 2.13.0+cpu, unless TORCH_INDEX= says pip finds the CPU wheel by itself."""
    venv = str(tmp_path / "venv")
    lab = " ".join(" ".join(_dry_run("lab", VENV=venv)).split())
    assert "--extra-index-url https://download.pytorch.org/whl/cpu -r requirements-pytorch.txt" in lab
    local = " ".join(" ".join(_dry_run("lab", VENV=venv, TORCH_INDEX="")).split())
    assert "-r requirements-pytorch.txt" in local and "download.pytorch.org" not in local


def test_make_book_installs_the_book_on_the_lessons_pins_without_the_test_tools(tmp_path: Path) -> None:
    """The book needs jupyter-book, not pytest, Playwright and the rest; make test needs both."""
    book = " ".join(_dry_run("book", VENV=str(tmp_path / "venv")))
    assert "-r requirements.txt" in book
    assert "-r requirements-book.txt" in book
    assert "requirements-test.txt" not in book
    pins = (ROOT / "requirements-book.txt").read_text(encoding="utf-8")
    assert re.findall(r"^-r (\S+)", pins, re.MULTILINE) == ["requirements.txt"]
    test = " ".join(_dry_run("test", VENV=str(tmp_path / "venv")))
    assert "-r requirements-test.txt" in test
    assert "-r requirements-book.txt" in test


def test_make_test_runs_the_processes_side_by_side_on_one_thread_each(tmp_path: Path) -> None:
    """The test workers, their lessons' kernels and make book's lessons run two at a time: with a BLAS
    thread per core in each, threads wait on cores another process keeps busy (the Makefile's
    ONE_THREAD_EACH)."""
    commands = _dry_run("test", VENV=str(tmp_path / "venv"))
    side_by_side = [c for c in commands if " -m pytest " in c or "execute_notebooks.py --out" in c]
    # the suite, the second path's two runs, and each lesson of the book
    assert len(side_by_side) == 3 + len(lessons()), side_by_side
    for command in side_by_side:
        words = command.split()
        assert {"OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1"} <= set(words), command
    assert any(re.search(r"\bmake .*-j2 build/executed/", command) for command in commands)


def test_make_handouts_installs_what_it_prints_with_after_lab_and_book(tmp_path: Path) -> None:
    """After make lab and make book (no test tools), make handouts installs Playwright itself, and
    prints the students' handouts from the students' decks, made from the student copies."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    for stamp in (".lab-installed", ".book-installed"):
        (venv / stamp).touch()
    handouts = " ".join(_dry_run("handouts", VENV=str(venv)))
    assert "-r requirements-print.txt" in handouts, handouts
    assert "requirements-test.txt" not in handouts
    assert "--student --out build/slides-student build/student/notebooks/" in handouts
    assert "--student-slides build/slides-student" in handouts
    pins = (ROOT / "requirements-print.txt").read_text(encoding="utf-8")
    assert re.findall(r"^-r (\S+)", pins, re.MULTILINE) == ["requirements.txt"]
    assert re.search(r"^playwright==", pins, re.MULTILINE)
    test_pins = (ROOT / "requirements-test.txt").read_text(encoding="utf-8")
    assert "-r requirements-print.txt" in test_pins, "make test prints the handouts' test with the same pins"


def test_make_hub_runs_the_hub_on_the_lessons_pins(tmp_path: Path) -> None:
    """The students' servers run the environment of make lab, plus the hub's pins; make lab stays lean."""
    venv = str(tmp_path / "venv")
    hub = _dry_run("hub", VENV=venv)
    runs = [line for line in hub if line.endswith(f"{venv}/bin/jupyterhub -f tools/hub/jupyterhub_config.py")]
    assert len(runs) == 1, hub
    assert all(f"ATTN_HUB_{name}=" in runs[0] for name in ("IP", "CERT", "KEY", "DIR", "ROSTER")), runs
    assert "-r requirements-hub.txt" in " ".join(hub)
    lock_changed = subprocess.run(
        ["make", "--no-print-directory", "-n", "-W", "package-lock.json", "hub", f"VENV={venv}"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "npm ci --ignore-scripts --no-audit --no-fund" in lock_changed, "the proxy from package-lock.json"
    pins = (ROOT / "requirements-hub.txt").read_text(encoding="utf-8")
    assert re.findall(r"^-r (\S+)", pins, re.MULTILINE) == ["requirements.txt"]
    assert "requirements-hub.txt" not in " ".join(_dry_run("lab", VENV=venv))
    for target in ("test", "test-env"):
        assert "-r requirements-hub.txt" in " ".join(_dry_run(target, VENV=venv)), f"make {target}"
