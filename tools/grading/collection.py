"""Collecting submissions without trusting them: nbgrader's ``collect``, from a copy the students
cannot touch.

The exchange's inbound folder is writable by every student, nbgrader takes a submission's student
from its folder's name (``student+assignment+time+random``), and its collect copies the files
following links, long after anything could have checked them. :class:`SafeCollect` (nbgrader's
``ExchangeFactory.collect`` in ``nbgrader_config.py``, so ``nbgrader collect`` and ``week.py
collect`` both use it) first **copies** every submission of the assignment into a folder of the
course (``collecting/``, root's, removed once collected), opening each file without following a
link and keeping only plain files, then checks the copy, which no student can change, and hands
nbgrader only the copies that pass. Refused, each with its reason (``judge.record``, for
``grades.csv``), and kept in ``refused/``:

- a folder made by another account than the student it names (neither the teacher nor that
  student): the refusal is recorded under the account that made it;
- a link or anything but plain files and folders, or a file another account made;
- a missing or unreadable ``timestamp.txt``;
- a partial or unreadable submission: a notebook of the released assignment missing, not a valid
  notebook, with broken nbgrader cell metadata, or over 10 MiB (a server stopped mid-submit leaves
  such a folder), or a folder over 50 MiB in all.

Of what passes, each student's newest submission is collected (nbgrader's own due-date options do
not apply); a student whose newest was refused has their previous complete one collected.
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

#: Bytes: a submitted notebook over this is refused, and a submission over ``MAX_FOLDER`` in all.
MAX_NOTEBOOK = 10 * 2**20
MAX_FOLDER = 50 * 2**20


def user_name(uid: int) -> str:
    """The system user's name of ``uid`` (the number itself where it has none)."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


class RefusedError(Exception):
    """Why a submission cannot be collected."""


def copy_untouchable(source: Path, target: Path, owner: int) -> None:
    """Copy the folder ``source`` to ``target``: plain files and folders only, each opened without
    following a link and checked once open (its kind, its owner ``owner`` or root), at most
    ``MAX_FOLDER`` bytes in all. :class:`RefusedError` otherwise."""
    target.mkdir()
    copied = 0
    for entry in sorted(os.scandir(source), key=lambda entry: entry.name):
        path, into = Path(entry.path), target / entry.name
        try:
            descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as error:  # ELOOP: a link; ENOENT: gone since it was listed
            raise RefusedError(
                f"it holds {entry.name}, which is a link or went away ({error.strerror})"
            ) from None
        with os.fdopen(descriptor, "rb") as file:
            status = os.fstat(file.fileno())
            if status.st_uid not in (owner, 0, os.geteuid()):
                raise RefusedError(f"it holds {entry.name}, made by {user_name(status.st_uid)}")
            if stat.S_ISDIR(status.st_mode):
                copy_untouchable(path, into, owner)
                continue
            if not stat.S_ISREG(status.st_mode):
                raise RefusedError(f"it holds {entry.name}, which is not a plain file")
            data = file.read(MAX_FOLDER - copied + 1)
        copied += len(data)
        if copied > MAX_FOLDER:
            raise RefusedError(f"it holds more than {MAX_FOLDER >> 20} MiB")
        into.write_bytes(data)


def unreadable(folder: Path, notebooks: list[str]) -> str | None:
    """Why the copied submission ``folder`` cannot be graded (its timestamp, its notebooks); None
    when it can."""
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


def stage(inbound: Path, outbound: Path, root: Path, assignment: str) -> Path:
    """Copy each submission of ``assignment`` in ``inbound`` into ``root/collecting/<assignment>``
    and keep the copies that can be graded; the others go to ``root/refused`` with their reasons.
    ``outbound`` holds the released notebooks. Returns the folder of the kept copies."""
    released = sorted(path.name for path in outbound.glob("*.ipynb"))
    staged = root / "collecting" / assignment
    shutil.rmtree(staged, ignore_errors=True)
    staged.mkdir(parents=True)
    for folder in sorted(inbound.glob(f"*+{assignment}+*")):
        named = folder.name.split("+", 1)[0]
        stamp = folder.name.split("+")[2] if folder.name.count("+") >= 2 else "?"
        copy = staged / folder.name
        try:
            status = folder.lstat()
            author = user_name(status.st_uid)
            if not stat.S_ISDIR(status.st_mode):
                raise RefusedError("it is not a folder")
            copy_untouchable(folder, copy, status.st_uid)  # what is judged from here on, and kept
            try:  # the name nbgrader reads the student and the time from
                parse_utc(folder.name.rsplit("+", 3)[2])
            except (IndexError, ValueError, OverflowError, TypeError):
                raise RefusedError("its name is not student+assignment+time") from None
            if status.st_uid != os.geteuid() and author != named:
                named = author  # the refusal is the author's, never the name they wrote
                raise RefusedError(f"made by {author} in another student's name")
            reason = unreadable(copy, released)
        except RefusedError as refusal:
            reason = str(refusal)
        except OSError as error:  # gone or changed while it was read
            reason = f"it changed while it was collected ({error.strerror})"
        if reason is None:
            continue
        target = root / "refused" / folder.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(target, ignore_errors=True)
        if copy.exists():
            copy.rename(target)
        print(f"refused {folder.name}: {reason}", file=sys.stderr)
        record(root, named, assignment, "refused", f"refused the submission of {stamp}: {reason}")
    return staged


class SafeCollect(ExchangeCollect):
    """nbgrader's collect from :func:`stage`'s copies: the newest that passed, for each student."""

    def init_src(self) -> None:
        """Stage and check the submissions, then list the copies as nbgrader lists the inbound."""
        course = Path(self.root) / self.coursedir.course_id
        assignment = self.coursedir.assignment_id
        if not (course / "inbound").is_dir():
            self.fail(f"Course not found: {course / 'inbound'}")
        staged = stage(
            course / "inbound", course / "outbound" / assignment, Path(self.coursedir.root), assignment
        )
        self.inbound_path = str(staged)
        self.check_owner = False  # stage() has checked each author; the copies are root's
        student = self.coursedir.student_id or "*"
        records = [self._path_to_record(str(path)) for path in staged.glob(f"{student}+{assignment}+*")]
        by_student: dict[str, list[dict]] = {}
        for found in records:
            by_student.setdefault(found["username"], []).append(found)
        self.src_records = [self._sort_by_timestamp(found)[0] for found in by_student.values()]

    def copy_files(self) -> None:
        """nbgrader's copy into ``submitted/``, then the staged copies go."""
        super().copy_files()
        shutil.rmtree(self.inbound_path, ignore_errors=True)
