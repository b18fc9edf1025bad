"""A student's share of the server: one control group for their server and everything it starts.

The per-process limits of ``spawner.py`` (``RLIMIT_DATA``, ``RLIMIT_NPROC``) leave ways round them:
a shared ``mmap`` is not data, three children of 1.5 GiB each are three processes, a file in
``/dev/shm`` belongs to no process. A control group counts them all: ``memory`` caps what the
student's processes hold together, shared pages and ``/dev/shm`` files they wrote included (past
it, the kernel's OOM killer ends the largest of them, usually the kernel that asked), and ``pids``
caps their processes and threads together. When the server stops, every process left in the group
is killed and the student's files in ``/dev/shm`` are removed.

Both cgroup layouts are handled: v2 (``/sys/fs/cgroup/cgroup.controllers``, one tree) and v1 (a
``memory`` and a ``pids`` hierarchy). Where neither can be written (a container without them),
:func:`make` says so and returns no group, and the per-process limits are all there is.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

CGROUPS = Path("/sys/fs/cgroup")
#: The folder of the hub's groups in each hierarchy.
HUB = "attn-hub"


class Group:
    """One student's control group (its folder in each hierarchy)."""

    def __init__(self, folders: list[Path]) -> None:
        self.folders = folders

    def join(self) -> None:
        """Put the calling process in the group (in a spawner's ``preexec_fn``, as root)."""
        for folder in self.folders:
            (folder / "cgroup.procs").write_text(f"{os.getpid()}\n")

    def processes(self) -> set[int]:
        """The processes in the group."""
        found: set[int] = set()
        for folder in self.folders:
            procs = folder / "cgroup.procs"
            if procs.exists():
                found |= {int(line) for line in procs.read_text().split()}
        return found

    def end(self, wait: float = 10.0) -> set[int]:
        """Kill every process in the group and wait, at most ``wait`` seconds, until all have exited.

        A killed process leaves the group only once it has exited, which under the group's memory
        pressure can take a while; one forked meanwhile is killed on the next round. Returns the
        processes still in the group when the time is up (none, unless one is stuck in the kernel).
        """
        deadline = time.monotonic() + wait
        while (left := self.processes()) and time.monotonic() < deadline:
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue
            time.sleep(0.02)
        return left


def _v2(name: str, memory: int, pids: int) -> Group:
    hub = CGROUPS / HUB
    hub.mkdir(exist_ok=True)
    for parent in (CGROUPS, hub):  # the controllers, handed down to the students' groups
        (parent / "cgroup.subtree_control").write_text("+memory +pids\n")
    folder = hub / name
    folder.mkdir(exist_ok=True)
    (folder / "memory.max").write_text(f"{memory}\n")
    if (folder / "memory.swap.max").exists():
        (folder / "memory.swap.max").write_text("0\n")
    (folder / "pids.max").write_text(f"{pids}\n")
    return Group([folder])


def _v1(name: str, memory: int, pids: int) -> Group:
    memory_folder = CGROUPS / "memory" / HUB / name
    pids_folder = CGROUPS / "pids" / HUB / name
    for folder in (memory_folder, pids_folder):
        folder.mkdir(parents=True, exist_ok=True)
    (memory_folder / "memory.limit_in_bytes").write_text(f"{memory}\n")
    (pids_folder / "pids.max").write_text(f"{pids}\n")
    return Group([memory_folder, pids_folder])


def make(name: str, memory: int, pids: int) -> tuple[Group | None, str]:
    """The control group ``name`` with at most ``memory`` bytes and ``pids`` processes and threads.

    Returns the group (None where this machine's control groups cannot be written) and a sentence
    saying which.
    """
    try:
        if (CGROUPS / "cgroup.controllers").exists():
            group = _v2(name, memory, pids)
        elif (CGROUPS / "memory").is_dir() and (CGROUPS / "pids").is_dir():
            group = _v1(name, memory, pids)
        else:
            return None, "no memory and pids control groups on this machine: per-process limits only"
    except OSError as error:
        return None, f"the control groups cannot be written ({error}): per-process limits only"
    return group, f"control group {name}: {memory >> 20} MiB, {pids} processes and threads"


def find(name: str) -> Group | None:
    """The control group ``name`` if it exists (a server started by an earlier run of the hub too)."""
    if (CGROUPS / "cgroup.controllers").exists():
        folders = [CGROUPS / HUB / name]
    else:
        folders = [CGROUPS / "memory" / HUB / name, CGROUPS / "pids" / HUB / name]
    found = [folder for folder in folders if folder.is_dir()]
    return Group(found) if found else None


def remove(name: str) -> None:
    """Remove the control group ``name`` (its processes ended first), where it exists."""
    group = find(name)
    if group is not None:
        if left := group.end():
            raise RuntimeError(f"control group {name}: processes {sorted(left)} would not die")
        for folder in group.folders:
            folder.rmdir()


def remove_shared_memory(uid: int) -> list[Path]:
    """Remove the files of ``uid`` in ``/dev/shm`` (a stopped server's); the paths removed."""
    removed = []
    for path in Path("/dev/shm").iterdir():
        try:
            if path.lstat().st_uid == uid and not path.is_dir():
                path.unlink()
                removed.append(path)
        except FileNotFoundError:
            continue
    return removed
