"""The grading sandbox: a submission's code runs as nobody the class knows, sees nothing of theirs,
reaches no network, and ends, all of it, when its time is up.

>>> with Sandbox(budget_s=60) as box:                       # doctest: +SKIP
...     box.request({"op": "exec", "code": "def double(x):\\n    return 2 * x"})
...     box.request({"op": "call", "function": "double", "args": codec.encode((21,))})

How, on Linux, as root (the only user who can hand a process to another account; ``sudo``):

- ``unshare`` gives the submission its own **network** (no interface but a loopback that is down:
  no network at all), **mount** table and **process** numbers (it sees only its own processes, and
  when the sandbox ends, the kernel ends every process in it, whatever it forked or detached);
- in its mount table, every filesystem of the machine is read-only, and an empty ``tmpfs`` covers
  the folders where anyone's files live: this repository, every home, ``/root``, ``/srv``
  (nbgrader's exchange), ``/var/tmp``, ``/dev/shm``, ``/run``, ``/mnt``, ``/media`` and the
  folders the caller names (the course folder, the exchange, the hub's state); the Python
  environment comes back read-only; ``/tmp`` is a private scratch folder of 64 MiB, the only place
  it can write;
- ``setpriv`` then becomes the sandbox account ``attn-sandbox`` (made here, with no home and no
  login), with no supplementary groups, no capabilities and no way to gain privileges again;
- limits (``setrlimit``): address space, CPU time, processes, open files, file size, no core
  files; and a wall-clock budget for the **whole** submission, after which the sandbox is killed;
- a clean environment (no token, no ``HOME`` but the scratch folder, no IPython profile), and
  ``python -I -S`` runs ``worker.py``.

What it does not do: it does not cap the memory of the sandbox as a whole (a cgroup would;
the limits are per process, with few processes allowed), and it leaves readable what every account
of the machine may read (``/usr``, ``/etc``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pwd
import resource
import select
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
ACCOUNT = "attn-sandbox"
#: Where the sandbox's own mount table stages what it brings back (an empty folder on the host).
STAGE = Path("/var/lib/attn-sandbox")
#: Folders every sandbox hides (besides this repository and the caller's).
HIDDEN = ("/home", "/root", "/srv", "/var/tmp", "/dev/shm", "/run", "/mnt", "/media")
#: Per-process limits: address space, CPU seconds, processes (threads count), open files, file size.
LIMITS = {
    resource.RLIMIT_AS: 1536 * 2**20,
    resource.RLIMIT_CPU: 60,
    resource.RLIMIT_NPROC: 4,
    resource.RLIMIT_NOFILE: 64,
    resource.RLIMIT_FSIZE: 16 * 2**20,
    resource.RLIMIT_CORE: 0,
}
#: The most one reply may hold.
MAX_REPLY = 16 * 2**20


class SandboxError(RuntimeError):
    """The sandbox cannot start (not root, no ``unshare``), or the submission ran out of time or died."""


def require() -> None:
    """:class:`SandboxError`, saying what to do, where no sandbox can start (not root, no util-linux)."""
    if os.geteuid() != 0:
        raise SandboxError(
            "grading runs each submission in a sandbox as another account, which only root can "
            "start: run the grading step with sudo (the instructor's guide, 'A graded week')"
        )
    if not shutil.which("unshare") or not shutil.which("setpriv"):
        raise SandboxError("grading needs unshare and setpriv (util-linux)")


def account() -> tuple[int, int]:
    """The sandbox account's uid and gid, made on first use (a system user: no home, no login)."""
    try:
        entry = pwd.getpwnam(ACCOUNT)
    except KeyError:
        subprocess.run(
            [
                "useradd",
                "--system",
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/usr/sbin/nologin",
                ACCOUNT,
            ],
            check=True,
            capture_output=True,
        )
        entry = pwd.getpwnam(ACCOUNT)
    return entry.pw_uid, entry.pw_gid


def _limits() -> None:
    """The limits, set in the child before ``unshare`` starts (they pass to every process after)."""
    for limit, value in LIMITS.items():
        resource.setrlimit(limit, (value, value))


def _script(uid: int, gid: int, hidden: list[Path]) -> str:
    """The shell lines that build the sandbox's mount table as root, then become the account."""
    pythons = sorted({Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()})
    quote = shlex.quote
    staged = [STAGE / f"python{number}" for number in range(len(pythons))]
    lines = [
        "set -e",
        "mount --make-rprivate /",
        f"mount -t tmpfs -o size=1m,mode=755 tmpfs {quote(str(STAGE))}",
        f"mkdir {' '.join(quote(str(folder)) for folder in [*staged, STAGE / 'grader'])}",
        *(
            f"mount --bind {quote(str(python))} {quote(str(stage))}"
            for python, stage in zip(pythons, staged, strict=True)
        ),
        f"cp {quote(str(HERE / 'worker.py'))} {quote(str(HERE / 'codec.py'))} {quote(str(STAGE / 'grader'))}",
    ]
    # Every filesystem of the machine read-only in this mount table: no world-writable folder anywhere
    # (a crash folder, a data disk) takes the submission's files.
    lines.append(
        "awk '{print $5}' /proc/self/mountinfo | sort -u | "
        'while read -r point; do mount -o remount,bind,ro "$point" 2>/dev/null || true; done'
    )
    for folder in sorted({str(Path(p).resolve()) for p in hidden}):
        hide = f"mount -t tmpfs -o size=1m,mode=755 tmpfs {quote(folder)}"
        lines.append(f"if [ -d {quote(folder)} ]; then {hide}; fi")
    lines += [
        "mount -t tmpfs -o size=64m,mode=755 tmpfs /tmp",
        f"mkdir /tmp/work && chown {uid}:{gid} /tmp/work",
    ]
    for python, stage in zip(
        pythons, staged, strict=True
    ):  # the Python environment, back where it was, read-only
        lines += [
            f"mkdir -p {quote(str(python))}",
            f"mount --move {quote(str(stage))} {quote(str(python))}",
            f"mount -o remount,bind,ro {quote(str(python))}",
        ]
    for folder in sorted({str(Path(p).resolve()) for p in hidden}):  # the empty folders read-only too
        lines.append(f"if mountpoint -q {quote(folder)}; then mount -o remount,ro {quote(folder)}; fi")
    lines += [
        "cd /tmp/work",
        " ".join(
            [
                f"exec setpriv --reuid={uid} --regid={gid} --clear-groups --no-new-privs",
                "--inh-caps=-all --bounding-set=-all --",
                "env -i HOME=/tmp/work TMPDIR=/tmp/work PATH=/usr/bin:/bin LANG=C.UTF-8",
                "OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 MPLBACKEND=Agg",
                quote(os.path.abspath(sys.executable)),
                "-I -S",
                quote(str(STAGE / "grader" / "worker.py")),
            ]
        ),
    ]
    return "\n".join(lines)


def processes(uid: int) -> list[int]:
    """The processes of account ``uid`` (on this machine, in any namespace)."""
    return [p.pid for p in psutil.process_iter(["uids"]) if p.info["uids"] and p.info["uids"].real == uid]


def end_all(uid: int, gid: int, wait_s: float = 10.0) -> None:
    """Kill every process of the sandbox account (whatever escaped its group), and wait until none is left."""
    deadline = time.monotonic() + wait_s
    while processes(uid):
        as_account = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
        subprocess.run([*as_account, "kill", "-KILL", "-1"])
        if time.monotonic() > deadline:
            raise SandboxError(f"processes of {ACCOUNT} outlived their sandbox: {processes(uid)}")
        time.sleep(0.05)


class Sandbox:
    """One submission's sandbox: a worker process to send requests to, for at most ``budget_s`` in all.

    Parameters
    ----------
    budget_s : float
        Wall-clock seconds for the whole submission, from the start; then it is killed.
    hidden : list of paths
        More folders to hide (the course folder, the exchange, the hub's state).
    """

    def __init__(self, budget_s: float, hidden: list[Path] = ()) -> None:
        require()
        self.budget_s = budget_s
        self.hidden = [ROOT, *map(Path, HIDDEN), *map(Path, hidden)]
        self.process: subprocess.Popen | None = None
        self.ended: str | None = None
        self.expired = False
        self._buffer = b""
        self._next_id = 0

    def __enter__(self) -> Sandbox:
        uid, gid = account()
        STAGE.mkdir(mode=0o755, parents=True, exist_ok=True)
        # One sandbox at a time on this machine: its account's processes are counted and ended together.
        self._lock = open(STAGE.with_suffix(".lock"), "w")  # held until close
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        self.deadline = time.monotonic() + self.budget_s
        # At the deadline every process of the account ends, whatever the grader is waiting on
        # (a reply, or a write to a submission that stopped reading).
        self._timer = threading.Timer(self.budget_s, self._expire, args=(uid, gid))
        self._timer.daemon = True
        self.process = subprocess.Popen(
            [
                "unshare",
                "--net",
                "--mount",
                "--pid",
                "--fork",
                "--kill-child",
                "--mount-proc",
                "sh",
                "-c",
                _script(uid, gid, self.hidden),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"},
            preexec_fn=_limits,
            start_new_session=True,
        )
        self._timer.start()
        return self

    def _expire(self, uid: int, gid: int) -> None:
        self.expired = True
        process = self.process
        if process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        end_all(uid, gid)

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the sandbox and every process in it."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)  # unshare dies; --kill-child ends its namespace
        if self.process is not None:
            self._timer.cancel()
            self._timer.join()  # an expiry under way finishes first
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
                stream.close()
            end_all(*account())
            self.process = None
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()

    def _end(self, why: str) -> SandboxError:
        self.ended = why
        self.close()
        return SandboxError(why)

    def request(self, message: dict) -> dict:
        """Send one request; its reply. :class:`SandboxError` once the budget is spent or the
        submission's process has died (and for every request after)."""
        if self.ended:
            raise SandboxError(self.ended)
        self._next_id += 1
        try:
            self.process.stdin.write((json.dumps({"id": self._next_id, **message}) + "\n").encode())
            self.process.stdin.flush()
        except BrokenPipeError:
            raise self._end(self._death()) from None
        line = self._read_line()
        try:
            reply = json.loads(line)
        except ValueError:
            raise self._end("the submission's process answered something unreadable") from None
        if not isinstance(reply, dict) or reply.get("id") != self._next_id:
            raise self._end("the submission's process answered out of turn")
        return reply

    def _read_line(self) -> bytes:
        stdout = self.process.stdout
        while b"\n" not in self._buffer:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise self._end(f"the notebook ran past its {self.budget_s:g} s")
            ready, _, _ = select.select([stdout], [], [], left)
            if not ready:
                continue
            chunk = os.read(stdout.fileno(), 1 << 20)
            if not chunk:
                raise self._end(self._death())
            self._buffer += chunk
            if len(self._buffer) > MAX_REPLY:
                raise self._end(f"the submission answered more than {MAX_REPLY >> 20} MiB")
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def _death(self) -> str:
        """Why the sandbox's process ended, in words."""
        code = self.process.wait()
        if self.expired:
            return f"the notebook ran past its {self.budget_s:g} s"
        errors = self.process.stderr.read().decode(errors="replace").strip()
        if code == -signal.SIGKILL or code == 128 + signal.SIGKILL or code == 137:
            return "the notebook's process was killed (a limit of memory, CPU time or processes)"
        if code == 128 + signal.SIGXCPU or code == -signal.SIGXCPU:
            return f"the notebook used more than {LIMITS[resource.RLIMIT_CPU]} s of CPU time"
        tail = f": {errors.splitlines()[-1]}" if errors else ""
        return f"the notebook's process ended itself (exit status {code}){tail}"
