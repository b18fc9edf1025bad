"""The classroom hub of ``make hub``: JupyterHub with one account and one system user per student.

Run it as root with ``jupyterhub -f tools/hub/jupyterhub_config.py`` (``sudo make hub`` does). Its
settings for the students' servers, the restart behaviour and the idle culler are those of
``settings.py``, shared with the guide's Zero to JupyterHub ``config.yaml`` (``z2jh.py``). What is
local to this machine is set here from the environment:

``ATTN_HUB_DIR``        the hub's state: database, cookie secret, password sheet, the students'
                        homes (``homes/<name>``), nbgrader's exchange; default
                        ``/var/lib/attention-lessons-hub`` (root), else
                        ``~/.local/share/attention-lessons-hub``: never under ``build/``
``ATTN_HUB_IP``         the address it listens on; default 127.0.0.1 (this machine only)
``ATTN_HUB_PORT``       its port; default 8000
``ATTN_HUB_CERT``, ``ATTN_HUB_KEY``  a TLS certificate and its key (PEM): the hub speaks HTTPS;
                        required for any address but 127.0.0.1, where passwords would otherwise
                        cross the classroom's network in the clear
``ATTN_HUB_API_PORT``   the hub's own port on 127.0.0.1 (the proxy and servers talk to it); 8081
``ATTN_HUB_ROSTER``     a text file of the students' account names, one a line; without it
                        ``ATTN_HUB_STUDENTS`` accounts ``student01`` … (default 30)
``ATTN_HUB_TEACHER``    the teacher's account name, an administrator; default ``teacher``
``ATTN_HUB_USER_PREFIX``  a prefix of the system users' names (tests: ``attn-1a2b-student01``);
                        default none: the system user is the account's name, which nbgrader
                        records as the student's id
``ATTN_HUB_PYTHON``     the interpreter of the students' servers (default: the hub's own)
``ATTN_HUB_CULL_TIMEOUT``, ``ATTN_HUB_CULL_EVERY``  the idle culler's seconds, for tests

Accounts (``accounts.py``): NativeAuthenticator, each account with its own random password, made
at the first start and listed in ``<state>/passwords.csv`` (mode 0600) for the teacher to hand
out. Servers (``spawner.py``): each student's server runs as the student's own system user, home
0700, with the memory limit of ``settings.py`` enforced per process. The hub's files (database,
cookie secret, password sheet) are the hub's user's alone (umask 077); the environment and the
repository the servers run are not writable by the students' users. nbgrader reads
``tools/grading/nbgrader_config.py`` with this hub's exchange, ``<state>/exchange`` (mode
1777: writable by all, as nbgrader's documentation asks, and sticky, so that no student renames
the course's folder; nbgrader sets its folders' modes: a student can submit but not read another's
submission), and the course ``COURSE_ID``; the teacher's course folder is ``~/attention-grading``
in the teacher's home. JupyterLab reads
``binder/jupyterlab-settings/overrides.json`` (no news prompt), as the image does.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: the spawner imports hub.limits
sys.path.insert(0, str(Path(__file__).resolve().parent))

from accounts import ClassroomAuthenticator
from disks import make_reserve, size_of
from settings import AUTH, COURSE_ID, CULL, HOME_LIMIT, HUB, MEMORY_LIMIT, RESERVE, SPAWNER, TEACHER, THREADS
from spawner import ClassroomSpawner, blocked_for_others

c = get_config()  # noqa: F821 (JupyterHub's config loader provides it)

ROOT = Path(__file__).resolve().parents[2]
# The students' servers and kernels run this interpreter: that of `make lab`, which runs the hub,
# or ATTN_HUB_PYTHON, one with the same packages where that one is in a private home folder.
PYTHON = Path(os.environ.get("ATTN_HUB_PYTHON") or sys.executable)
AS_ROOT = os.getuid() == 0


def _default_state() -> Path:
    if AS_ROOT:
        return Path("/var/lib/attention-lessons-hub")
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "attention-lessons-hub"


os.umask(0o077)  # the hub's database, cookie secret and password sheet: the hub's user's alone
STATE = Path(os.environ.get("ATTN_HUB_DIR") or _default_state()).resolve()
if STATE.is_relative_to(ROOT / "build"):
    raise SystemExit(f"ATTN_HUB_DIR={STATE} is under build/, which `rm -rf build` deletes")
for folder, mode in ((STATE, 0o711), (STATE / "homes", 0o711)):
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(mode)  # the students' users pass through to their own homes, and list nothing
EXCHANGE = STATE / "exchange"
EXCHANGE.mkdir(exist_ok=True)
EXCHANGE.chmod(0o1777)  # sticky: no student renames the course's folder or another's

# Where students connect: 127.0.0.1, or the classroom's network with TLS.
ip = os.environ.get("ATTN_HUB_IP") or "127.0.0.1"
cert, key = os.environ.get("ATTN_HUB_CERT"), os.environ.get("ATTN_HUB_KEY")
if bool(cert) != bool(key):
    raise SystemExit("ATTN_HUB_CERT and ATTN_HUB_KEY go together: the certificate and its key")
if not cert and ip != "127.0.0.1":
    raise SystemExit(f"ATTN_HUB_IP={ip} needs TLS: set ATTN_HUB_CERT and ATTN_HUB_KEY (PEM files)")
for path in filter(None, (cert, key)):
    if not Path(path).is_file():
        raise SystemExit(f"no such certificate or key file: {path}")
port = int(os.environ.get("ATTN_HUB_PORT", 8000))
c.JupyterHub.bind_url = f"{'https' if cert else 'http'}://{ip}:{port}"
if cert:
    c.JupyterHub.ssl_cert, c.JupyterHub.ssl_key = cert, key

# The hub, the proxy's API and the servers on 127.0.0.1; the proxy from npm (package-lock.json).
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(os.environ.get("ATTN_HUB_API_PORT", 8081))
c.ConfigurableHTTPProxy.command = [str(ROOT / "node_modules" / ".bin" / "configurable-http-proxy")]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{c.JupyterHub.hub_port + 1}"
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
for name, value in HUB.items():
    setattr(c.JupyterHub, name, value)

# Accounts: one per student with a password of its own, and the teacher's (accounts.py).
if os.environ.get("ATTN_HUB_ROSTER"):
    roster_file = Path(os.environ["ATTN_HUB_ROSTER"])
    roster = [line.strip() for line in roster_file.read_text(encoding="utf-8").splitlines()]
    roster = [name for name in roster if name and not name.startswith("#")]
else:
    roster = [f"student{i:02d}" for i in range(1, int(os.environ.get("ATTN_HUB_STUDENTS", 30)) + 1)]
c.JupyterHub.authenticator_class = ClassroomAuthenticator
c.ClassroomAuthenticator.roster = roster
c.ClassroomAuthenticator.teacher = os.environ.get("ATTN_HUB_TEACHER", TEACHER)
c.ClassroomAuthenticator.sheet = str(STATE / "passwords.csv")
for name, value in AUTH.items():
    setattr(c.ClassroomAuthenticator, name, value)

# Every student's server: `jupyterhub-singleuser` of this environment (the pins of `make lab`, with
# nbgitpuller and nbgrader), as the student's own system user, in their home under the state folder.
if AS_ROOT:
    for needed, run in ((PYTHON, True), (ROOT / "attnlib" / "__init__.py", False)):
        if blocked := blocked_for_others(needed, run=run):
            raise SystemExit(
                f"the students' users cannot reach {needed}: {blocked} is closed to other users "
                "(chmod o+x for a folder; or install Python and the repository outside a "
                "private home folder, or point ATTN_HUB_PYTHON at an interpreter they can run)"
            )
    c.JupyterHub.spawner_class = ClassroomSpawner
    c.ClassroomSpawner.homes = str(STATE / "homes")
    c.ClassroomSpawner.user_prefix = os.environ.get("ATTN_HUB_USER_PREFIX", "")
else:  # a try-out without root: every server runs as the teacher's own user (see the guide)
    print("not root: every student's server runs as this user; a class needs `sudo make hub`")
    c.JupyterHub.spawner_class = "simple"
    c.SimpleLocalProcessSpawner.home_dir_template = str(STATE / "homes" / "{username}")
c.Spawner.cmd = [str(PYTHON), "-m", "jupyterhub.singleuser"]
c.Spawner.env_keep = ["PATH", "PYTHONPATH", "LD_LIBRARY_PATH", "LANG", "LC_ALL", "JUPYTERHUB_SINGLEUSER_APP"]
# nbgrader's settings (tools/grading/nbgrader_config.py): this hub's exchange and course.
c.Spawner.environment = {
    "JUPYTER_CONFIG_PATH": os.pathsep.join(str(ROOT / "tools" / part) for part in ("grading", "hub/server")),
    "ATTN_EXCHANGE": str(EXCHANGE),
    "ATTN_COURSE_ID": COURSE_ID,
    **THREADS,
}
c.Spawner.mem_limit = MEMORY_LIMIT  # enforced per process by ClassroomSpawner
c.Spawner.start_timeout = 300  # a class logging in at once on two cores
c.Spawner.http_timeout = 180
for name, value in SPAWNER.items():
    setattr(c.Spawner, name, value)
# JupyterLab's settings of the image (binder/jupyterlab-settings: no news prompt, no update check).
c.Spawner.args = [*SPAWNER["args"], f"--LabApp.app_settings_dir={ROOT / 'binder' / 'jupyterlab-settings'}"]

# The idle culler as a hub service, with only the permissions it needs.
cull_timeout = int(os.environ.get("ATTN_HUB_CULL_TIMEOUT", CULL["timeout"]))
cull_every = int(os.environ.get("ATTN_HUB_CULL_EVERY", CULL["every"]))
c.JupyterHub.services = [
    {
        "name": "idle-culler",
        "command": [
            sys.executable,
            "-m",
            "jupyterhub_idle_culler",
            f"--timeout={cull_timeout}",
            f"--cull-every={cull_every}",
        ],
    }
]
# The disk watchdog (disks.py): a quota per student's home, and a reserve the class gets back when
# the disk fills. As root only: it limits the students' processes.
if AS_ROOT:
    quota = os.environ.get("ATTN_HUB_HOME_LIMIT", HOME_LIMIT)
    reserve = STATE / "reserve"
    if not make_reserve(reserve, size_of(RESERVE)):
        print(f"the disk has less than twice {RESERVE} free: no reserve for the class")
    c.JupyterHub.services.append(
        {
            "name": "disk-watch",
            "command": [
                sys.executable,
                str(Path(__file__).resolve().parent / "disks.py"),
                *("--homes", str(STATE / "homes"), "--quota", quota, "--reserve-file", str(reserve)),
                *("--every", os.environ.get("ATTN_HUB_DISK_EVERY", "5"), "--log", str(STATE / "disk.log")),
                *(part for shared in ("/tmp", "/var/tmp", str(EXCHANGE)) for part in ("--shared", shared)),
            ],
        }
    )
c.JupyterHub.load_roles = [
    {
        "name": "idle-culler",
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
        "services": ["idle-culler"],
    }
]
