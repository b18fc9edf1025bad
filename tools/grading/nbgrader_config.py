"""nbgrader's settings for this course, the one place they are written.

The teacher's commands (``tools/grading/week.py``, which puts this folder on
``JUPYTER_CONFIG_PATH``) and the students' servers on the hub read this file. Three settings come
from the environment, so that a test or a second course can use folders of its own:

- ``ATTN_GRADING_ROOT``: the course folder (source/, release/, submitted/, autograded/,
  feedback/, the gradebook ``gradebook.db``); ``~/attention-grading`` by default. Never under
  ``build/``, which ``make`` rebuilds: students' submissions and grades live there.
- ``ATTN_EXCHANGE``: the exchange folder that release, fetch, submit, collect and the feedback
  pass through, shared by the teacher and every student on one machine; nbgrader's usual
  ``/srv/nbgrader/exchange`` by default.
- ``ATTN_COURSE_ID``: the course's id in the exchange; ``attention-lessons`` by default.
"""

import os
import sys
from pathlib import Path

c = get_config()  # noqa: F821 (nbgrader runs this file with get_config defined)

c.CourseDirectory.course_id = os.environ.get("ATTN_COURSE_ID", "attention-lessons")
c.CourseDirectory.root = os.environ.get("ATTN_GRADING_ROOT", str(Path.home() / "attention-grading"))
c.Exchange.root = os.environ.get("ATTN_EXCHANGE", "/srv/nbgrader/exchange")

# Autograding judges each submission with its code in a sandbox (tools/grading/judge.py), never in a
# kernel of the teacher's: nbgrader's Execute step is replaced, its other steps stay.
sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2])]
from collection import SafeCollect  # noqa: E402
from judge import SandboxedGrading  # noqa: E402
from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    AssignLatePenalties,
    CheckCellMetadata,
    IgnorePattern,
    LimitOutput,
    SaveAutoGrades,
)

# Collection refuses what it cannot trust (a link, a forged owner, a partial submission; collection.py).
c.ExchangeFactory.collect = SafeCollect
c.Autograde.autograde_preprocessors = [
    SandboxedGrading,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]
# The whole notebook runs for at most two minutes (the assignments take seconds;
# ATTN_GRADING_BUDGET_S sets another); the exchange and a hub's state (ATTN_HUB_DIR) are hidden
# from it, with the course folder.
c.SandboxedGrading.budget_s = float(os.environ.get("ATTN_GRADING_BUDGET_S", 120))
c.SandboxedGrading.hidden = [c.Exchange.root, *filter(None, [os.environ.get("ATTN_HUB_DIR")])]
