"""Publish the student copies as a branch of the repository: what students open, and nothing more.

    .venv/bin/python tools/student_branch.py [--git-dir .git] [--branch student]

Makes (or moves on by one commit) the branch ``student_branch`` of ``repository.toml``, made
with git's plumbing from the working tree, without touching the checkout, the index or the
current branch: then ``git push origin student`` publishes it. The branch holds

- ``notebooks/``: the student copies (``tools/build_student.py``: no cell tagged ``solution``),
  and the files the lessons read beside them;
- what running them needs: ``attnlib/``, ``attention_lessons/`` (the figures, explorers and self-checks,
  without the lessons' ``answers.py``, the recipes of the answers that the tests hide), the pins
  ``requirements.txt``, ``requirements-pytorch.txt`` (lesson 19's torch), ``requirements-model.txt``
  and ``requirements-data.txt``, ``pyproject.toml``, ``binder/`` (so
  Binder and a hub's image build from it), the ``Makefile`` (``make lab`` opens its
  ``notebooks/``) and ``repository.toml``;
- a ``README.md`` for students: how to open the lessons there.

No teacher's lesson, instructor's guide, test, tool or assignment is on it. Binder's link and the
hub's nbgitpuller link to this branch (README.md, the guide) and the student edition of the book
open these copies.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from build_student import build
from repository import Repository, read

ROOT = Path(__file__).resolve().parents[1]
#: The tracked files a student's copy needs, as path patterns (matched against the whole path).
KEPT = re.compile(
    r"(attnlib|attention_lessons|binder)/.*|pyproject\.toml|requirements\.txt|requirements-(model|data|pytorch)\.txt"
    r"|Makefile|repository\.toml|LICENSE|LICENSE-CC-BY-4\.0\.txt|CITATION\.cff|THIRD_PARTY\.md"
)
#: Left out even where KEPT keeps them: a lesson's recipes of its hidden answers.
LEFT_OUT = re.compile(r"attention_lessons/l\d\d_[^/]+/answers\.py|.*__pycache__/.*")
MODE = "100644"


def readme(repository: Repository) -> str:
    """The student branch's README.md."""
    binder = repository.binder(repository.student_branch)
    return f"""# Attention, step by step: the student copies

[![Launch on Binder](https://mybinder.org/badge_logo.svg)]({binder})

The lessons in `notebooks/`, with the answers to their questions and exercises left out, so
that you can work them out first; the self-checks say whether your answer is right.

- **On Binder**, with nothing to install: click the badge above.
- **On your computer** (Python 3.11 or newer): `make lab` installs the pinned environment in
  `.venv` and opens the lessons in JupyterLab.

Start with `notebooks/00_start_here.ipynb`.
"""


def _git(git_dir: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", f"--git-dir={git_dir}", f"--work-tree={ROOT}", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def student_files(copies: Path) -> dict[str, Path]:
    """Every file of the branch, by its path there: the tracked files kept, then the copies."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    files = {
        name: ROOT / name
        for name in tracked
        if name and KEPT.fullmatch(name) and not LEFT_OUT.fullmatch(name) and (ROOT / name).is_file()
    }
    files.update(
        {str(path.relative_to(copies)): path for path in sorted(copies.rglob("*")) if path.is_file()}
    )
    return files


def publish(git_dir: Path, branch: str, repository: Repository) -> str:
    """Write the student branch into the repository at ``git_dir``; its commit."""
    lessons = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    with tempfile.TemporaryDirectory() as folder:
        copies = Path(folder, "copies")
        build(lessons, copies)
        (copies / "README.md").write_text(readme(repository), encoding="utf-8")
        files = student_files(copies)
        names = list(files)
        blobs = _git(
            git_dir, "hash-object", "-w", "--stdin-paths", stdin="\n".join(str(files[n]) for n in names)
        )
        index = {"GIT_INDEX_FILE": str(Path(folder, "index"))}
        entries = "".join(f"{MODE} {blob}\t{name}\n" for blob, name in zip(blobs.split(), names, strict=True))
        _git(git_dir, "update-index", "--add", "--index-info", stdin=entries, env=index)
        tree = _git(git_dir, "write-tree", env=index)
    parent = subprocess.run(
        ["git", f"--git-dir={git_dir}", "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if parent and _git(git_dir, "rev-parse", f"{parent}^{{tree}}") == tree:
        return parent  # nothing changed
    who = {"GIT_AUTHOR_NAME": "make student-branch", "GIT_AUTHOR_EMAIL": "student-branch@localhost"}
    who = {name: os.environ.get(name, value) for name, value in who.items()}
    who |= {"GIT_COMMITTER_NAME": who["GIT_AUTHOR_NAME"], "GIT_COMMITTER_EMAIL": who["GIT_AUTHOR_EMAIL"]}
    message = "The student copies of the lessons (make student-branch)"
    commit = _git(git_dir, "commit-tree", tree, *(["-p", parent] if parent else []), "-m", message, env=who)
    _git(git_dir, "update-ref", f"refs/heads/{branch}", commit)
    return commit


def main(argv: list[str]) -> int:
    """Publish the branch and say how to push it."""
    repository = read()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(
        subprocess.run(
            ["git", "rev-parse", "--git-common-dir"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    parser.add_argument(
        "--git-dir", type=Path, default=ROOT / default, help="the repository to write it into"
    )
    parser.add_argument("--branch", default=repository.student_branch, help="its name (repository.toml's)")
    args = parser.parse_args(argv)
    commit = publish(args.git_dir.resolve(), args.branch, repository)
    print(f"branch {args.branch} at {commit[:12]}: publish it with `git push origin {args.branch}`")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
