"""Each student's server as that student's own system user, with an enforced memory limit.

``ClassroomSpawner`` is JupyterHub's LocalProcessSpawner (the hub runs as root) with three
additions:

* the account ``<name>`` runs as the system user ``<prefix><name>`` (by default no prefix: the
  system user ``student01``, the name nbgrader records), which the spawner creates on the first
  start (``useradd``, group ``attn-class``, no login shell) with the home folder
  ``<homes>/<name>``, mode 0700: no student reads another's files. A system user of that name
  that the hub did not make (not in the group, or uid 0) is refused, so an account name can never
  run a server as an existing user (``root``, or a person's own account on the server);
* a memory limit per process (``RLIMIT_DATA``, set before the server drops to the student's user,
  so the student cannot raise it): the server and each of its kernels may hold at most
  ``mem_limit`` bytes of data; a kernel that asks for more gets ``MemoryError``, the server and the
  student's other kernels run on;
* a control group per student (``limits.py``) where the machine has them: ``mem_limit`` for all
  the student's processes together (shared memory and ``/dev/shm`` included) and
  ``settings.PROCESS_LIMIT`` processes and threads; when the server stops, every process it left
  is killed and its ``/dev/shm`` files removed;
* its runtime files (the kernels' IPC sockets) in ``/run/attn-hub/<system user>``, 0700;
* the umask of an ordinary login (022) for the server, not the hub's 077.
"""

from __future__ import annotations

import asyncio
import grp
import os
import pwd
import resource
import subprocess
from pathlib import Path

from hub import limits
from hub.settings import PROCESS_LIMIT
from jupyterhub.spawner import LocalProcessSpawner, set_user_setuid
from traitlets import Unicode


def blocked_for_others(path: Path, *, run: bool = False) -> Path | None:
    """The first folder on the way to ``path`` (or ``path`` itself) that another user cannot pass.

    A folder needs the others' execute bit, the file the others' read bit (and execute bit if
    ``run``); None when a student's system user can read (or run) ``path``, links followed.
    """
    path = Path(path).resolve()
    for folder in reversed(path.parents):
        if not folder.stat().st_mode & 0o001:
            return folder
    needed = 0o005 if run else 0o004
    return None if path.stat().st_mode & needed == needed else path


def _run(command: list[str]) -> None:
    """Run an account command (groupadd, useradd); a RuntimeError with its message if it fails."""
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {result.stderr.strip()}")


#: The settings only a student's server reads (``server/student``).
STUDENT_CONFIG = Path(__file__).resolve().parent / "server" / "student"
#: The students' runtime folders (``/run/attn-hub/<system user>``, 0700 each).
RUNTIME = Path("/run/attn-hub")


class ClassroomSpawner(LocalProcessSpawner):
    """LocalProcessSpawner with a system user per account, made by the hub, and a memory limit."""

    user_prefix = Unicode("", config=True, help="The system users' names: prefix + account name.")
    homes = Unicode(config=True, help="The folder of the students' home folders.")

    @property
    def system_user(self) -> str:
        """This account's system user."""
        return f"{self.user_prefix}{self.user.name}"

    @property
    def group(self) -> str:
        """The group of every system user the hub makes (``attn-class``, or ``<prefix>class``)."""
        return f"{self.user_prefix or 'attn-'}class"

    def ensure_system_user(self) -> pwd.struct_passwd:
        """The account's system user and home folder (0700), made if missing; refused if not the hub's."""
        home = Path(self.homes) / self.user.name
        try:
            gid = grp.getgrnam(self.group).gr_gid
        except KeyError:
            _run(["groupadd", self.group])
            gid = grp.getgrnam(self.group).gr_gid
        try:
            entry = pwd.getpwnam(self.system_user)
        except KeyError:
            comment = f"classroom hub account {self.user.name}"
            _run(
                [
                    *("useradd", "--no-create-home", "--home-dir", str(home), "--gid", self.group),
                    *("--shell", "/usr/sbin/nologin", "--comment", comment, self.system_user),
                ]
            )
            entry = pwd.getpwnam(self.system_user)
        if entry.pw_uid == 0 or entry.pw_gid != gid:
            raise PermissionError(
                f"the system user {self.system_user!r} exists and is not one the hub made "
                f"(group {self.group!r}): refusing to start {self.user.name!r}'s server as it"
            )
        if Path(entry.pw_dir) != home:
            raise PermissionError(
                f"the system user {self.system_user!r} has the home {entry.pw_dir}, not {home}: "
                "was the hub's state folder moved? (usermod --home, or a new user_prefix)"
            )
        home.mkdir(parents=True, exist_ok=True)
        os.chown(home, entry.pw_uid, entry.pw_gid)
        home.chmod(0o700)
        # The server's and its kernels' runtime files (the IPC sockets, the connection files with
        # their keys): a short path, since a socket's path is at most 107 bytes, in root's /run, so
        # that no other account can make the folder first.
        RUNTIME.mkdir(mode=0o711, parents=True, exist_ok=True)
        RUNTIME.chmod(0o711)
        runtime = RUNTIME / self.system_user
        runtime.mkdir(exist_ok=True)
        os.chown(runtime, entry.pw_uid, entry.pw_gid)
        runtime.chmod(0o700)
        return entry

    def make_preexec_fn(self, name: str):
        """Limit the memory, then become the account's system user (``name`` is the hub's account)."""
        become = set_user_setuid(self.system_user)
        limit = int(self.mem_limit) if self.mem_limit else resource.RLIM_INFINITY
        group, said = limits.make(self.system_user, limit, PROCESS_LIMIT)
        self.log.info("%s's server: %s", self.user.name, said)

        def preexec() -> None:
            if group is not None:
                group.join()
            resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
            os.umask(0o022)
            become()

        return preexec

    def user_env(self, env: dict[str, str]) -> dict[str, str]:
        """The environment of the system user: ``USER``, ``HOME``, ``SHELL``."""
        entry = pwd.getpwnam(self.system_user)
        env |= {"USER": self.system_user, "HOME": entry.pw_dir, "SHELL": entry.pw_shell}
        env["JUPYTER_RUNTIME_DIR"] = str(RUNTIME / self.system_user)
        if not self.user.admin:  # first on the path: nbgrader's teacher's tools off for a student
            env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
                [str(STUDENT_CONFIG), env.get("JUPYTER_CONFIG_PATH", "")]
            )
        return env

    async def end_leftovers(self) -> None:
        """End every process of the student's control group (waiting until they have exited, off
        the hub's event loop) and remove their ``/dev/shm`` files."""
        try:
            uid = pwd.getpwnam(self.system_user).pw_uid
        except KeyError:  # never started: nothing of theirs to end
            return
        group = limits.find(self.system_user)
        if group is not None and (left := await asyncio.to_thread(group.end)):
            self.log.warning("%s's processes %s would not die", self.user.name, sorted(left))
        limits.remove_shared_memory(uid)

    async def poll(self):
        """The server's exit status (None while it runs); a server found dead is cleared up after."""
        status = await super().poll()
        if status is not None:
            await self.end_leftovers()
        return status

    async def stop(self, now: bool = False):
        """Stop the server, then every process it left behind, and remove its ``/dev/shm`` files."""
        await super().stop(now=now)
        await self.end_leftovers()

    async def start(self):
        """Make the system user if needed, clear what a server that died left (its processes, its
        ``/dev/shm`` files, which its control group still counts), then start the server as it."""
        self.ensure_system_user()
        await self.end_leftovers()
        return await super().start()
