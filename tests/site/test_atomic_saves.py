"""A server killed mid-save: jupyter_server's own manager leaves the notebook half-written,
the hub's (``tools/hub/server/atomic_contents.py``) leaves the one saved before.

Each save runs in a child process that writes half of the new notebook and then dies (``os._exit``,
as a killed server does: no ``finally``, no exception handler), exactly where a server killed
mid-save stops.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT

SAVE_AND_DIE = """
import asyncio, os, sys
import nbformat
sys.path.insert(0, {server!r})
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from atomic_contents import AtomicContentsManager

manager = {manager}(root_dir={folder!r})
notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = {version}\\n" * 2000)])
model = {{"type": "notebook", "content": notebook}}
if {die}:
    def write_half_and_die(nb, file, **kwargs):
        text = nbformat.writes(nb)
        file.write(text[: len(text) // 2])
        file.flush()
        os._exit(9)
    nbformat.write = write_half_and_die
asyncio.run(manager.save(model, "work.ipynb"))
"""


def _save(folder: Path, manager: str, version: int, die: bool) -> int:
    code = SAVE_AND_DIE.format(
        server=str(ROOT / "tools" / "hub" / "server"),
        manager=manager,
        folder=str(folder),
        version=version,
        die=die,
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).returncode


@pytest.mark.parametrize(
    ("manager", "survives"), [("AsyncLargeFileManager", False), ("AtomicContentsManager", True)]
)
def test_a_save_killed_midway(tmp_path: Path, manager: str, survives: bool) -> None:
    assert _save(tmp_path, manager, 1, die=False) == 0
    assert _save(tmp_path, manager, 2, die=True) == 9  # killed mid-save
    text = (tmp_path / "work.ipynb").read_text()
    if survives:
        notebook = nbformat.reads(text, as_version=4)
        assert notebook.cells[0].source.startswith("x = 1"), "the notebook saved before, whole"
        visible = [p.name for p in tmp_path.iterdir() if not p.name.startswith(".")]
        assert visible == ["work.ipynb"], "the half-written one is hidden beside it"
    else:  # jupyter_server's own: the notebook itself is half-written
        with pytest.raises(json.JSONDecodeError):
            json.loads(text)
