"""The classroom hub's settings, written once.

``jupyterhub_config.py`` (the local hub of ``make hub``, the tests and the classroom benchmark)
and ``z2jh.py`` (the ``config.yaml`` of a Zero to JupyterHub deployment, shown in
``docs/instructor_guide.md``) both read them, so the hub that was measured and the hub a teacher
deploys are configured alike.
"""

from __future__ import annotations

#: Options of every student's server (``c.Spawner.<name>``): JupyterLab first, no terminals (a
#: lesson needs no shell, and on a hub a terminal is a shell on the server). Kernels talk over IPC
#: sockets in the student's own runtime folder (0700), not TCP on 127.0.0.1, where any account of
#: the machine could connect to another's kernel. No user config: a student's ``~/.jupyter`` cannot
#: load server extensions that serve their own pages on the hub's origin.
SPAWNER: dict[str, object] = {
    "default_url": "/lab",
    "args": [
        "--ServerApp.terminals_enabled=False",
        "--KernelManager.transport=ipc",
        # a kernel idle for an hour is shut down (its notebook stays), even while the server is used
        "--MappingKernelManager.cull_idle_timeout=3600",
        "--MappingKernelManager.cull_interval=300",
    ],
    "disable_user_config": True,
}

#: Logins (NativeAuthenticator): five wrong passwords lock an account for a minute; a password a
#: student sets has at least 10 characters and is not one of the common ones.
AUTH: dict[str, object] = {
    "allowed_failed_logins": 5,
    "seconds_before_next_try": 60,
    "minimum_password_length": 10,
    "check_common_password": True,
}

#: Memory per student: ``benchmarks/results/classroom/`` and ``kernel_memory.json`` measure what
#: the lessons take. The limit holds lesson 16's kernel (a pretrained model in float32: it stops
#: with ``MemoryError`` under 1G) and the student's server, with room for a small lesson's kernel
#: beside them; the guarantee (``z2jh.memory_guarantee``) is read from the measurements.
MEMORY_LIMIT = "2G"
#: Disk per student's home (``disks.py``: past it, their kernels are ended until they delete, with
#: the file browser), and the reserve the class gets back when the disk fills.
HOME_LIMIT = "2G"
RESERVE = "1G"
#: Processes and threads per student, all together (``limits.py``): a server, a few kernels and
#: their threads need under a hundred.
PROCESS_LIMIT = 256
#: Each student's kernels compute on one thread: a class shares the server's cores, and a kernel
#: with a BLAS thread per core spins waiting for its threads when other kernels hold the cores
#: (lesson 16's Run All, two students at once on two cores: more than seven minutes each with
#: a thread per core; see the guide's "Sizing").
THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

#: Options of the hub (``c.JupyterHub.<name>``): a hub that restarts (an upgrade, a crash) leaves
#: the students' servers and kernels running; they reconnect when it is back.
HUB: dict[str, object] = {
    "cleanup_servers": False,
}

#: The idle culler (jupyterhub-idle-culler): a server without activity for ``timeout`` seconds is
#: stopped (its files stay in the student's home folder), checked every ``every`` seconds.
CULL: dict[str, int] = {
    "timeout": 3600,
    "every": 300,
}

#: The teacher's account (an administrator; its password is its own, see ``accounts.py``).
TEACHER = "teacher"

#: nbgrader's course, as the students' servers and the teacher's course folder name it.
COURSE_ID = "attention-lessons"
