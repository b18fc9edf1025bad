"""The course reads in order: a lesson uses only attnlib, the kit, its own folder and earlier lessons,
and a lesson's tests live in its test folder.

Scanned, not trusted: every module of ``attention_lessons/lNN_slug/``, every code cell of its
notebook, and every test module. A lesson that imports a later one (lesson 04 once imported lesson
09's ``check_head_scale``) cannot be read, or shipped alone, before that later lesson; a test of
lesson NN outside ``tests/lessons/lNN_slug/`` is a test that adding or removing the lesson does not
find. Contracts outside the lesson folders reach the lessons through their manifests
(``attention_lessons.manifest.lessons()``) and ``declared.py``, never by importing one by name.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from conftest import LESSON_TESTS, ROOT

from attention_lessons.manifest import COURSE, lessons

LESSON = re.compile(r"attention_lessons\.(l\d\d)_\w+")


def imported(source: str) -> set[str]:
    """The modules ``source`` imports (``import a.b``, ``from a.b import c``: ``a.b`` and ``a.b.c``)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return found


def code_cells(notebook: Path) -> str:
    """A notebook's code cells as one Python source, its IPython lines (``%``, ``!``) left out."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    lines = [
        line
        for cell in cells
        if cell["cell_type"] == "code"
        for line in "".join(cell["source"]).splitlines()
        if not line.lstrip().startswith(("%", "!"))
    ]
    return "\n".join(lines)


def lessons_used(modules: set[str]) -> set[int]:
    """The lesson numbers of the ``attention_lessons.lNN_slug`` modules among ``modules``."""
    return {int(match[1][1:]) for name in modules if (match := LESSON.match(name))}


def course_modules_used(modules: set[str]) -> set[str]:
    """What of the course package ``modules`` name besides the kit and the lessons (the manifest...)."""
    return {
        name
        for name in modules
        if name.startswith("attention_lessons.")
        and not name.startswith("attention_lessons.kit")
        and not LESSON.match(name)
    }


@pytest.mark.parametrize("lesson", lessons(), ids=lambda lesson: lesson.id)
def test_a_lesson_uses_only_the_kit_its_folder_and_earlier_lessons(lesson) -> None:
    sources = {path.relative_to(ROOT): path.read_text("utf-8") for path in lesson.folder.glob("*.py")}
    sources[lesson.path.relative_to(ROOT)] = code_cells(lesson.path)
    for where, source in sources.items():
        modules = imported(source)
        later = sorted(number for number in lessons_used(modules) if number > lesson.number)
        assert not later, (
            f"{where} imports lessons {later}, which come after lesson {lesson.id}: move what both "
            "use into attention_lessons/kit"
        )
        other = course_modules_used(modules)
        assert not other, f"{where} imports {sorted(other)}: a lesson uses attnlib, the kit and lessons"


def test_the_scan_finds_what_it_looks_for() -> None:
    modules = imported(
        "import attention_lessons.l09_many_heads.checks as c\nfrom attention_lessons.kit import checks\n"
        "from attention_lessons.l16_real_language_model import widgets\nfrom . import answers\n"
        "from attention_lessons.manifest import lessons\n"
    )
    assert lessons_used(modules) == {9, 16}
    manifest = "attention_lessons.manifest"
    assert course_modules_used(modules) == {manifest, f"{manifest}.lessons"}


def _test_modules() -> list[Path]:
    return sorted((ROOT / "tests").rglob("*.py"))


@pytest.mark.parametrize("path", _test_modules(), ids=lambda path: str(path.relative_to(ROOT / "tests")))
def test_a_lessons_tests_live_in_its_test_folder(path: Path) -> None:
    """Outside tests/lessons/lNN_slug/ no test imports a lesson by name; inside, only that lesson
    and earlier ones (and every Python file there is named test_lNN_*.py, or is declared.py or a
    helper the folder's tests import)."""
    used = lessons_used(imported(path.read_text(encoding="utf-8")))
    if not path.is_relative_to(LESSON_TESTS):
        assert not used, (
            f"tests/{path.relative_to(ROOT / 'tests')} imports lessons {sorted(used)} by name: move those "
            "tests into tests/lessons/lNN_slug/, or read the lessons from their manifests"
        )
        return
    folder = path.relative_to(LESSON_TESTS).parts[0]
    assert (COURSE / folder).is_dir(), f"tests/lessons/{folder}/ is no lesson's folder (attention_lessons/)"
    number = int(folder[1:3])
    later = sorted(n for n in used if n > number)
    assert not later, f"{path.relative_to(ROOT)} tests lesson {number:02d} but imports lessons {later}"
    if path.name.startswith("test_"):
        assert path.name.startswith(f"test_l{number:02d}_"), (
            f"{path.relative_to(ROOT)}: a lesson's test file is named test_l{number:02d}_<topic>.py "
            "(pytest needs every test file's name to be unique)"
        )


@pytest.mark.parametrize("lesson", lessons(), ids=lambda lesson: lesson.id)
def test_a_lesson_with_code_has_its_test_folder(lesson) -> None:
    """A lesson whose folder holds code of its own (beside ``__init__.py`` and ``answers.py``, which
    the student-copy tests read) has its tests in ``tests/lessons/lNN_slug/``."""
    code = sorted(
        path.name
        for path in lesson.folder.iterdir()
        if path.suffix in (".py", ".js") and path.name not in ("__init__.py", "answers.py")
    )
    tests = sorted(path.name for path in (LESSON_TESTS / lesson.folder.name).glob(f"test_l{lesson.id}_*.py"))
    assert tests or not code, (
        f"lesson {lesson.id} has {code} but no tests/lessons/{lesson.folder.name}/test_l{lesson.id}_*.py"
    )


def test_attnlibs_tests_import_no_course_code() -> None:
    """``make unit`` tests the library alone: nothing of tests/attnlib imports attention_lessons."""
    course = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests" / "attnlib").rglob("*.py")
        if any(name.split(".")[0] == "attention_lessons" for name in imported(path.read_text("utf-8")))
    )
    assert not course, f"{course} import course code: move those tests to tests/kit or tests/lessons/lNN_slug"
