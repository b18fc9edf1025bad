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
from pathlib import Path

c = get_config()  # noqa: F821 (nbgrader runs this file with get_config defined)

c.CourseDirectory.course_id = os.environ.get("ATTN_COURSE_ID", "attention-lessons")
c.CourseDirectory.root = os.environ.get("ATTN_GRADING_ROOT", str(Path.home() / "attention-grading"))
c.Exchange.root = os.environ.get("ATTN_EXCHANGE", "/srv/nbgrader/exchange")
# A student's notebook runs for at most a minute when it is graded (the assignments take seconds).
c.Execute.timeout = 60
