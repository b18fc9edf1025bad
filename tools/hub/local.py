"""A classroom hub started for a test or a benchmark, and the local repository its link pulls.

``LocalHub`` runs ``jupyterhub -f tools/hub/jupyterhub_config.py`` (the hub of ``make hub``) on
free 127.0.0.1 ports with a state folder of its own; ``lessons_repository`` makes a bare git
repository of the project's committed files, which ``GitServer`` serves and the nbgitpuller link
clones as a hub would clone the project from GitHub; ``students_environment`` gives the students'
system users an interpreter they can run.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import requests
from hub import limits
from hub.accounts import read_sheet
from hub.spawner import blocked_for_others

ROOT = Path(__file__).resolve().parents[2]
CONFIG = Path(__file__).resolve().parent / "jupyterhub_config.py"
JUPYTERHUB = Path(sys.executable).parent / "jupyterhub"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def git(*args: str, cwd: Path) -> str:
    """Run ``git args`` in ``cwd`` (with a fixed author) and return its output; raise on failure."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "teacher", "GIT_AUTHOR_EMAIL": "teacher@example.org"}
    env |= {"GIT_COMMITTER_NAME": "teacher", "GIT_COMMITTER_EMAIL": "teacher@example.org"}
    result = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {cwd}: {result.stderr.strip()}")
    return result.stdout


def lessons_repository(parent: Path, name: str = "attention-lessons") -> tuple[Path, Path]:
    """A bare repository ``parent/name`` holding the project's committed files on branch ``main``.

    Returns ``(bare, work)``: the repository students pull from, and the teacher's clone of it
    (``parent/teacher``), where a fix is committed and pushed.
    """
    bare, work = parent / name, parent / "teacher"
    work.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=work)
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x"], cwd=work, input=archive.stdout, check=True)
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "The lessons", cwd=work)
    git("clone", "-q", "--bare", str(work), str(bare), cwd=parent)
    git("remote", "add", "hub", str(bare), cwd=work)
    return bare, work


def open_folder(prefix: str = "attn-hub-") -> Path:
    """A new folder in /tmp that other users may pass through (0711) but not list.

    The hub's state and the lessons' repository go there: the students' system users must reach
    their homes and clone the repository, which pytest's own temporary folders (0700) forbid.
    """
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    folder.chmod(0o711)
    return folder


class GitServer:
    """``git daemon`` on 127.0.0.1, serving the repositories in ``folder`` read-only (``git://``).

    The students' servers clone the lessons from it as from GitHub: a clone through a ``file://``
    path runs git as the student on a repository another user owns, which git refuses ("dubious
    ownership"); the daemon reads it as its owner.
    """

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [
                *("git", "daemon", "--reuseaddr", "--listen=127.0.0.1", f"--port={self.port}"),
                *(f"--base-path={folder}", "--export-all", str(folder)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.2)
        self.close()
        raise TimeoutError(f"git daemon did not listen on 127.0.0.1:{self.port} within 30 s")

    def url(self, name: str) -> str:
        """The address of the repository ``folder/name``."""
        return f"git://127.0.0.1:{self.port}/{name}"

    def close(self) -> None:
        """Stop the daemon."""
        self.process.terminate()
        self.process.wait(timeout=30)


#: Parts of the base Python's library that no server needs (its tests, its IDE, its own packages).
_UNNEEDED = {"test", "idlelib", "ensurepip", "site-packages", "__pycache__"}


def _link_tree(source: Path, target: Path) -> None:
    """``target`` as a copy of ``source`` made of hard links (no data copied), less ``_UNNEEDED``."""
    for folder, subfolders, files in os.walk(source):
        subfolders[:] = [name for name in subfolders if name not in _UNNEEDED]
        here = target / Path(folder).relative_to(source)
        here.mkdir(parents=True, exist_ok=True)
        here.chmod(0o755)
        for name in files:
            os.link(Path(folder) / name, here / name, follow_symlinks=False)


def students_environment(folder: Path) -> dict[str, str]:
    """The hub's environment for an interpreter the students' users can run; empty if
    ``sys.executable`` already is one.

    Where this environment's base Python lies in a private home (pyenv under ``/root``, mode
    0700), its interpreter, shared library and standard library are linked into ``folder`` (hard
    links: the same files, read-only to the students, reached without passing the private home),
    and a virtual environment of it is made there, whose ``.pth`` adds this environment's
    site-packages, whose ``etc`` and ``share`` are this environment's (Jupyter's extensions,
    kernels, JupyterLab), and whose ``bin`` has this environment's commands, started by it.
    Returns ``ATTN_HUB_PYTHON``, ``PATH`` (those commands first) and ``LD_LIBRARY_PATH`` (the
    linked shared library).
    """
    if blocked_for_others(Path(sys.executable), run=True) is None:
        return {}
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    base, linked = Path(sys.base_prefix), folder / "python-base"
    (linked / "bin").mkdir(parents=True)
    os.link(base / "bin" / version, linked / "bin" / version)
    _link_tree(base / "lib", linked / "lib")
    for made in (linked, linked / "bin"):
        made.chmod(0o755)
    target = folder / "python"
    subprocess.run([str(linked / "bin" / version), "-m", "venv", "--without-pip", str(target)], check=True)
    packages = [p for p in map(Path, sys.path) if p.name == "site-packages" and p.is_dir()]
    site = target / "lib" / version / "site-packages"
    lines = [f"import site; site.addsitedir({str(p)!r})" for p in packages]
    (site / "environment.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for shared in ("etc", "share"):  # Jupyter's configuration and data: the server's extensions
        (target / shared).symlink_to(Path(sys.prefix) / shared)
    # This environment's commands (nbgrader runs `alembic`), started by the new interpreter.
    for script in (Path(sys.prefix) / "bin").iterdir():
        copy = target / "bin" / script.name
        if copy.exists() or not script.is_file():
            continue
        with script.open("rb") as text:
            first = text.readline()
        if first.startswith(f"#!{sys.prefix}/bin/python".encode()):
            copy.write_bytes(f"#!{target / 'bin' / 'python'}\n".encode() + script.read_bytes()[len(first) :])
            copy.chmod(0o755)
    return {
        "ATTN_HUB_PYTHON": str(target / "bin" / "python"),
        "PATH": f"{target / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "LD_LIBRARY_PATH": str(linked / "lib"),
    }


class LocalHub:
    """The hub of ``jupyterhub_config.py`` in its own state folder, on free 127.0.0.1 ports.

    Parameters
    ----------
    state : Path
        The hub's state folder (database, cookie secret, password sheet, the students' homes, the
        exchange); its parents must let other users through (``open_folder``).
    students : int
        How many student accounts (``student01`` …); the teacher's is ``teacher``.
    cull_timeout, cull_every : int or None
        The idle culler's seconds; None keeps those of ``settings.py``.
    cert, key : Path or None
        A TLS certificate and key: the hub speaks HTTPS (on 127.0.0.1).
    environment : dict or None
        More of the hub's environment: the students' interpreter (``students_environment``).
    """

    def __init__(
        self,
        state: Path,
        *,
        students: int,
        cull_timeout: int | None = None,
        cull_every: int | None = None,
        cert: Path | None = None,
        key: Path | None = None,
        environment: dict[str, str] | None = None,
    ) -> None:
        self.state = state
        self.port, self.api_port = free_port(), free_port()
        while self.api_port + 1 == self.port:  # the proxy's API takes api_port + 1
            self.api_port = free_port()
        self.url = f"{'https' if cert else 'http'}://127.0.0.1:{self.port}"
        self.verify: str | bool = str(cert) if cert else True  # requests' verify= for this hub
        # System users of this hub alone (attn-<4 hex>-student01), removed by close().
        self.user_prefix = f"attn-{secrets.token_hex(2)}-"
        self.env = {
            **os.environ,
            "ATTN_HUB_DIR": str(state),
            "ATTN_HUB_PORT": str(self.port),
            "ATTN_HUB_API_PORT": str(self.api_port),
            "ATTN_HUB_STUDENTS": str(students),
            "ATTN_HUB_USER_PREFIX": self.user_prefix,
        }
        for name in ("ATTN_HUB_ROSTER", "ATTN_HUB_TEACHER", "ATTN_HUB_IP", "ATTN_HUB_PYTHON"):
            self.env.pop(name, None)
        self.env |= environment or {}
        if cert and key:
            self.env |= {"ATTN_HUB_CERT": str(cert), "ATTN_HUB_KEY": str(key)}
        self.set_culler(cull_timeout, cull_every)
        self.process: subprocess.Popen | None = None

    @property
    def passwords(self) -> dict[str, str]:
        """Each account's password, from the hub's password sheet."""
        return read_sheet(self.state / "passwords.csv")

    def set_culler(self, timeout: int | None, every: int | None) -> None:
        """The idle culler's seconds for the next start (None: those of ``settings.py``)."""
        for key, value in (("ATTN_HUB_CULL_TIMEOUT", timeout), ("ATTN_HUB_CULL_EVERY", every)):
            if value is None:
                self.env.pop(key, None)
            else:
                self.env[key] = str(value)

    def start(self, timeout: float = 120) -> None:
        """Start the hub and return once its API answers through the proxy."""
        self.state.mkdir(parents=True, exist_ok=True)
        log = open(self.state / "hub.log", "ab")
        self.process = subprocess.Popen(
            [str(JUPYTERHUB), "-f", str(CONFIG)], cwd=self.state, env=self.env, stdout=log, stderr=log
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"the hub exited with {self.process.returncode}: see {self.state / 'hub.log'}"
                )
            try:
                if requests.get(f"{self.url}/hub/api/", timeout=5, verify=self.verify).ok:
                    return
            except requests.ConnectionError:
                pass
            time.sleep(0.5)
        raise TimeoutError(f"the hub did not answer at {self.url} within {timeout} s")

    def stop(self) -> None:
        """Stop the hub process (SIGTERM); the students' servers keep running (cleanup_servers)."""
        if self.process is None:
            return
        start = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
            how = f"exited with {self.process.returncode}"
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            how = "killed: no exit within 60 s of SIGTERM"
        with open(self.state / "hub.log", "a") as log:
            log.write(f"[LocalHub] the hub {how} after {time.monotonic() - start:.1f} s\n")
        self.process = None

    def kill(self) -> None:
        """Kill the hub process (SIGKILL), as a crash would; its proxy and the servers run on."""
        if self.process is None:
            return
        self.process.kill()
        self.process.wait()
        with open(self.state / "hub.log", "a") as log:
            log.write("[LocalHub] the hub was killed (SIGKILL)\n")
        self.process = None

    def processes(self) -> list[psutil.Process]:
        """Every process of this hub: the hub, the proxy, the culler, the servers, their kernels.

        The servers are found by their home folder, the culler by the hub's address (they outlive
        a hub killed or restarted, no longer its children).
        """
        homes = str(self.state / "homes")
        api = f"http://127.0.0.1:{self.api_port}/"  # the services' (the culler's) way to this hub
        found = {}
        for proc in psutil.process_iter(["pid", "cmdline", "environ"]):
            try:
                environ = proc.info["environ"] or {}
                if (
                    environ.get("ATTN_HUB_DIR") == str(self.state)
                    or environ.get("HOME", "").startswith(homes)
                    or environ.get("JUPYTERHUB_API_URL", "").startswith(api)
                ):
                    found[proc.pid] = proc
            except (psutil.Error, TypeError):
                continue
        return list(found.values())

    def close(self) -> None:
        """Stop the hub, end every process it started (servers, kernels), remove its system users."""
        leftovers = self.processes()
        self.stop()
        for proc in leftovers:
            try:
                proc.terminate()
            except psutil.Error:
                continue
        _gone, alive = psutil.wait_procs(leftovers, timeout=10)
        for proc in alive:
            try:
                proc.kill()
            except psutil.Error:
                continue
        with open("/etc/passwd", encoding="utf-8") as users:
            mine = [line.split(":", 1)[0] for line in users if line.startswith(self.user_prefix)]
        for name in mine:
            limits.remove(name)
            subprocess.run(["userdel", name], capture_output=True, check=False)
        subprocess.run(["groupdel", f"{self.user_prefix}class"], capture_output=True, check=False)
