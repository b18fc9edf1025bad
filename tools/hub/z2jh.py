"""The Zero to JupyterHub ``config.yaml`` of the classroom hub, from the settings of ``settings.py``.

    python tools/hub/z2jh.py > config.yaml

The instructor's guide shows this file (``tests/site/test_hub.py`` checks that it is the same); the
local hub of ``make hub`` reads the same settings in ``jupyterhub_config.py``. What the local hub
does with system users and files, this does with Kubernetes:

* accounts: NativeAuthenticator (in Zero to JupyterHub's hub image), sign-up approved by the
  teacher (an administrator) at ``/hub/authorize``; each student sets their own password;
* HTTPS: the proxy's Let's Encrypt certificate for the hub's address;
* each student's server in a container of its own (their files on their own volume), with the
  memory limit and the processor share that ``sizing.py`` measured for one server's class;
* nbgrader's exchange: the ngshare service (a hub service with its own database; every container
  runs as the same user, so nbgrader's shared exchange folder could not keep submissions apart).

The image, the address and the contact e-mail are the teacher's own (the guide says which).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from settings import AUTH, COURSE_ID, CULL, HUB, MEMORY_LIMIT, SPAWNER, TEACHER, THREADS
from sizing import CLASS_SIZE, runs, sizing

#: The image of the guide's "The image" (repo2docker from binder/), at its registry.
IMAGE = {"name": "registry.example.org/attention-lessons", "tag": "2026-11"}
#: The hub's address (a DNS name pointing at the proxy's public IP) and who Let's Encrypt writes to.
HOST, CONTACT = "hub.example.org", "teacher@example.org"
#: ngshare's address inside the cluster (its Helm chart's default service, namespace ``default``).
NGSHARE = "http://proxy-public.default.svc.cluster.local/services/ngshare"
#: The cores of the server the classroom benchmark ran on.
BENCHMARK_CORES = 2


def cpu_guarantee() -> float:
    """A student's share of a core: the benchmark server's cores over the fewest students it held
    on a lesson (a lesson whose *Run All* takes one student alone past the target, lesson 16's, is
    not a share of a core: the guide has it run before class)."""
    held = min(size.students for size in map(sizing, runs().values()) if size.students)
    return math.ceil(100 * BENCHMARK_CORES / held) / 100


def memory_guarantee() -> str:
    """What Zero to JupyterHub reserves for each student: the most memory a student took on any
    lesson measured (kernel and server), rounded up to half a GiB, so a day on any lesson holds."""
    most = max(sizing(found).mib_per_student for found in runs().values())
    return f"{math.ceil(most / 512) / 2:g}G"


def config() -> dict[str, object]:
    """The ``config.yaml`` values of a Zero to JupyterHub deployment of the classroom hub."""
    nbgrader = (
        "from ngshare_exchange import configureExchange\n"
        "c = get_config()\n"
        f"configureExchange(c, {NGSHARE!r})\n"
        f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
    )
    return {
        "hub": {
            "config": {
                "JupyterHub": {**HUB, "authenticator_class": "nativeauthenticator.NativeAuthenticator"},
                "Authenticator": {"admin_users": [TEACHER]},
                "NativeAuthenticator": {"open_signup": False, **AUTH},
                "Spawner": {"args": SPAWNER["args"], "disable_user_config": SPAWNER["disable_user_config"]},
            }
        },
        "proxy": {"https": {"enabled": True, "hosts": [HOST], "letsencrypt": {"contactEmail": CONTACT}}},
        "singleuser": {
            "image": dict(IMAGE),
            "defaultUrl": SPAWNER["default_url"],
            "extraEnv": dict(THREADS),
            "memory": {"limit": MEMORY_LIMIT, "guarantee": memory_guarantee()},
            "cpu": {"guarantee": cpu_guarantee(), "limit": 1},
            "extraFiles": {
                "nbgrader": {"mountPath": "/etc/jupyter/nbgrader_config.py", "stringData": nbgrader}
            },
        },
        "scheduling": {"userScheduler": {"enabled": True}},
        "cull": {"enabled": True, **CULL},
    }


def class_nodes() -> dict[str, float]:
    """What a class of ``CLASS_SIZE`` students is guaranteed in all: cores and GiB of memory."""
    memory_gib = float(memory_guarantee().removesuffix("G"))
    return {"cores": CLASS_SIZE * cpu_guarantee(), "memory_gib": CLASS_SIZE * memory_gib}


class _Dumper(yaml.SafeDumper):
    """YAML with multi-line strings (the nbgrader configuration) as literal blocks."""


_Dumper.add_representer(
    str,
    lambda dumper, value: dumper.represent_scalar(
        "tag:yaml.org,2002:str", value, style="|" if "\n" in value else None
    ),
)


if __name__ == "__main__":
    print(yaml.dump(config(), Dumper=_Dumper, sort_keys=False), end="")
    nodes = class_nodes()
    print(f"# a class of {CLASS_SIZE}: {nodes['cores']:g} cores, {nodes['memory_gib']:g} GiB guaranteed")
