"""What Binder does, without Docker: build the environment from binder/ and run the first lesson.

repo2docker installs ``binder/requirements.txt`` into a fresh environment of the Python version in
``binder/runtime.txt``, runs ``binder/postBuild`` from the repository root, and opens
``notebooks/00_start_here.ipynb``. This test does the same in a fresh virtual environment and
executes that notebook there, so a missing pin or a broken postBuild fails here first.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"


def test_binder_files_point_at_the_same_pins_and_lesson() -> None:
    lines = [ln.strip() for ln in (BINDER / "requirements.txt").read_text().splitlines()]
    assert "-r ../requirements.txt" in lines, "Binder installs exactly the pins of requirements.txt"
    runtime = (BINDER / "runtime.txt").read_text().strip()
    assert runtime == f"python-{sys.version_info.major}.{sys.version_info.minor}", runtime
    assert os.access(BINDER / "postBuild", os.X_OK), "postBuild must be executable"
    readme = (ROOT / "README.md").read_text()
    badge = re.search(r"\(https://mybinder\.org/v2/gh/[^)\s]+\)", readme)
    assert badge, "the README has a Binder launch link"
    assert "urlpath=lab/tree/notebooks/00_start_here.ipynb" in badge.group(0)


def test_every_requirement_is_pinned_exactly() -> None:
    for name in ("requirements.txt", "requirements-test.txt", "requirements-torch.txt"):
        for line in (ROOT / name).read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith("-r "):
                assert re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[A-Za-z0-9_.+\-]+", line), f"{name}: {line!r}"


@pytest.mark.slow
def test_binder_environment_runs_the_first_lesson(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    not_in_a_clone = shutil.ignore_patterns(".venv", ".git", "*.egg-info", "__pycache__", ".*_cache")
    shutil.copytree(ROOT, repo, ignore=not_in_a_clone)
    env_dir = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
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
    notebook = nbformat.read(executed, as_version=4)
    outputs = [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]
    assert outputs and not [out for out in outputs if out.output_type == "error"]
    assert any("0.7311" in out.get("text", "") for out in outputs), "the first computation ran"
