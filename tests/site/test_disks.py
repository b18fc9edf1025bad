"""The disk watchdog (``tools/hub/disks.py``) without a hub: over the quota, a student's processes
but their server are ended (and the server too if the home still grows); deleting lifts it; a full
disk gives the class its reserve back and puts the largest home over.

Processes of the user ``nobody`` stand in for a student's kernel and server; the hub's own test
(``test_hub_grading.py``) plays the same with a real student.
"""

from __future__ import annotations

import os
import pwd
import subprocess
import time
from pathlib import Path

import pytest
from conftest import require_build

SERVER = "exec -a jupyterhub-singleuser sleep 120"  # the watchdog knows a server by its command line


@pytest.fixture
def student(tmp_path: Path):
    """A home of user ``nobody`` with 2 MiB in it, a 'kernel' and a 'server' of theirs."""
    require_build(None if os.geteuid() == 0 else "ending another user's processes needs root", "sudo")
    from hub import disks

    nobody = pwd.getpwnam("nobody")
    home = tmp_path / "homes" / "nobody"
    home.mkdir(parents=True)
    (home / "work.bin").write_bytes(os.urandom(2 << 20))
    for path in (home, home / "work.bin"):
        os.chown(path, nobody.pw_uid, nobody.pw_gid)
    become = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups"]
    kernel = subprocess.Popen([*become, "sleep", "120"])
    server = subprocess.Popen([*become, "bash", "-c", SERVER])
    time.sleep(0.5)
    try:
        yield disks, home, kernel, server
    finally:
        for process in (kernel, server):
            process.kill()
            process.wait()


def test_over_the_quota_the_kernels_end_and_the_server_stays(student, tmp_path: Path) -> None:
    disks, home, kernel, server = student
    watch = disks.Watch(home.parent, disks.size_of("1M"), tmp_path / "reserve", 0, tmp_path / "disk.log")
    watch.look()
    assert kernel.wait(timeout=10) == -9 and server.poll() is None, "the kernel ended, the server runs"
    (home / "more.bin").write_bytes(os.urandom(1 << 20))  # still growing (an upload, say)
    watch.look()
    assert server.wait(timeout=10) == -9, "a home that still grows: the server ends too"
    for path in home.iterdir():
        path.unlink()
    watch.look()
    log = (tmp_path / "disk.log").read_text()
    assert "nobody: 2 MiB, over the quota of 1 MiB: their kernels ended" in log
    assert "nobody: 3 MiB, over the quota of 1 MiB: everything of theirs ended" in log
    assert log.rstrip().endswith("nobody: under the quota again")


def test_a_full_disk_gives_the_reserve_back(student, tmp_path: Path) -> None:
    disks, home, kernel, server = student
    reserve = tmp_path / "reserve"
    assert disks.make_reserve(reserve, disks.size_of("4M"))
    assert reserve.stat().st_blocks * 512 >= 4 << 20, "allocated, not sparse"
    everything = disks.size_of("1000000G")  # as quota: nobody is over; as free space: any disk is under
    watch = disks.Watch(home.parent, everything, reserve, everything, tmp_path / "disk.log")
    watch.look()
    assert not reserve.exists() and kernel.wait(timeout=10) == -9 and server.poll() is None
    assert "the reserve is given back; nobody has the largest home" in (tmp_path / "disk.log").read_text()


def test_a_students_files_in_a_shared_folder_count_too(student, tmp_path: Path) -> None:
    """Files of theirs in a folder every account may write (/tmp, the exchange) count to their quota."""
    disks, home, kernel, _server = student
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "hidden.bin").write_bytes(os.urandom(2 << 20))
    os.chown(shared / "hidden.bin", pwd.getpwnam("nobody").pw_uid, -1)
    (home / "work.bin").unlink()  # the home itself is empty now
    log = tmp_path / "disk.log"
    watch = disks.Watch(home.parent, disks.size_of("1M"), tmp_path / "reserve", 0, log, (tmp_path,))
    watch.look()  # the shared folder holds the homes too: they are not counted twice
    assert kernel.wait(timeout=10) == -9
    assert "nobody: 2 MiB, over the quota of 1 MiB: their kernels ended" in log.read_text()
