"""What Binder does, without Docker: build the environment from binder/ and run the first lesson.

repo2docker installs ``binder/requirements.txt`` into a fresh environment of the Python version in
``binder/runtime.txt``, runs ``binder/postBuild`` from the repository root, and opens
``notebooks/00_start_here.ipynb``. These tests check that the files promise something possible
(runtime.txt names a Python that attnlib and the README support), and the slow one does the same
as Binder in a fresh virtual environment of *that* Python, whichever Python runs the tests, and
executes the first lesson there: a pin without a wheel for it or a broken postBuild fails here.
postBuild installs lesson 19's torch from PyTorch's CPU index, or, with ``TORCH_INDEX=`` (as .ci/run
sets it on the project's machines, which carry the CPU wheel), from what pip finds by itself.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT
from packaging.specifiers import SpecifierSet

BINDER = ROOT / "binder"


def _runtime_version() -> str:
    """The ``X.Y`` of binder/runtime.txt (``python-X.Y``)."""
    runtime = (BINDER / "runtime.txt").read_text().strip()
    match = re.fullmatch(r"python-(3\.\d+)", runtime)
    assert match, f"runtime.txt must read python-3.Y, as repo2docker expects; it reads {runtime!r}"
    return match.group(1)


def _requires_python() -> SpecifierSet:
    return SpecifierSet(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"])


def test_binder_python_is_one_that_attnlib_and_the_readme_support() -> None:
    version = _runtime_version()
    assert version in _requires_python(), f"Binder's Python {version} is outside requires-python"
    oldest = re.search(r"You need Python (3\.\d+) or newer", (ROOT / "README.md").read_text())
    assert oldest, "the README says which Python it needs"
    assert f">={oldest.group(1)}" in str(_requires_python()), (
        "the README and pyproject name the same oldest Python"
    )
    assert version == oldest.group(1), (
        "Binder runs the oldest supported Python, so lessons never use newer features"
    )


def test_binder_files_point_at_the_same_pins_and_lesson() -> None:
    lines = [ln.strip() for ln in (BINDER / "requirements.txt").read_text().splitlines()]
    assert "-r ../requirements.txt" in lines, "Binder installs exactly the pins of requirements.txt"
    assert os.access(BINDER / "postBuild", os.X_OK), "postBuild must be executable"
    readme = (ROOT / "README.md").read_text()
    badge = re.search(r"\(https://mybinder\.org/v2/gh/[^)\s]+\)", readme)
    assert badge, "the README has a Binder launch link"
    assert "urlpath=lab/tree/notebooks/00_start_here.ipynb" in badge.group(0)


def test_every_requirement_is_pinned_exactly() -> None:
    names = (
        "requirements.txt",
        "requirements-test.txt",
        "requirements-print.txt",
        "requirements-pytorch.txt",
        "requirements-torch.txt",
        "requirements-hub.txt",
    )
    for name in names:
        for line in (ROOT / name).read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith("-r "):
                assert re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[A-Za-z0-9_.+\-]+", line), f"{name}: {line!r}"


def _binder_python() -> str:
    """A command that runs the Python of runtime.txt here, or skip saying which one is missing."""
    version = _runtime_version()
    if sys.version_info[:2] == tuple(map(int, version.split("."))):
        return sys.executable
    found = shutil.which(f"python{version}")
    if found:
        check = subprocess.run([found, "-c", "import sys; print(*sys.version_info[:2], sep='.')"],
                               capture_output=True, text=True)  # fmt: skip
        if check.returncode == 0 and check.stdout.strip() == version:
            return found
    pytest.skip(f"Binder runs Python {version} (binder/runtime.txt); python{version} is not installed here")


def test_binder_environment_runs_the_first_lesson(tmp_path: Path) -> None:
    python = _binder_python()
    repo = tmp_path / "repo"
    not_in_a_clone = shutil.ignore_patterns(".venv*", ".git", "*.egg-info", "__pycache__", ".*_cache")
    shutil.copytree(ROOT, repo, ignore=not_in_a_clone)
    env_dir = tmp_path / "env"
    subprocess.run([python, "-m", "venv", str(env_dir)], check=True)
    bin_dir = env_dir / "bin"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(env_dir)}
    env.pop("PYTHONPATH", None)

    def run(*args: str | Path) -> None:
        subprocess.run([str(a) for a in args], cwd=repo, env=env, check=True)

    run(bin_dir / "python", "-m", "pip", "install", "--quiet", "-r", "binder/requirements.txt")
    run(repo / "binder" / "postBuild")
    executed = tmp_path / "00_executed.ipynb"
    run(
        bin_dir / "jupyter", "nbconvert", "--to", "notebook", "--execute",
        "--ExecutePreprocessor.kernel_name=python3",
        "--output-dir", tmp_path, "--output", executed.stem,
        repo / "notebooks" / "00_start_here.ipynb",
    )  # fmt: skip

    where = subprocess.run(
        [bin_dir / "python", "-c", "import attnlib; print(attnlib.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert str(env_dir) in where, f"attnlib must come from the Binder environment, not {where}"
    torch = subprocess.run(
        [bin_dir / "python", "-c", "import torch; print(torch.__version__, torch.version.cuda)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    pinned = re.search(r"^torch==(\S+)", (ROOT / "requirements-pytorch.txt").read_text(), flags=re.MULTILINE)
    assert torch[0].split("+")[0] == pinned[1] and torch[1] == "None", (
        f"lesson 19's torch, the CPU build: {torch}"
    )
    notebook = nbformat.read(executed, as_version=4)
    outputs = [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]
    assert outputs and not [out for out in outputs if out.output_type == "error"]
    assert any("0.7311" in out.get("text", "") for out in outputs), "the first computation ran"
