"""Collecting submissions without trusting them: nbgrader's ``collect``, refusing what it cannot trust.

The exchange's inbound folder is writable by every student, nbgrader takes a submission's student
from its folder's name (``student+assignment+time+random``), and its collect copies the files
following links. :class:`SafeCollect` (nbgrader's ``ExchangeFactory.collect`` in
``nbgrader_config.py``, so ``nbgrader collect`` and ``week.py collect`` both use it) first moves
aside, into ``refused/`` of the course folder, each submission that

- was made by another account than the student it names (neither the teacher nor that student);
- holds a link (a link to the teacher's ``source/`` would be collected as the model answers) or
  anything but plain files and folders, or a file another account made;
- has a missing or unreadable ``timestamp.txt``;
- is partial or unreadable: a notebook of the released assignment missing, not a valid notebook,
  with broken nbgrader cell metadata, or over 10 MiB (a server stopped mid-submit leaves such a
  folder).

The student's previous submission, if complete, is then the one collected. Each refusal is kept with
its reason (``judge.record``) for ``grades.csv``, and printed.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import sys
from pathlib import Path

import nbformat
from judge import record
from nbgrader.exchange.default import ExchangeCollect
from nbgrader.nbgraderformat import MetadataValidator
from nbgrader.utils import parse_utc

#: Bytes: a submitted notebook over this is refused.
MAX_NOTEBOOK = 10 * 2**20


def user_name(uid: int) -> str:
    """The system user's name of ``uid`` (the number itself where it has none)."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def unsafe(folder: Path, student: str, notebooks: list[str]) -> str | None:
    """Why the submission ``folder`` (made in ``student``'s name) cannot be graded; None when it can."""
    status = folder.lstat()
    if not stat.S_ISDIR(status.st_mode):
        return "it is not a folder"
    if status.st_uid != os.geteuid() and user_name(status.st_uid) != student:
        return f"made by {user_name(status.st_uid)}, not by {student}"
    for path in sorted(folder.rglob("*")):
        kind = path.lstat().st_mode
        if stat.S_ISLNK(kind) or not (stat.S_ISREG(kind) or stat.S_ISDIR(kind)):
            return f"it holds {path.relative_to(folder)}, which is a link or not a plain file"
        if path.lstat().st_uid not in (status.st_uid, os.geteuid()):
            return f"it holds {path.relative_to(folder)}, made by {user_name(path.lstat().st_uid)}"
    try:
        with (folder / "timestamp.txt").open(encoding="utf-8") as stamp:
            parse_utc(stamp.read(100).strip())  # a timestamp is 30 characters; never read a huge file
    except (OSError, ValueError, OverflowError, TypeError, UnicodeDecodeError) as error:
        return f"its timestamp.txt is missing or unreadable ({type(error).__name__})"
    for notebook in notebooks:
        path = folder / notebook
        if not path.is_file():
            return f"it is partial: {notebook} is missing"
        if path.stat().st_size > MAX_NOTEBOOK:
            return f"{notebook} is over {MAX_NOTEBOOK >> 20} MiB"
        try:
            submitted = nbformat.read(path, as_version=4)
            nbformat.validate(submitted)
        except Exception as error:  # nbformat raises several kinds for a broken file
            return f"{notebook} is not a readable notebook ({type(error).__name__})"
        try:
            MetadataValidator().validate_nb(submitted)
        except Exception as error:  # nbgrader's own check of its cell metadata
            return f"{notebook}'s nbgrader cell metadata is broken ({str(error).splitlines()[0][:120]})"
    return None


def refuse_unsafe(inbound: Path, outbound: Path, root: Path, assignment: str) -> list[Path]:
    """Move each untrusted submission of ``assignment`` in ``inbound`` to ``root/refused``, with its
    reason kept; ``outbound`` holds the released notebooks. Returns the folders moved."""
    released = sorted(path.name for path in outbound.glob("*.ipynb"))
    refused = []
    for folder in sorted(inbound.glob(f"*+{assignment}+*")):
        student = folder.name.split("+", 1)[0]
        reason = unsafe(folder, student, released)
        if reason is None:
            continue
        target = root / "refused" / folder.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(folder, target)
        print(f"refused {folder.name}: {reason}", file=sys.stderr)
        stamp = folder.name.split("+")[2] if folder.name.count("+") >= 2 else "?"
        record(root, student, assignment, "refused", f"refused the submission of {stamp}: {reason}")
        refused.append(target)
    return refused


class SafeCollect(ExchangeCollect):
    """nbgrader's collect, after :func:`refuse_unsafe` has moved the untrusted submissions aside."""

    def init_src(self) -> None:
        """Refuse, then list what is left as nbgrader does."""
        course = Path(self.root) / self.coursedir.course_id
        assignment = self.coursedir.assignment_id
        if (course / "inbound").is_dir():
            refuse_unsafe(
                course / "inbound", course / "outbound" / assignment, Path(self.coursedir.root), assignment
            )
        super().init_src()
