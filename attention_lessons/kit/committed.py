"""The committed files a lesson reads (a training run, a corpus, a benchmark's results).

They are installed with the package and read with :mod:`importlib.resources`, never by a path
relative to the notebook, so that a lesson downloaded alone reads them too. A file that a script
trains or computes is checked against the SHA-256 recorded when it was written.

>>> from attention_lessons.kit.committed import read_committed
>>> read_committed(
...     "attention_lessons.l14_induction_heads", "induction_run.npz", "0" * 64, "tools/train_induction.py"
... )
Traceback (most recent call last):
...
ValueError: attention_lessons/l14_induction_heads/induction_run.npz has SHA-256 ..., not the committed 000...
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from typing import Any


def read_committed(package: str, name: str, sha256: str, script: str) -> bytes:
    """The bytes of the committed file ``name`` of ``package``, after checking its SHA-256.

    Parameters
    ----------
    package : str
        The lesson's package, ``"attention_lessons.l15_generating_text"``.
    name : str
        The file's name in that folder.
    sha256 : str
        The hash recorded when ``script`` wrote the file.
    script : str
        The script that writes the file, named in the error.

    Raises
    ------
    ValueError
        When the file's hash is another: the file was changed since it was recorded.
    """
    raw = (resources.files(package) / name).read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != sha256:
        raise ValueError(
            f"{package.replace('.', '/')}/{name} has SHA-256 {digest}, not the committed {sha256}: "
            f"the file was changed; restore it with git, or re-run {script} and record its hash"
        )
    return raw


def read_json(package: str, name: str) -> Any:
    """The committed JSON file ``name`` of ``package``: a benchmark's results that a lesson shows.

    >>> read_json("attention_lessons.l15_generating_text", "generation.json")["cache"]["equal_to_formula"]
    True
    """
    return json.loads((resources.files(package) / name).read_text(encoding="utf-8"))


def read_text(package: str, name: str) -> str:
    """The committed text file ``name`` of ``package``, such as a corpus (UTF-8).

    >>> read_text("attention_lessons.l15_generating_text", "lessons_text.txt").splitlines()[0]
    '=== notebooks/00_start_here.ipynb ==='
    """
    return (resources.files(package) / name).read_text(encoding="utf-8")
