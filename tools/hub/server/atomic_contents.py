"""Saves that a server killed mid-save cannot leave half-written.

jupyter_server's own ``atomic_writing`` copies the old file aside, then writes the new one **in
place**, and puts the copy back only if Python sees the write fail: a server killed mid-save (a
culled or stopped server, a machine that goes down) leaves the notebook truncated, and JupyterLab
cannot open it. :class:`AtomicContentsManager` writes the new file beside the old one, flushes it to
disk, then renames it over the old one, which the kernel does in one step: the notebook on disk is
always either the old one or the new one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import IO

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager


class AtomicContentsManager(AsyncLargeFileManager):
    """JupyterLab's file manager, with each save written beside the file and renamed over it."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.log.info("saves are written beside each file and renamed over it (atomic_contents.py)")

    @contextlib.contextmanager
    def atomic_writing(
        self, os_path: str, text: bool = True, encoding: str = "utf-8", **kwargs
    ) -> Iterator[IO]:
        """A file to write ``os_path``'s new content to; it replaces ``os_path`` when the block ends."""
        kwargs.pop("log", None)
        with self.perm_to_403(os_path):
            if os.path.islink(os_path):  # a link is written through, as jupyter_server does
                os_path = os.path.join(os.path.dirname(os_path), os.readlink(os_path))
            descriptor, temporary = tempfile.mkstemp(dir=os.path.dirname(os_path) or ".", prefix=".~saving-")
            try:
                mode = "w" if text else "wb"
                with open(descriptor, mode, encoding=encoding if text else None, **kwargs) as file:
                    yield file
                    file.flush()
                    os.fsync(file.fileno())
                if os.path.exists(os_path):
                    shutil.copymode(os_path, temporary)
                else:
                    os.chmod(temporary, 0o666 & ~_umask())
                os.replace(temporary, os_path)
            finally:
                if os.path.exists(temporary):
                    os.unlink(temporary)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
