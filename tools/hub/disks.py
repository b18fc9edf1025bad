"""A disk watchdog for the classroom hub: a quota per student, and a reserve for the class.

A plain server has no per-user quota to give the hub (no ``usrquota`` on the filesystem, too few
loop devices for a disk image per student, and here not even the capability to lower another
process's file-size limit), so this service does the next best thing. Every ``--every`` seconds
(a JupyterHub service of ``jupyterhub_config.py``, as root):

- it measures what each student holds: their home, and their files in the folders every account
  may write (``--shared``: ``/tmp``, ``/var/tmp``, the exchange), links not followed;
- over ``--quota``, every process of the student but their Jupyter server is ended, at each look,
  until the home is back under it: their kernels stop writing, and the file browser, which the
  server serves, still deletes; if the home still grows while over (an upload, through the server),
  the server is ended too;
- the ``--reserve-file`` (made at the hub's start, allocated on the disk) is given back to the
  class when the disk's free space falls under ``--low``: its removal frees room for every
  classmate's saves, and the largest home is treated as over its quota, whatever its size.

What it cannot do: stop a student who writes faster than it looks (between two looks, up to the
free space); the reserve is for that. Each event is a line in ``--log``.

    python tools/hub/disks.py --homes STATE/homes --quota 2G --reserve-file STATE/reserve --log STATE/disk.log
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import psutil

UNITS = {"K": 2**10, "M": 2**20, "G": 2**30}


def size_of(text: str) -> int:
    """Bytes of ``text`` such as ``2G``, ``512M`` or ``1048576``."""
    text = text.strip().upper()
    return int(float(text[:-1]) * UNITS[text[-1]]) if text[-1:] in UNITS else int(text)


def usage(folder: Path, skip: Path | None = None) -> dict[int, int]:
    """The bytes of disk that the files under ``folder`` hold, by owner (links not followed, one
    filesystem, the folder ``skip`` left out)."""
    owners: dict[int, int] = {}
    device = folder.lstat().st_dev
    stack = [folder]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                status = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            owners[status.st_uid] = owners.get(status.st_uid, 0) + status.st_blocks * 512
            if entry.is_dir(follow_symlinks=False) and status.st_dev == device and Path(entry.path) != skip:
                stack.append(Path(entry.path))
    return owners


def processes(uid: int) -> list[int]:
    """The processes of account ``uid`` (on this machine, in any namespace)."""
    return [p.pid for p in psutil.process_iter(["uids"]) if p.info["uids"] and p.info["uids"].real == uid]


def is_server(pid: int) -> bool:
    """Whether process ``pid`` is a student's Jupyter server (``jupyterhub-singleuser``)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return False
    return b"jupyterhub.singleuser" in command or b"jupyterhub-singleuser" in command


def end_writers(uid: int, server_too: bool) -> list[int]:
    """Kill every process of ``uid`` but their server (and it too, with ``server_too``); the pids killed."""
    killed = []
    for pid in processes(uid):
        if server_too or not is_server(pid):
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except ProcessLookupError:
                continue
    return killed


def running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie, killed and not yet reaped, does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def gone(pids: list[int], timeout: float) -> None:
    """Wait until none of ``pids`` runs any more (a killed process ends within milliseconds), at
    most ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while any(running(pid) for pid in pids) and time.monotonic() < end:
        time.sleep(0.02)


def make_reserve(path: Path, size: int) -> bool:
    """Hold ``size`` bytes of the disk in ``path`` (allocated, not sparse), where the disk has twice
    that free; whether it is there."""
    if path.exists():
        return True
    if shutil.disk_usage(path.parent).free < 2 * size:
        return False
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        os.posix_fallocate(descriptor, 0, size)
    finally:
        os.close(descriptor)
    return True


class Watch:
    """The watchdog's state: whose homes are over (their owners' uids, with the size last seen)."""

    def __init__(
        self, homes: Path, quota: int, reserve_file: Path, low: int, log: Path, shared: tuple[Path, ...] = ()
    ) -> None:
        self.homes, self.quota, self.reserve_file, self.low, self.log = homes, quota, reserve_file, low, log
        self.shared = shared
        self.over: dict[int, int] = {}

    def say(self, line: str) -> None:
        with self.log.open("a", encoding="utf-8") as out:
            out.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}\n")

    def look(self) -> None:
        """One look at every home and at the disk, and what follows."""
        elsewhere: dict[int, int] = {}  # what each student holds in the shared folders (/tmp, ...)
        for folder in self.shared:
            if folder.is_dir():
                for uid, size in usage(folder, skip=self.homes).items():  # homes are counted below
                    elsewhere[uid] = elsewhere.get(uid, 0) + size
        homes = {}
        for home in sorted(p for p in self.homes.iterdir() if p.is_dir() and not p.is_symlink()):
            uid = home.lstat().st_uid
            if uid != 0:
                homes[uid] = (home.name, sum(usage(home).values()) + elsewhere.get(uid, 0))
        over = {uid for uid, (_, size) in homes.items() if size > self.quota}
        if homes and shutil.disk_usage(self.homes).free < self.low:
            largest = max(homes, key=lambda uid: homes[uid][1])
            over.add(largest)
            if self.reserve_file.exists():
                self.reserve_file.unlink()
                self.say(
                    f"the disk is full: the reserve is given back; {homes[largest][0]} has the largest home"
                )
        for uid in set(self.over) - over:
            self.say(f"{homes.get(uid, (uid,))[0]}: under the quota again")
        seen = {}
        for uid in sorted(over):
            name, size = homes[uid]
            growing = uid in self.over and size > self.over[uid]
            killed = end_writers(uid, server_too=growing)
            if uid not in self.over or killed:
                what = "everything of theirs" if growing else "their kernels"
                self.say(f"{name}: {size >> 20} MiB, over the quota of {self.quota >> 20} MiB: {what} ended")
            if killed:  # what a killed writer wrote between the look and its end is not growth after it
                gone(killed, timeout=1.0)
                size = sum(usage(self.homes / name).values()) + elsewhere.get(uid, 0)
            seen[uid] = size
        self.over = seen


def main(argv: list[str]) -> int:
    """Look every ``--every`` seconds, for ever."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--homes", type=Path, required=True)
    parser.add_argument("--quota", type=size_of, required=True)
    parser.add_argument("--reserve-file", type=Path, required=True)
    parser.add_argument(
        "--low", type=size_of, default=size_of("256M"), help="free space that uses the reserve"
    )
    parser.add_argument("--every", type=float, default=5.0)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--shared", type=Path, action="append", default=[], help="a folder all may write")
    args = parser.parse_args(argv)
    watch = Watch(args.homes, args.quota, args.reserve_file, args.low, args.log, tuple(args.shared))
    while True:
        watch.look()
        time.sleep(args.every)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
