"""The committed files a lesson reads (a training run, a corpus), checked against their SHA-256.

>>> from course.kit.committed import read_committed
>>> read_committed("course.l14_induction_heads", "induction_run.npz", "0" * 64, "tools/train_induction.py")
Traceback (most recent call last):
...
ValueError: course/l14_induction_heads/induction_run.npz has SHA-256 ..., not the committed 000...
"""

from __future__ import annotations

import hashlib
from importlib import resources


def read_committed(package: str, name: str, sha256: str, script: str) -> bytes:
    """The bytes of the committed file ``name`` of ``package``, after checking its SHA-256.

    Parameters
    ----------
    package : str
        The lesson's package, ``"course.l15_generating_text"``.
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
