"""The Zero to JupyterHub ``config.yaml`` of the classroom hub, from the settings of ``settings.py``.

    python tools/hub/z2jh.py > config.yaml

The instructor's guide shows this file (``tests/site/test_hub.py`` checks that it is the same); the
local hub of ``make hub`` reads the same settings in ``jupyterhub_config.py``. The image, the
authenticator and the address are the teacher's own (the guide says which).
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from settings import CULL, HUB, MEMORY_LIMIT, SPAWNER

#: The image of the guide's "The image" (repo2docker from binder/), at its registry.
IMAGE = {"name": "registry.example.org/attention-lessons", "tag": "2026-11"}


def config() -> dict[str, object]:
    """The ``config.yaml`` values of a Zero to JupyterHub deployment of the classroom hub."""
    return {
        "hub": {"config": {"JupyterHub": dict(HUB), "Spawner": {"args": SPAWNER["args"]}}},
        "singleuser": {
            "image": dict(IMAGE),
            "defaultUrl": SPAWNER["default_url"],
            "memory": {"limit": MEMORY_LIMIT, "guarantee": MEMORY_LIMIT},
        },
        "cull": {"enabled": True, **CULL},
    }


if __name__ == "__main__":
    print(yaml.safe_dump(config(), sort_keys=False), end="")
