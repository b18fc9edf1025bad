"""Run the explorers' Node tests on fixtures that attnlib computes now.

The tests are every ``*.test.mjs`` of the kit's (this folder: svg, colors, controls, a11y, mirror,
page) and of each lesson's folder (``tests/lessons/lNN_slug/*.test.mjs``, that lesson's explorers):
a new lesson adds its test to its own folder and edits no file here. The fixtures are written into
a temporary folder by make_fixtures.py (the kit's and each lesson's ``js_fixtures.py``);
``node --test`` then imports the explorers' ES modules (attention_lessons/kit/widgets/js,
attention_lessons/lNN_slug/*.js) and checks every value against them to 1e-12. Skipped, with how to
install Node, when ``node`` is not on the PATH.
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
LESSON_TESTS = ROOT / "tests" / "lessons"


def node_tests() -> list[Path]:
    """The kit's Node tests and every lesson's."""
    return sorted(HERE.glob("*.test.mjs")) + sorted(LESSON_TESTS.glob("l[0-9][0-9]_*/*.test.mjs"))


def test_every_lesson_with_an_explorer_module_has_node_tests() -> None:
    """A lesson whose folder ships an ES module (attention_lessons/lNN_slug/*.js) tests it in Node,
    in its own folder of tests."""
    modules = (ROOT / "attention_lessons").glob("l[0-9][0-9]_*/*.js")
    with_modules = sorted({path.parent.name for path in modules})
    assert with_modules, "no lesson ships an ES module: is attention_lessons/lNN_slug/*.js still the place?"
    untested = [lesson for lesson in with_modules if not any((LESSON_TESTS / lesson).glob("*.test.mjs"))]
    assert not untested, f"no tests/lessons/<lesson>/*.test.mjs for the ES modules of {untested}"


def test_mirror_and_drawing_against_attnlib(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: install Node.js 20 or newer (Debian: apt-get install nodejs)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    subprocess.run(
        [sys.executable, str(HERE / "make_fixtures.py"), str(tmp_path)], check=True, env=env, cwd=ROOT
    )
    tests = [str(path) for path in node_tests()]
    assert any(Path(t).parent == HERE for t in tests) and any(LESSON_TESTS in Path(t).parents for t in tests)
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
