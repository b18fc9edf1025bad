"""A graded week on the hub of ``make hub``, end to end, with a teacher and four students on 127.0.0.1,
and the students attacking it.

One hub (``tools/hub/jupyterhub_config.py``, as root: each account's server runs as its own system
user) serves the module, the tests in the order a week goes: the teacher, logged in with their own
password, writes an nbgrader assignment in their course folder and releases it; the students, each
with their own password, fetch it from their own servers (nbgrader's server API, what the
*Assignments* tab does); one works and runs it right, one makes a named mistake, one leaves it
blank, one submits a mistake and then resubmits; the server's administrator (root) collects and
autogrades, each submission in the grading sandbox (the teacher's own notebook is refused
autograding), releases the feedback and exports the CSV, which holds the expected points; the
students fetch the feedback, which names the mistake. Between the steps, the students attack:
guessing passwords (the account locks; the class's API stays as fast), reading another's files,
the hub's secrets, the teacher's course and the shared environment, the admin page; a shared mmap,
three big children, a /dev/shm file and 300 processes (one control group per student stops them;
nothing is left when the server stops); another's kernel (IPC sockets in a folder of their own, no
TCP port), their own server config (not read), the teacher's nbgrader tools (not shown). A kernel
past the memory limit gets MemoryError and its server runs on; a killed kernel, a killed hub and
the teacher's fix of the released assignment lose no student's work. Then lesson 08's assignment
goes the same way through the teacher's tool (``tools/grading/week.py``: written and released in
the teacher's kernel, graded as root): the right answers get every point, a named mistake loses
its one, a blank copy none. JupyterLab opens without its news prompt. A second, short-lived hub
speaks HTTPS with a certificate made here; a hub asked to listen beyond 127.0.0.1 without TLS, or
to keep its state under ``build/``, refuses to start.
"""

from __future__ import annotations

import csv
import datetime
import importlib.util
import io
import ipaddress
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
import requests
from conftest import ROOT

COURSE = "attention-lessons"  # settings.COURSE_ID
WEEK = "week1"
STUDENTS = ("student01", "student02", "student03", "student04")
NOTEBOOK = f"{WEEK}/{WEEK}.ipynb"  # where nbgrader's fetch puts it, in the student's home
COURSE_FOLDER = "attention-grading"  # in the teacher's home (tools/grading/nbgrader_config.py)
SOURCE = f"{COURSE_FOLDER}/source/{WEEK}/{WEEK}.ipynb"  # with the solutions and hidden tests
MISTAKE = "softmax of large scores: subtract the largest score first"  # the hidden test's words

QUOTA_MIB = 300  # each home's quota in this test (tools/hub/disks.py)
SOFTMAX = "def softmax(x):\n    return np.exp(x - x.max()) / np.exp(x - x.max()).sum()\n"
SOFTMAX_OVERFLOWS = "def softmax(x):\n    return np.exp(x) / np.exp(x).sum()\n"  # the named mistake
SCALED = "def scaled(q, k):\n    return q @ k.T / np.sqrt(q.shape[-1])\n"
SCALED_UNSCALED = "def scaled(q, k):\n    return q @ k.T\n"


def _cell(kind: str, source: str, **nbgrader) -> dict:
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell |= {"execution_count": None, "outputs": []}
    if nbgrader:
        cell["metadata"]["nbgrader"] = {"schema_version": 3, "task": False, **nbgrader}
    return cell


def _source_notebook(title: str) -> dict:
    """The teacher's assignment: two questions, 2 + 1 points, the first with a hidden test."""
    solution = {"grade": False, "solution": True, "locked": False}
    cells = [
        _cell("markdown", f"# {title}\n\nWrite the two functions; the test cells check them."),
        _cell("code", "import numpy as np", grade=False, solution=False, locked=True, grade_id="setup"),
        _cell(
            "code",
            "def softmax(x):\n    ### BEGIN SOLUTION\n    e = np.exp(x - x.max())\n    return e / e.sum()\n"
            "    ### END SOLUTION\n",
            grade_id="softmax",
            **solution,
        ),
        _cell(
            "code",
            "assert np.isclose(softmax(np.array([1.0, 2.0, 3.0])).sum(), 1.0), 'the weights sum to 1'\n"
            "### BEGIN HIDDEN TESTS\n"
            "x = np.random.default_rng().normal(size=6) + 1000  # fresh scores, all large\n"
            f"assert np.all(np.isfinite(softmax(x))), {MISTAKE!r}\n"
            "### END HIDDEN TESTS\n",
            grade=True,
            solution=False,
            locked=True,
            points=2,
            grade_id="test_softmax",
        ),
        _cell(
            "code",
            "def scaled(q, k):\n    ### BEGIN SOLUTION\n    return q @ k.T / np.sqrt(q.shape[-1])\n"
            "    ### END SOLUTION\n",
            grade_id="scaled",
            **solution,
        ),
        _cell(
            "code",
            "q = np.random.default_rng().normal(size=(3, 4))\n"
            "assert np.allclose(scaled(q, q), q @ q.T / 2.0), 'divide by the square root of d'\n",
            grade=True,
            solution=False,
            locked=True,
            points=1,
            grade_id="test_scaled",
        ),
    ]
    kernel = {"display_name": "Python 3", "language": "python", "name": "python3"}
    return {"cells": cells, "metadata": {"kernelspec": kernel}, "nbformat": 4, "nbformat_minor": 5}


def _answer(notebook: dict, softmax: str | None, scaled: str | None) -> dict:
    """The student's copy with their answers in the solution cells (None: left as fetched)."""
    answered = json.loads(json.dumps(notebook))
    for cell in answered["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id == "softmax" and softmax is not None:
            cell["source"] = softmax
        if grade_id == "scaled" and scaled is not None:
            cell["source"] = scaled
    return answered


def _stdout(reply) -> str:
    streams = [m["content"] for m in reply.outputs if m["header"]["msg_type"] == "stream"]
    return "".join(s["text"] for s in streams if s["name"] == "stdout")


def _python(kernel, code: str) -> str:
    """Run ``code`` in ``kernel``; what it printed (failing on an error)."""
    reply = kernel.execute(code, timeout=600)
    assert reply.status == "ok", reply.error
    return _stdout(reply)


def _nbgrader(teacher_kernel, *args: str) -> str:
    """``nbgrader args`` in the teacher's course folder, from the teacher's own kernel."""
    code = (
        "import subprocess, sys, os\n"
        f"r = subprocess.run([sys.executable, '-m', 'nbgrader', *{list(args)!r}], "
        f"cwd=os.path.expanduser('~/{COURSE_FOLDER}'), capture_output=True, text=True)\n"
        "print(r.returncode)\nprint(r.stdout[-3000:] + r.stderr[-3000:])\n"
    )
    output = _python(teacher_kernel, code)
    assert output.startswith("0\n"), f"nbgrader {' '.join(args)}: {output}"
    return output


def _nbgrader_as_root(hub, *args: str) -> None:
    """``sudo nbgrader args`` in the teacher's course folder, with the hub's settings; what it wrote
    goes back to the teacher (``week.give_back``)."""
    import subprocess
    import sys

    from week import give_back

    folder = hub.state / "homes" / "teacher" / COURSE_FOLDER
    env = {
        **os.environ,
        "JUPYTER_CONFIG_PATH": str(ROOT / "tools" / "grading"),
        "ATTN_GRADING_ROOT": str(folder),
        "ATTN_EXCHANGE": str(hub.state / "exchange"),
        "ATTN_COURSE_ID": COURSE,
        "ATTN_HUB_DIR": str(hub.state),
    }
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=folder, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, (
        f"nbgrader {' '.join(args)}: {result.stdout[-3000:]}{result.stderr[-3000:]}"
    )
    give_back(folder)


@pytest.fixture(scope="module")
def week():
    """A running hub: the teacher and four students logged in with their own passwords, servers up."""
    from conftest import require_build

    installed = importlib.util.find_spec("jupyterhub") is not None
    require_build(None if installed else "JupyterHub is not installed", "make test-env")
    proxy = (ROOT / "node_modules" / ".bin" / "configurable-http-proxy").exists()
    require_build(None if proxy else "configurable-http-proxy is not installed", "npm ci")
    root = os.getuid() == 0
    require_build(None if root else "the hub makes a system user per student only as root", "sudo")
    from hub.client import HubUser
    from hub.local import LocalHub, open_folder, students_environment

    top = open_folder()
    hub = LocalHub(top / "hub", students=len(STUDENTS), environment=students_environment(top))
    hub.env |= {"ATTN_HUB_HOME_LIMIT": f"{QUOTA_MIB}M", "ATTN_HUB_DISK_EVERY": "1"}  # the disk watchdog
    hub.start()
    try:
        users = {name: HubUser(hub.url, name) for name in ("teacher", *STUDENTS)}

        def arrive(user: HubUser) -> None:
            user.log_in(hub.passwords[user.name])
            user.start_server()

        with ThreadPoolExecutor(len(users)) as pool:
            list(pool.map(arrive, users.values()))
        yield {"hub": hub, "users": users, "kernels": {}}
    finally:
        hub.close()
        shutil.rmtree(top, ignore_errors=True)


def test_each_account_has_its_own_password_and_the_teacher_is_separate(week: dict) -> None:
    from hub.client import HubError, HubUser

    hub, passwords = week["hub"], week["hub"].passwords
    assert len(set(passwords.values())) == len(passwords) == len(STUDENTS) + 1
    assert (hub.state / "passwords.csv").stat().st_mode & 0o777 == 0o600
    for name, password in (("teacher", passwords["student01"]), ("student02", passwords["student01"])):
        with pytest.raises(HubError, match="could not log in"):
            HubUser(hub.url, name).log_in(password)
    assert week["users"]["teacher"].model()["admin"] is True
    assert week["users"]["student01"].model()["admin"] is False


def test_password_guessing_locks_the_account_and_does_not_slow_the_class(week: dict) -> None:
    """A password of fewer than 10 characters, or a common one, is refused; five wrong passwords lock
    an account (the right one is refused for a minute); six clients
    guessing passwords for 20 s leave the class's API calls as fast as before (the password check
    runs off the hub's event loop, and a guessing address is slowed: tools/hub/accounts.py)."""
    import statistics
    import threading

    from hub.client import HubError, HubUser

    hub, student = week["hub"], week["users"]["student01"]
    page = student.http.get(f"{hub.url}/hub/change-password", timeout=60)
    xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page.text)[1]
    for weak in ("a", "1234567890"):  # too short; common
        fields = {"old_password": hub.passwords["student01"], "new_password": weak}
        fields |= {"new_password_confirmation": weak, "_xsrf": xsrf}
        reply = student.http.post(f"{hub.url}/hub/change-password", data=fields, timeout=60)
        assert "at least 10" in reply.text and "not too common" in reply.text, f"{weak!r} was accepted"
    HubUser(hub.url, "student01").log_in(hub.passwords["student01"])  # the password is unchanged
    for _ in range(5):
        with pytest.raises(HubError, match="could not log in"):
            HubUser(hub.url, "student04").log_in("not-the-password")
    with pytest.raises(HubError, match="could not log in"):
        HubUser(hub.url, "student04").log_in(hub.passwords["student04"])  # locked

    def latencies(seconds: float) -> list[float]:
        found, end = [], time.perf_counter() + seconds
        while time.perf_counter() < end:
            start = time.perf_counter()
            student.model()
            found.append(time.perf_counter() - start)
        return found

    before = statistics.median(latencies(5))
    stop = threading.Event()
    guesses = []

    def guess(number: int) -> None:
        names = ["teacher", *STUDENTS]
        while not stop.is_set():
            try:
                HubUser(hub.url, names[(number + len(guesses)) % len(names)]).log_in(f"guess{len(guesses)}")
            except (HubError, requests.RequestException):
                pass
            guesses.append(1)

    threads = [threading.Thread(target=guess, args=(number,), daemon=True) for number in range(6)]
    for thread in threads:
        thread.start()
    try:
        during = statistics.median(latencies(20))
    finally:
        stop.set()
    print(f"API median {before * 1000:.0f} ms before, {during * 1000:.0f} ms during {len(guesses)} guesses")
    assert during < max(3 * before, 0.2), (before, during)


def test_the_teacher_releases_and_each_student_fetches_without_the_hidden_tests(week: dict) -> None:
    users = week["users"]
    teacher = users["teacher"]
    for folder in (COURSE_FOLDER, f"{COURSE_FOLDER}/source", f"{COURSE_FOLDER}/source/{WEEK}"):
        reply = teacher.http.put(f"{teacher.server}/api/contents/{folder}", json={"type": "directory"})
        assert reply.status_code in (200, 201), reply.text
    teacher.save(SOURCE, _source_notebook("Week 1: softmax and scaling (draft)"))
    kernel = teacher.open_notebook(f"{COURSE_FOLDER}/grading.ipynb")
    week["kernels"]["teacher"] = kernel
    _nbgrader(kernel, "generate_assignment", WEEK, "--force")
    _nbgrader(kernel, "release_assignment", WEEK)
    for name in STUDENTS[:3]:  # student04 fetches late, after the teacher's fix
        listed = users[name].nbgrader("fetch", COURSE, WEEK)
        assert any(a["assignment_id"] == WEEK and a["status"] == "fetched" for a in listed), listed
        fetched = users[name].contents(NOTEBOOK)["content"]
        text = json.dumps(fetched)
        assert "BEGIN HIDDEN TESTS" not in text and "isfinite" not in text, "no hidden test reaches a student"
        assert "BEGIN SOLUTION" not in text and "x - x.max()" not in text, "no solution reaches a student"


def test_the_servers_save_atomically(week: dict) -> None:
    """Every server uses tools/hub/server/atomic_contents.py (tests/site/test_atomic_saves.py kills
    a save midway with it and with jupyter_server's own)."""
    log = (week["hub"].state / "hub.log").read_text()
    assert log.count("saves are written beside each file and renamed over it") >= len(STUDENTS) + 1


def test_jupyterlab_opens_without_the_news_prompt(week: dict) -> None:
    """binder/jupyterlab-settings/overrides.json: no news fetched, no update check."""
    user = week["users"]["student01"]
    plugin = "@jupyterlab/apputils-extension:notification"
    reply = user.http.get(f"{user.server}/lab/api/settings/{plugin}", timeout=60)
    assert reply.ok, reply.text
    defaults = {key: value.get("default") for key, value in reply.json()["schema"]["properties"].items()}
    assert defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is False, defaults


def test_a_students_code_is_refused_others_files_the_hubs_secrets_and_the_environment(week: dict) -> None:
    hub, users = week["hub"], week["users"]
    user = users["student02"]
    kernel = user.open_notebook(NOTEBOOK)
    week["kernels"]["student02"] = kernel
    import attnlib

    site_packages = Path(requests.__file__).parents[1]
    targets = {
        "read another's work": ("read", hub.state / "homes" / "student01" / NOTEBOOK),
        "list another's home": ("list", hub.state / "homes" / "student01"),
        "read the teacher's source": ("read", hub.state / "homes" / "teacher" / SOURCE),
        "read the hub's database": ("read", hub.state / "jupyterhub.sqlite"),
        "read the cookie secret": ("read", hub.state / "cookie_secret"),
        "read the password sheet": ("read", hub.state / "passwords.csv"),
        "list the submissions": ("list", hub.state / "exchange" / COURSE / "inbound"),
        "change the released copy": ("write", hub.state / "exchange" / COURSE / "outbound" / WEEK / "x"),
        "change the library": ("write", Path(attnlib.__file__).parent / "softmax_override.py"),
        "change the environment": ("write", site_packages / "sitecustomize.py"),
        "change the hub's settings": ("write", ROOT / "tools" / "hub" / "settings.py"),
    }
    code = (
        "import json, os\nresults = {}\n"
        f"for what, (how, path) in {json.dumps({k: [h, str(p)] for k, (h, p) in targets.items()})}.items():\n"
        "    try:\n"
        "        if how == 'read': open(path, 'rb').read(1)\n"
        "        elif how == 'list': os.listdir(path)\n"
        "        else: open(path, 'a').close()\n"
        "        results[what] = 'allowed'\n"
        "    except PermissionError:\n"
        "        results[what] = 'refused'\n"
        "print(json.dumps(results))\n"
    )
    results = json.loads(_python(kernel, code))
    assert results == dict.fromkeys(targets, "refused"), results
    whoami = _python(kernel, "import os, pwd; print(pwd.getpwuid(os.getuid()).pw_name)").strip()
    assert whoami == f"{hub.user_prefix}student02", "the kernel runs as the student's own user"
    reply = user.http.get(f"{user.url}/hub/admin", timeout=60)
    assert reply.status_code == 403, "a student is refused the admin page"
    assert user.http.get(f"{user.url}/hub/api/users", timeout=60).status_code == 403
    teacher = week["users"]["teacher"]
    assert teacher.http.get(f"{teacher.url}/hub/admin", timeout=60).status_code == 200


def test_a_kernel_past_the_memory_limit_gets_memory_error_and_the_server_runs_on(week: dict) -> None:
    user = week["users"]["student03"]
    kernel = user.open_notebook(NOTEBOOK)
    reply = kernel.execute("block = bytearray(3 * 1024**3)")  # 3 GiB, over the limit of 2G
    assert reply.status == "error" and reply.error.startswith("MemoryError"), reply.error
    assert _python(kernel, "print(1 + 1)").strip() == "2", "the kernel itself runs on"
    assert user.server_ready()
    kernel.close()


def _cgroup(pid: int) -> str:
    """The control groups of process ``pid`` as /proc shows them (for a failure's message)."""
    try:
        return Path(f"/proc/{pid}/cgroup").read_text().strip()
    except OSError:
        return "gone"


def test_a_students_processes_share_one_memory_limit_and_one_process_limit(week: dict) -> None:
    """A shared mmap, three big children, a /dev/shm file and hundreds of processes: each stopped by
    the student's control group (tools/hub/limits.py); the kernel runs on, and when the server stops
    nothing of the student's is left running or in /dev/shm."""
    import pwd

    from hub import limits

    hub, user = week["hub"], week["users"]["student03"]
    system_user = f"{hub.user_prefix}student03"
    group = limits.find(system_user)
    from conftest import require_build

    require_build(
        None if group else "this machine's control groups cannot be written", "a machine with cgroups"
    )
    kernel = user.open_notebook(NOTEBOOK)
    children = (
        "import subprocess, sys\n"
        "code = 'b = bytearray(3 << 29); b[::4096] = bytes(len(b[::4096]))'  # 1.5 GiB each, touched\n"
        "ps = [subprocess.Popen([sys.executable, '-c', code]) for _ in range(3)]\n"
        "codes = [p.wait() for p in ps]\nassert all(c == 0 for c in codes), codes"
    )
    attacks = {
        "processes": "import subprocess\nps = [subprocess.Popen(['sleep', '60']) for _ in range(300)]",
        "shared mmap": "import mmap\nm = mmap.mmap(-1, 3 << 30, flags=mmap.MAP_SHARED)\n"
        "for i in range(0, 3 << 30, 4096): m[i] = 1",
        "three children": children,
    }
    outcomes = {}
    for what, code in attacks.items():
        probe = (
            "import subprocess, sys\n"
            f"r = subprocess.run([sys.executable, '-c', {code!r}], capture_output=True, text=True)\n"
            "print(r.returncode, (r.stderr.strip().splitlines() or [''])[-1][:80])\n"
        )
        outcomes[what] = _python(kernel, probe).strip()
    assert all(not outcome.startswith("0 ") for outcome in outcomes.values()), outcomes
    assert _python(kernel, "print(2 + 2)").strip() == "4", "the kernel itself runs on"
    # A /dev/shm file belongs to no process: the group counts it, so past the limit the OOM killer
    # ends the student's own processes (their kernel, even their server), and nobody else's.
    try:
        kernel.execute(
            "with open('/dev/shm/attn-fill', 'wb') as f:\n"
            "    for _ in range(3 << 10): f.write(bytes(1 << 20))",
            timeout=120,
        )
    except Exception:  # the kernel or the server was killed: the connection closes
        pass
    uid = pwd.getpwnam(system_user).pw_uid
    filled = [p.stat().st_size for p in Path("/dev/shm").iterdir() if p.lstat().st_uid == uid]
    assert sum(filled) <= 2 << 30, f"/dev/shm holds {sum(filled) >> 20} MiB of {system_user}'s"
    assert week["users"]["student01"].server_ready(), "another student's server runs on"
    from hub.client import HubError

    try:
        user.stop_server()
    except HubError:  # the OOM killer ended the server itself: the hub has stopped it already
        pass
    try:  # the class's later tests need the student's server back, whatever this one finds
        for _ in range(120):
            if not user.model().get("servers"):
                break
            time.sleep(1)
        left = [  # a zombie holds nothing but its number, until the machine's init reaps it
            (p.info["pid"], p.info["status"], p.info["cmdline"], _cgroup(p.info["pid"]))
            for p in psutil.process_iter(["pid", "uids", "status", "cmdline"])
            if p.info["uids"] and p.info["uids"].real == uid and p.info["status"] != psutil.STATUS_ZOMBIE
        ]
        assert left == [], f"processes of {system_user} outlived its server: {left}"
        assert not [p for p in Path("/dev/shm").iterdir() if p.lstat().st_uid == uid], (
            "its /dev/shm files are gone"
        )
    finally:
        user.start_server()


def test_a_student_over_the_disk_quota_writes_no_more_and_the_class_saves_on(week: dict) -> None:
    """A student fills their home: past the quota, the disk watchdog ends their kernels (the one
    writing among them) and keeps their server, whose file browser deletes; a classmate's save goes
    through meanwhile; back under the quota, the student works again."""
    hub, users = week["hub"], week["users"]
    student = users["student02"]
    kernel = student.open_notebook(NOTEBOOK)
    fill = (
        "import os, time\n"
        "with open(os.path.expanduser('~/fill.bin'), 'wb') as f:\n"
        "    for _ in range(60):\n"
        "        f.write(bytes(20 << 20)); f.flush(); os.fsync(f.fileno()); time.sleep(0.2)\n"
    )
    try:
        kernel.execute(fill, timeout=30)
    except Exception:  # the watchdog ended the kernel midway: no reply comes
        pass
    kernel.close()
    log = (hub.state / "disk.log").read_text()
    assert f"over the quota of {QUOTA_MIB} MiB: their kernels ended" in log, log
    written = (hub.state / "homes" / "student02" / "fill.bin").stat().st_size >> 20
    assert QUOTA_MIB <= written < 60 * 20, f"{written} MiB written"
    users["student01"].save("classmate.ipynb", _source_notebook("a classmate's work"))  # saves
    assert student.server_ready(), "the student's server runs on"
    reply = student.http.delete(f"{student.server}/api/contents/fill.bin", timeout=60)  # the file browser
    assert reply.status_code == 204, reply.text
    for _ in range(30):
        if "student02: under the quota again" in (hub.state / "disk.log").read_text():
            break
        time.sleep(1)
    kernel = student.open_notebook(NOTEBOOK)
    probe = "open(__import__('os').path.expanduser('~/small.txt'), 'w').write('back'); print('ok')"
    assert _python(kernel, probe).strip() == "ok", "under the quota again, the student works again"
    kernel.close()


def test_no_student_reaches_another_kernel_or_the_teachers_tools(week: dict) -> None:
    """Kernels talk over IPC sockets in each student's own runtime folder (no channel on a TCP port
    to connect to); a student sees no formgrader, the teacher does; a student's ~/.jupyter is not read."""
    hub, users = week["hub"], week["users"]
    kernel = users["student02"].open_notebook(NOTEBOOK)
    other = f"/run/attn-hub/{hub.user_prefix}student01"
    probe = (
        f"import os\ntry:\n    os.listdir({other!r}); print('listed')\n"
        "except PermissionError:\n    print('refused')"
    )
    assert _python(kernel, probe).strip() == "refused"
    kernels = [
        p
        for p in psutil.process_iter(["cmdline", "username"])
        if "ipykernel_launcher" in " ".join(p.info["cmdline"] or [])
        and hub.user_prefix in (p.info["username"] or "")
    ]
    assert kernels, "the students' kernels are running"
    for runtime in Path("/run/attn-hub").glob(f"{hub.user_prefix}*"):
        for connection in runtime.glob("kernel-*.json"):
            assert json.loads(connection.read_text())["transport"] == "ipc", connection
    # ipykernel keeps one TCP port of its own, for its forked subprocesses' output: it only
    # receives, and drops what does not carry the kernel's 128-bit secret (ipykernel/iostream.py).
    for process in kernels:
        listening = [c for c in process.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]
        assert len(listening) <= 1, f"a kernel listens on TCP: {listening}"
    # A student writes a server config that would serve their own header on the hub's origin.
    _python(
        kernel,
        "import os\nos.makedirs(os.path.expanduser('~/.jupyter'), exist_ok=True)\n"
        "open(os.path.expanduser('~/.jupyter/jupyter_server_config.py'), 'w').write("
        '\'c.ServerApp.tornado_settings = {"headers": {"X-Planted": "yes"}}\\n\')',
    )
    kernel.close()
    student = users["student02"]
    student.stop_server()
    for _ in range(120):
        if not student.model().get("servers"):
            break
        time.sleep(1)
    student.start_server()
    reply = student.http.get(f"{student.server}/api/status", timeout=60)
    assert reply.ok and "X-Planted" not in reply.headers, "the student's own config is not read"
    assert student.http.get(f"{student.server}/formgrader", timeout=60).status_code == 404
    lab = student.http.get(f"{student.server}/lab", timeout=60).text
    page = json.loads(re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', lab, re.DOTALL)[1])
    assert "@jupyter/nbgrader:formgrader" in str(page["disabledExtensions"]), "the formgrader's menu is off"
    teacher = users["teacher"]
    assert teacher.http.get(
        f"{teacher.server}/formgrader", timeout=60, allow_redirects=False
    ).status_code in (
        200,
        302,
    )


def test_the_students_work_and_a_killed_kernel_loses_nothing(week: dict) -> None:
    from hub.client import Kernel

    users = week["users"]
    fetched = users["student01"].contents(NOTEBOOK)["content"]
    # student01 writes the right answers and runs the notebook; student02 the named mistake;
    # student03 leaves it blank (submits it as fetched).
    users["student01"].save(NOTEBOOK, _answer(fetched, SOFTMAX, SCALED))
    users["student02"].save(NOTEBOOK, _answer(fetched, SOFTMAX_OVERFLOWS, SCALED))
    kernel = users["student01"].open_notebook(NOTEBOOK)
    for cell in _answer(fetched, SOFTMAX, SCALED)["cells"]:
        if cell["cell_type"] == "code":
            _python(kernel, cell["source"])
    process = next(
        p
        for p in psutil.process_iter(["cmdline"])
        if any(kernel.id in part for part in p.info["cmdline"] or [])
    )
    assert process.username() == f"{week['hub'].user_prefix}student01"
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert users["student01"].server_ready(), "the server stays up when a kernel dies"
    _restart(users["student01"], kernel.id)
    kernel.close()
    kernel = Kernel(users["student01"], kernel.id)
    assert _python(kernel, "print(40 + 2)").strip() == "42"
    kernel.close()
    saved = users["student01"].contents(NOTEBOOK)["content"]
    assert saved["cells"][2]["source"] == SOFTMAX, "the saved work is intact"


def _restart(user, kernel_id: str) -> None:
    """*Kernel → Restart Kernel*, once the server's own restarter has finished with the dead one."""
    from hub.client import HubError

    for attempt in range(5):
        try:
            user.restart_kernel(kernel_id)
            return
        except HubError:  # the server is restarting it itself (a kernel that died): try again
            if attempt == 4:
                raise
            time.sleep(3)


def test_a_killed_hub_loses_no_work_and_the_servers_run_on(week: dict) -> None:
    hub, users = week["hub"], week["users"]
    servers = {p.pid for p in hub.processes() if "jupyterhub.singleuser" in " ".join(p.cmdline())}
    assert len(servers) == len(STUDENTS) + 1
    hub.kill()
    assert all(psutil.pid_exists(pid) for pid in servers), "the servers run on while the hub is down"
    hub.start()
    for name in STUDENTS:
        assert users[name].server_ready(), f"the hub finds {name}'s running server again"
    assert users["student02"].contents(NOTEBOOK)["content"]["cells"][2]["source"] == SOFTMAX_OVERFLOWS


def test_the_teachers_fix_reaches_a_late_student_and_keeps_the_others_work(week: dict) -> None:
    users, kernel = week["users"], week["kernels"]["teacher"]
    from hub.client import Kernel

    kernel.close()  # the hub restarted: the teacher's page reconnects
    kernel = week["kernels"]["teacher"] = Kernel(users["teacher"], kernel.id)
    users["teacher"].save(SOURCE, _source_notebook("Week 1: softmax and scaling"))
    _nbgrader(kernel, "generate_assignment", WEEK, "--force")
    _nbgrader(kernel, "release_assignment", WEEK, "--force")
    users["student01"].nbgrader("fetch", COURSE, WEEK)  # fetching again keeps the work
    mine = users["student01"].contents(NOTEBOOK)["content"]["cells"]
    assert mine[2]["source"] == SOFTMAX and "(draft)" in mine[0]["source"]
    users["student04"].nbgrader("fetch", COURSE, WEEK)
    late = users["student04"].contents(NOTEBOOK)["content"]
    assert late["cells"][0]["source"].startswith("# Week 1: softmax and scaling\n"), "the fix arrived"
    users["student04"].save(NOTEBOOK, _answer(late, SOFTMAX, SCALED_UNSCALED))


def test_submit_collect_autograde_feedback_and_the_csv(week: dict) -> None:
    users, kernel = week["users"], week["kernels"]["teacher"]
    for name in STUDENTS:
        listed = users[name].nbgrader("submit", COURSE, WEEK)
        assert any(a["status"] == "submitted" for a in listed), f"{name}: {listed}"
    time.sleep(1.1)  # nbgrader's submissions are told apart by their timestamp
    fixed = _answer(users["student04"].contents(NOTEBOOK)["content"], SOFTMAX, SCALED)
    users["student04"].save(NOTEBOOK, fixed)
    users["student04"].nbgrader("submit", COURSE, WEEK)  # resubmits: the latest one counts
    _nbgrader_as_root(week["hub"], "collect", WEEK, "--update")
    # Autograding from the teacher's own notebook is refused: it would run the students' code as
    # the teacher. The server's administrator grades (sudo), each submission in the sandbox.
    refused = _python(
        kernel,
        "import subprocess, sys, os\n"
        "r = subprocess.run([sys.executable, '-m', 'nbgrader', 'autograde', 'week1', '--force'], "
        f"cwd=os.path.expanduser('~/{COURSE_FOLDER}'), capture_output=True, text=True)\n"
        "print(r.returncode)\nprint(r.stdout[-3000:] + r.stderr[-3000:])\n",
    )
    assert not refused.startswith("0\n") and "run the grading step with sudo" in refused, refused
    for step in (
        ("autograde", WEEK, "--force"),
        ("generate_feedback", WEEK, "--force"),
        ("release_feedback", WEEK),
        ("export", "--to", "grades.csv"),
    ):
        _nbgrader_as_root(week["hub"], *step)
    table = users["teacher"].contents(f"{COURSE_FOLDER}/grades.csv")["content"]
    # nbgrader's student id is the system user's name: the account's, with this test's prefix.
    prefix = week["hub"].user_prefix
    rows = {row["student_id"].removeprefix(prefix): row for row in csv.DictReader(io.StringIO(table))}
    points = {name: float(rows[name]["score"]) for name in STUDENTS}
    assert points == {"student01": 3.0, "student02": 1.0, "student03": 0.0, "student04": 3.0}, points
    assert {float(rows[name]["max_score"]) for name in STUDENTS} == {3.0}
    users["student02"].nbgrader("fetch_feedback", COURSE, WEEK)
    feedback = users["student02"].contents(f"{WEEK}/feedback")["content"]
    (stamp,) = [entry["path"] for entry in feedback]
    page = users["student02"].contents(f"{stamp}/{WEEK}.html")["content"]
    assert MISTAKE in page, "the feedback names the mistake"


def _answered(notebook: dict, assignment, wrong: dict[str, str]) -> dict:
    """A student's copy of a tools/grading assignment with the model answers, except ``wrong``
    (question id → the body of a wrong answer)."""
    answered = json.loads(json.dumps(notebook))
    questions = {f"{question.id}-answer": question for question in assignment.questions}
    for cell in answered["cells"]:
        question = questions.get(cell["metadata"].get("nbgrader", {}).get("grade_id"))
        if question:
            body = wrong.get(question.id, question.solution)
            indented = "\n".join(f"    {line}" if line else "" for line in body.splitlines())
            cell["source"] = f"{question.function}\n{indented}\n\n\n{question.binds}"
    return answered


def test_lesson_08s_assignment_through_the_teachers_tool_on_the_hub(week: dict) -> None:
    """tools/grading/week.py in the teacher's kernel: lesson 08's assignment, graded on the hub."""
    from grading.assignments import ASSIGNMENTS  # tools/grading

    users, kernel = week["users"], week["kernels"]["teacher"]
    assignment = ASSIGNMENTS["a1-exercises"]
    tool = ROOT / "tools" / "grading" / "week.py"
    for step in ("source", "release", "grade"):
        if step == "grade":
            for name, wrong in (("student01", {}), ("student02", {"question2b": "return 1 / K_shape[1]"})):
                fetched = users[name].contents(f"{assignment.id}/{assignment.notebook}")["content"]
                users[name].save(
                    f"{assignment.id}/{assignment.notebook}", _answered(fetched, assignment, wrong)
                )
            for name in STUDENTS[:3]:  # student03 submits it blank
                users[name].nbgrader("submit", COURSE, assignment.id)
        if step == "grade":  # as the server's administrator (sudo): the sandbox needs root
            folder = week["hub"].state / "homes" / "teacher" / COURSE_FOLDER
            exchange = week["hub"].state / "exchange"
            env = {**os.environ, "ATTN_COURSE_ID": COURSE, "ATTN_HUB_DIR": str(week["hub"].state)}
            import subprocess
            import sys

            result = subprocess.run(
                [
                    sys.executable,
                    str(tool),
                    step,
                    assignment.id,
                    "--root",
                    str(folder),
                    "--exchange",
                    str(exchange),
                ],
                capture_output=True,
                text=True,
                env=env,
            )
            output = f"{result.returncode}\n{result.stdout}{result.stderr[-3000:]}"
        else:
            output = _python(
                kernel,
                "import subprocess, sys\n"
                f"r = subprocess.run([sys.executable, {str(tool)!r}, {step!r}, {assignment.id!r}], "
                "capture_output=True, text=True)\nprint(r.returncode)\nprint(r.stdout + r.stderr[-3000:])\n",
            )
        assert output.startswith("0\n"), f"week.py {step}: {output}"
        if step == "release":
            for name in STUDENTS[:3]:
                users[name].nbgrader("fetch", COURSE, assignment.id)
    table = users["teacher"].contents(f"{COURSE_FOLDER}/grades.csv")["content"]
    prefix = week["hub"].user_prefix
    points = {
        row["student_id"].removeprefix(prefix): float(row["score"])
        for row in csv.DictReader(io.StringIO(table))
        if row["assignment"] == assignment.id
    }
    full = float(assignment.points)
    expected = {"student01": full, "student02": full - 1, "student03": 0.0, "student04": 0.0}
    assert points == expected, points  # student04 never fetched it: 0, as nbgrader exports


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1, signed by its own key (PEM files in ``folder``)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    loopback = ipaddress.ip_address("127.0.0.1")
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(loopback)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert, secret = folder / "hub.crt", folder / "hub.key"
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    secret.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    secret.chmod(0o600)
    return cert, secret


def test_the_hub_speaks_https_with_a_certificate_and_refuses_the_network_without_one() -> None:
    from hub.client import HubUser
    from hub.local import LocalHub, open_folder, students_environment

    top = open_folder()
    cert, key = _self_signed(top)
    try:
        hub = LocalHub(top / "plain", students=1)
        hub.env["ATTN_HUB_IP"] = "0.0.0.0"  # the classroom's network, without TLS
        with pytest.raises(RuntimeError, match="the hub exited"):
            hub.start(timeout=60)
        assert "needs TLS: set ATTN_HUB_CERT and ATTN_HUB_KEY" in (hub.state / "hub.log").read_text()
        hub = LocalHub(ROOT / "build" / "hub-state-test", students=1)
        with pytest.raises(RuntimeError, match="the hub exited"):
            hub.start(timeout=60)
        log = (hub.state / "hub.log").read_text()
        shutil.rmtree(hub.state)
        assert "is under build/, which `rm -rf build` deletes" in log
        tls = {"cert": cert, "key": key, "environment": students_environment(top)}
        hub = LocalHub(top / "tls", students=1, **tls)
        hub.start()
        try:
            assert hub.url.startswith("https://127.0.0.1:")
            user = HubUser(hub.url, "student01", verify=str(cert))
            user.log_in(hub.passwords["student01"])
            assert user.model()["name"] == "student01", "a student logs in over HTTPS"
            with pytest.raises(requests.exceptions.SSLError):
                requests.get(f"{hub.url}/hub/login", timeout=30)  # an unknown certificate: refused
            with pytest.raises(requests.ConnectionError):
                requests.get(hub.url.replace("https", "http") + "/hub/login", timeout=30)
        finally:
            hub.close()
    finally:
        shutil.rmtree(top, ignore_errors=True)
