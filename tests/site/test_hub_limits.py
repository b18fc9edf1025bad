"""A student's control group (``tools/hub/limits.py``): ending it leaves nothing of theirs running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from conftest import require_build

NAME = "attn-test-limits"
FORKING = (  # a parent that keeps starting children, each sleeping
    "import os, time\n"
    "for _ in range(20):\n"
    "    if os.fork() == 0:\n"
    "        time.sleep(60); os._exit(0)\n"
    "    time.sleep(0.01)\n"
    "time.sleep(60)\n"
)


def test_ending_a_group_returns_once_every_process_has_exited() -> None:
    from hub import limits

    group, said = limits.make(NAME, 256 << 20, 256) if os.geteuid() == 0 else (None, "not root")
    require_build(None if group else said, "root on a machine whose control groups can be written")
    try:
        parent = subprocess.Popen([sys.executable, "-c", FORKING], preexec_fn=group.join)
        while len(group.processes()) < 5:  # the parent and some of its children, still forking
            assert parent.poll() is None, "the forking parent runs"
        assert group.end() == set(), "nothing is left when end() returns"
        assert group.processes() == set()
        assert parent.wait(timeout=5) == -signal.SIGKILL
    finally:
        limits.remove(NAME)
    assert not any(folder.exists() for folder in group.folders), "the group's folders are removed"
