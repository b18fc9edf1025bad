"""The classroom hub of ``make hub``: JupyterHub on 127.0.0.1 with one account per student.

Run it with ``jupyterhub -f tools/hub/jupyterhub_config.py`` (``make hub`` does). Its settings for
the students' servers, the restart behaviour and the idle culler are those of ``settings.py``,
shared with the guide's Zero to JupyterHub ``config.yaml`` (``z2jh.py``). What is local to this
machine is set here from the environment:

``ATTN_HUB_DIR``        the hub's state: database, cookie secret, the shared password, the
                        students' home folders (``homes/<name>``); default ``build/hub``
``ATTN_HUB_PORT``       the address students open, ``http://127.0.0.1:<port>``; default 8000
``ATTN_HUB_API_PORT``   the hub's own port (the proxy and the servers talk to it); default 8081
``ATTN_HUB_STUDENTS``   how many student accounts, ``student01`` …; default 30
``ATTN_HUB_PASSWORD``   the password every account shares; default: made once at random and
                        kept in ``<ATTN_HUB_DIR>/password``
``ATTN_HUB_CULL_TIMEOUT``, ``ATTN_HUB_CULL_EVERY``  the idle culler's seconds, for tests

Authentication here is a test stand-in: DummyAuthenticator, one shared password for the listed
accounts (``teacher``, an admin, and ``student01`` …). A real class uses its institution's
authenticator (OAuth/LTI/LDAP, see the instructor's guide). The spawner, SimpleLocalProcessSpawner,
runs every student's server as the user who runs the hub, each in its own home folder: the hub
refuses one student's requests to another's server, but the operating system does not separate
their files. A real class uses a spawner that does (containers, or one system user per student).
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from settings import CULL, HUB, MEMORY_LIMIT, SPAWNER

c = get_config()  # noqa: F821 (JupyterHub's config loader provides it)

ROOT = Path(__file__).resolve().parents[2]
STATE = Path(os.environ.get("ATTN_HUB_DIR", ROOT / "build" / "hub")).resolve()
STATE.mkdir(parents=True, exist_ok=True)
BIN = Path(sys.executable).parent  # the environment of `make lab`, which runs this hub


def _password() -> str:
    """The shared password: ``ATTN_HUB_PASSWORD``, or one made at random once and kept."""
    if os.environ.get("ATTN_HUB_PASSWORD"):
        return os.environ["ATTN_HUB_PASSWORD"]
    path = STATE / "password"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(12) + "\n")
        path.chmod(0o600)
    return path.read_text().strip()


# The hub, the proxy and the servers, all on 127.0.0.1; the proxy from npm (package-lock.json).
c.JupyterHub.bind_url = f"http://127.0.0.1:{int(os.environ.get('ATTN_HUB_PORT', 8000))}"
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

# Accounts: a test stand-in (see the docstring); a real class uses its institution's authenticator.
students = [f"student{i:02d}" for i in range(1, int(os.environ.get("ATTN_HUB_STUDENTS", 30)) + 1)]
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = _password()
c.Authenticator.allowed_users = set(students)
c.Authenticator.admin_users = {"teacher"}

# Every student's server: `jupyterhub-singleuser` of this environment (the pins of `make lab`, with
# nbgitpuller), started in the student's own home folder under the state directory.
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(STATE / "homes" / "{username}")
c.Spawner.cmd = [str(BIN / "jupyterhub-singleuser")]
c.Spawner.env_keep = ["PATH", "PYTHONPATH", "LANG", "LC_ALL", "JUPYTERHUB_SINGLEUSER_APP"]
c.Spawner.mem_limit = MEMORY_LIMIT  # informative here: the local spawner enforces no limit
c.Spawner.start_timeout = 300  # a class logging in at once on two cores
c.Spawner.http_timeout = 180
for name, value in SPAWNER.items():
    setattr(c.Spawner, name, value)
if os.getuid() == 0:  # Jupyter refuses to run as root unless told (containers often run as root)
    c.Spawner.args = [*SPAWNER["args"], "--allow-root"]

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
c.JupyterHub.load_roles = [
    {
        "name": "idle-culler",
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
        "services": ["idle-culler"],
    }
]
