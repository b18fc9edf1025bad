"""A class on the hub of ``make hub``: three students through a lesson and every fault, on 127.0.0.1.

One hub (``tools/hub/jupyterhub_config.py``, started by ``hub.local.LocalHub``) serves the whole
module, the tests in order as a class would meet them: the students log in and pull the lessons
through the nbgitpuller link from a local repository; one runs a lesson and moves its explorer;
nobody reaches another's server; a kernel is killed mid-lesson; the teacher pushes a fix while the
students have edited their copies; the hub restarts mid-class; the idle culler stops idle servers.
The guide's Zero to JupyterHub ``config.yaml`` is checked against the same settings.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest
import yaml
from conftest import ROOT

GUIDE = (ROOT / "docs" / "instructor_guide.md").read_text(encoding="utf-8")
STUDENTS = ("student01", "student02", "student03")
FOLDER = "attention-lessons"
LESSON = f"{FOLDER}/notebooks/05_softmax.ipynb"  # has an explorer
SHORT = f"{FOLDER}/notebooks/03_raw_scores.ipynb"  # a short lesson, for the killed kernel
FIXED = "notebooks/06_output.ipynb"  # the lesson the teacher fixes


def test_the_guides_config_yaml_is_the_hubs_settings() -> None:
    """The guide's Zero to JupyterHub config.yaml says what tools/hub/settings.py says."""
    from hub import z2jh

    block = re.search(r"in its `config\.yaml`[^`]*```yaml\n(.*?)```", GUIDE, flags=re.DOTALL)
    assert block, "the guide shows the hub's config.yaml after 'in its `config.yaml`'"
    assert yaml.safe_load(block[1]) == z2jh.config(), "regenerate it: python tools/hub/z2jh.py"


@pytest.fixture(scope="module")
def classroom():
    """A running hub with three students logged in, each with a server and the lessons pulled."""
    from conftest import require_build

    installed = importlib.util.find_spec("jupyterhub") is not None
    require_build(None if installed else "JupyterHub is not installed", "make test-env")
    proxy = (ROOT / "node_modules" / ".bin" / "configurable-http-proxy").exists()
    require_build(None if proxy else "configurable-http-proxy is not installed", "npm ci")
    from hub.client import HubUser
    from hub.local import GitServer, LocalHub, lessons_repository, open_folder, students_environment

    top = open_folder()  # the students' system users reach their homes
    bare, work = lessons_repository(top / "repo")
    github = GitServer(bare.parent)  # the lessons' repository, as a hub clones it from GitHub
    hub = LocalHub(top / "hub", students=len(STUDENTS), environment=students_environment(top))
    hub.start()
    try:
        students = {name: HubUser(hub.url, name) for name in STUDENTS}

        def arrive(user: HubUser) -> None:
            user.log_in(hub.passwords[user.name])
            user.start_server()
            user.pull(github.url(bare.name), urlpath=f"lab/tree/{LESSON}")

        with ThreadPoolExecutor(len(STUDENTS)) as pool:
            list(pool.map(arrive, students.values()))
        yield {"hub": hub, "students": students, "repo": github.url(bare.name), "work": work, "kernels": {}}
    finally:
        hub.close()
        github.close()
        shutil.rmtree(top, ignore_errors=True)


def _home(classroom: dict, name: str) -> Path:
    return classroom["hub"].state / "homes" / name


def _stdout(reply) -> str:
    """What a cell printed (its stdout stream)."""
    streams = [m["content"] for m in reply.outputs if m["header"]["msg_type"] == "stream"]
    return "".join(s["text"] for s in streams if s["name"] == "stdout")


def _run(kernel, notebook: dict, upto: int | None = None) -> None:
    """Run the code cells of ``notebook`` (the first ``upto`` cells), failing on any error."""
    for index, cell in enumerate(notebook["cells"][:upto]):
        if cell["cell_type"] == "code":
            reply = kernel.execute(cell["source"])
            assert reply.status == "ok", f"cell {index}: {reply.error}"


def test_each_student_pulls_their_own_copy_through_the_link(classroom: dict) -> None:
    for name, user in classroom["students"].items():
        assert (_home(classroom, name) / LESSON).is_file(), f"{name} has no copy of the lesson"
        listing = user.contents(f"{FOLDER}/notebooks")["content"]
        assert "05_softmax.ipynb" in {entry["name"] for entry in listing}


def test_a_student_runs_the_lesson_and_moves_its_explorer(classroom: dict) -> None:
    user = classroom["students"]["student01"]
    kernel = user.open_notebook(LESSON)
    classroom["kernels"]["student01"] = kernel
    _run(kernel, user.contents(LESSON)["content"])
    comm_id = next(cid for cid, state in kernel.widgets.items() if "scores" in state)
    for scores in ([1.0, 2.0, 0.5], [0.0, 3.5, -1.0]):
        reply = kernel.comm_update(comm_id, {"scores": scores})
        assert reply.seconds < 30
    check = kernel.execute(f"from ipywidgets import Widget\nprint(Widget.widgets[{comm_id!r}].scores)")
    text = _stdout(check)
    assert text.strip() == "[0.0, 3.5, -1.0]", "the kernel holds the explorer's last move"
    threads = kernel.execute("import os\nprint(os.environ.get('OPENBLAS_NUM_THREADS'))")
    assert _stdout(threads).strip() == "1", "a student's kernel computes on one thread (settings.THREADS)"


def test_a_student_cannot_reach_another_students_server(classroom: dict) -> None:
    from hub.client import HubError

    other = classroom["students"]["student02"]
    with pytest.raises(HubError, match="HTTP 403"):
        other.contents(LESSON, owner="student01")
    # The hub answers 404 where a user may not know whether the resource exists.
    reply = other.http.post(f"{other.url}/hub/api/users/student01/server", timeout=60)
    assert reply.status_code == 404 and "No access" in reply.text, reply.text
    reply = other.http.get(f"{other.url}/hub/api/users/student01", timeout=60)
    assert reply.status_code == 404 and "No access" in reply.text, reply.text
    kernel = classroom["kernels"]["student01"]
    reply = other.http.get(f"{other.url}/user/student01/api/kernels/{kernel.id}", timeout=60)
    assert reply.status_code == 403, reply.text


def _note(notebook: dict, text: str) -> dict:
    """``notebook`` with a Markdown cell of the student's own at the top."""
    cell = {"cell_type": "markdown", "id": "student-note", "metadata": {}, "source": text}
    return {**notebook, "cells": [cell, *notebook["cells"]]}


def test_a_killed_kernel_loses_no_saved_work(classroom: dict) -> None:
    from hub.client import Kernel

    user = classroom["students"]["student02"]
    notebook = user.contents(SHORT)["content"]
    kernel = user.open_notebook(SHORT)
    half = len(notebook["cells"]) // 2
    _run(kernel, notebook, upto=half)
    user.save(SHORT, _note(notebook, "student02 was here"))
    process = next(
        p
        for p in psutil.process_iter(["cmdline"])
        if any(kernel.id in part for part in p.info["cmdline"] or [])
    )
    os.kill(process.pid, signal.SIGKILL)  # as the kernel of a student who runs out of memory
    process.wait(timeout=30)
    assert user.server_ready(), "the student's server stays up when a kernel dies"
    user.restart_kernel(kernel.id)
    kernel.close()
    kernel = Kernel(user, kernel.id)  # the page reconnects to the restarted kernel
    reply = kernel.execute("print(1 + 1)")
    assert reply.status == "ok"
    _run(kernel, notebook)  # the student runs the lesson again, top to bottom
    saved = user.contents(SHORT)["content"]
    assert saved["cells"][0]["source"] == "student02 was here", "the saved edit is intact"
    kernel.close()


def test_the_teachers_fix_merges_and_each_students_edit_stays(classroom: dict) -> None:
    """nbgitpuller's rules: untouched lines take the fix, a student's changed lines win a conflict."""
    from hub.local import git

    students, work = classroom["students"], classroom["work"]
    path = f"{FOLDER}/{FIXED}"
    original = students["student01"].contents(path)["content"]
    title = original["cells"][0]["source"].splitlines()
    first, last = title[0], original["cells"][-1]["source"]
    # The teacher fixes the title line of the lesson's first cell, and pushes.
    fixed = (
        (work / FIXED)
        .read_text(encoding="utf-8")
        .replace(json.dumps(first, ensure_ascii=False)[1:-1], "# 06 · The output (fixed)", 1)
    )
    assert fixed != (work / FIXED).read_text(encoding="utf-8")
    (work / FIXED).write_text(fixed, encoding="utf-8")
    git("commit", "-q", "-am", "Lesson 06: fix the title", cwd=work)
    git("push", "-q", "hub", "main", cwd=work)
    # student01 edits the last cell (lines the fix does not touch); student02 edits the title
    # (the same line as the fix); student03 edits nothing.
    edited = json.loads(json.dumps(original))
    edited["cells"][-1]["source"] = last + "\n\nstudent01's note."
    students["student01"].save(path, edited)
    edited = json.loads(json.dumps(original))
    edited["cells"][0]["source"] = "\n".join(["# 06 · student02's own title", *title[1:]])
    students["student02"].save(path, edited)
    for user in students.values():
        user.pull(classroom["repo"], urlpath=f"lab/tree/{path}")
    after = {name: user.contents(path)["content"]["cells"] for name, user in students.items()}
    assert after["student01"][0]["source"].startswith("# 06 · The output (fixed)"), "the fix arrived"
    assert after["student01"][-1]["source"].endswith("student01's note."), "the edit stayed"
    assert after["student02"][0]["source"].startswith("# 06 · student02's own title"), (
        "the student's version won"
    )
    assert after["student03"][0]["source"].startswith("# 06 · The output (fixed)")
    assert after["student03"][-1]["source"] == last


def test_the_hub_restarts_mid_class_and_the_students_reconnect(classroom: dict) -> None:
    from hub.client import Kernel

    hub, user = classroom["hub"], classroom["students"]["student01"]
    kernel = classroom["kernels"]["student01"]
    assert kernel.execute("before_restart = 41").status == "ok"
    servers = {p.pid for p in hub.processes() if "jupyterhub.singleuser" in " ".join(p.cmdline())}
    assert len(servers) == len(STUDENTS)
    kernel.close()
    hub.stop()
    assert all(psutil.pid_exists(pid) for pid in servers), "the servers run on while the hub is down"
    hub.start()
    assert user.server_ready(), "the hub finds the running server again"
    kernel = Kernel(user, kernel.id)  # the student's page reconnects to the same kernel
    reply = kernel.execute("print(before_restart + 1)")
    text = _stdout(reply)
    assert text.strip() == "42", "the kernel kept its state across the hub's restart"
    kernel.close()
    after = {p.pid for p in hub.processes() if "jupyterhub.singleuser" in " ".join(p.cmdline())}
    assert after == servers, "no server was restarted"


def test_the_idle_culler_stops_idle_servers_and_their_work_stays(classroom: dict) -> None:
    hub, students = classroom["hub"], classroom["students"]
    saved = students["student03"].contents(LESSON)["content"]
    students["student03"].save(LESSON, _note(saved, "student03's work"))
    hub.stop()
    hub.set_culler(timeout=5, every=2)  # no server has reported activity within 5 s
    hub.start()
    deadline = time.monotonic() + 120
    while any(user.model().get("servers") for user in students.values()):  # running, or pending stop
        assert time.monotonic() < deadline, "the culler did not stop every idle server within 120 s"
        time.sleep(2)
    servers = [p for p in hub.processes() if "jupyterhub.singleuser" in " ".join(p.cmdline())]
    assert not servers, "the culled servers' processes have ended"
    for name in STUDENTS:
        assert (_home(classroom, name) / LESSON).is_file(), f"{name}'s copy of the lessons is on disk"
    note = json.loads((_home(classroom, "student03") / LESSON).read_text(encoding="utf-8"))["cells"][0]
    assert "".join(note["source"]) == "student03's work", (
        "the work is on disk after the culler stopped the server"
    )
