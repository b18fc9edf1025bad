"""The classroom hub's servers' own settings (the hub puts this folder on ``JUPYTER_CONFIG_PATH``).

Saves are atomic (``atomic_contents.py``): a server killed mid-save leaves the old notebook or the
new one, never half of one. A student's server also reads ``student/``, which turns off nbgrader's
teacher's tools (the formgrader, *Create Assignment*, the course list): a student sees the
*Assignments* tab only.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from atomic_contents import AtomicContentsManager

c = get_config()  # noqa: F821 (Jupyter's config loader provides it)
c.ServerApp.contents_manager_class = AtomicContentsManager
