"""Run the explorers' Node tests (tests/course/js/*.test.mjs) on fixtures that attnlib computes now.

The fixtures are written into a temporary folder by make_fixtures.py; ``node --test`` then imports
the explorers' ES modules (attention_lessons/kit/widgets/js, attention_lessons/lNN_slug/*.js) and checks every
value against them to 1e-12. Skipped, with how to install Node, when ``node`` is not on the PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

HERE = Path(__file__).parent


def test_mirror_and_drawing_against_attnlib(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: install Node.js 20 or newer (Debian: apt-get install nodejs)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    subprocess.run(
        [sys.executable, str(HERE / "make_fixtures.py"), str(tmp_path)], check=True, env=env, cwd=ROOT
    )
    tests = sorted(str(path) for path in HERE.glob("*.test.mjs"))
    assert len(tests) >= 3, tests
    result = subprocess.run(
        [node, "--test", *tests],
        env={**env, "ATTNLIB_FIXTURES": str(tmp_path / "fixtures.json")},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    summary = [line for line in result.stdout.splitlines() if line.startswith(("# pass", "# fail"))]
    assert result.returncode == 0, f"node --test failed:\n{result.stdout[-6000:]}\n{result.stderr[-2000:]}"
    passed = int(summary[0].split()[2]) if summary and summary[0].startswith("# pass") else 0
    assert passed > 0, result.stdout[-2000:]
