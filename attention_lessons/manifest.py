"""The lessons' manifests: ``attention_lessons/lNN_slug/lesson.toml``, one per lesson, read and checked.

A manifest is the one list of what the tests and the build tools know about a lesson::

    >>> from attention_lessons.manifest import lessons
    >>> [(lesson.id, lesson.part, lesson.explorers) for lesson in lessons()][4]
    ('04', 'I', ('scaling_explorer',))

``attention_lessons/template/lesson.toml`` explains every field; a folder not named ``lNN_slug`` (the
template) is no lesson. :func:`lessons` refuses, naming the file and the field, a manifest that
lacks a field, has one it does not know or of the wrong kind, or does not match its folder, and
a notebook ``notebooks/NN_slug.ipynb`` without a manifest (or a manifest without its notebook).
"""

from __future__ import annotations

import importlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT / "attention_lessons"
NOTEBOOKS = ROOT / "notebooks"
MANIFEST = "lesson.toml"
FOLDER = re.compile(r"l(\d\d)_([a-z0-9_]+)")
#: The course's parts, in order: I the formula step by step, II what real models add, III attention
#: at work, IV the learner's own model.
PARTS = ("I", "II", "III", "IV")
#: Where a hidden answer must not be seen: "solutions" (printed by the lesson's solution cells,
#: so only the student copy must not show it) or "nowhere" (a self-check's answer, which no cell
#: of the lesson prints).
SHOWN = ("solutions", "nowhere")


#: CONTRIBUTING.md's "Adding a lesson", step by step: a failing test names the step it misses.
STEPS = ("The folder", "The notebook", "The manifest", "The guide and the lists", "Run it")


def step(number: int) -> str:
    """How a failure names the step of "Adding a lesson" it misses.

    >>> step(3)
    "step 3, The manifest, of CONTRIBUTING.md's 'Adding a lesson'"
    """
    return f"step {number}, {STEPS[number - 1]}, of CONTRIBUTING.md's 'Adding a lesson'"


class ManifestError(ValueError):
    """A manifest that cannot be read as a lesson's: the message names the file, the field and the
    step of "Adding a lesson" that fills it (3, the manifest, unless said otherwise)."""

    def __init__(self, message: str, *, missed: int = 3) -> None:
        super().__init__(f"{message} ({step(missed)})")


@dataclass(frozen=True)
class Hidden:
    """One answer a student copy must not show: ``recipe`` is a function of the lesson folder's
    ``answers.py`` that returns the answer's values as the lesson prints them."""

    what: str
    recipe: str
    shown: str


@dataclass(frozen=True)
class Lesson:
    """What a lesson's manifest says (its fields: ``attention_lessons/template/lesson.toml``)."""

    folder: Path
    number: int
    title: str
    part: str
    notebook: str
    explorers: tuple[str, ...]
    self_checks: tuple[str, ...]
    hidden: tuple[Hidden, ...]
    no_solution_values: str
    answers_nowhere_else: bool
    answers_shared: tuple[str, ...]
    data: tuple[str, ...]
    model_wheels: tuple[str, ...]
    data_downloads: tuple[str, ...]
    extra: str
    kernel_peak_mib: float
    kernel_target_mib: float
    colours_by_meaning: bool
    colour_meanings: tuple[str, ...]
    minutes: int
    minutes_with_homework: int
    homework: str

    @property
    def id(self) -> str:
        """The lesson's two-digit number, ``"04"``."""
        return f"{self.number:02d}"

    @property
    def time(self) -> str:
        """The lesson's time as the instructor's guide gives it, its **Time:**.

        >>> times = {lesson.id: lesson.time for lesson in lessons()}
        >>> times["15"], times["16"]
        ('80 minutes', '90 minutes, or 45 with sections 1 to 3 as homework')
        """
        if not self.minutes_with_homework:
            return f"{self.minutes} minutes"
        return f"{self.minutes} minutes, or {self.minutes_with_homework} with {self.homework} as homework"

    @property
    def install_extra(self) -> str:
        """The extra of the package ``attention-lessons`` that the lesson's install cell installs (a
        ``[project.optional-dependencies]`` of pyproject.toml): the manifest's ``extra``, or where it
        gives none ``"model"`` for a lesson with ``model_wheels`` and ``"lessons"`` for the others.

        >>> extras = {lesson.id: lesson.install_extra for lesson in lessons()}
        >>> extras["08"], extras["13"], extras["19"]
        ('lessons', 'model', 'pytorch')
        """
        return self.extra or ("model" if self.model_wheels else "lessons")

    @property
    def path(self) -> Path:
        """The lesson's notebook."""
        return NOTEBOOKS / self.notebook

    def hidden_values(self, shown: str) -> list[str]:
        """The values of the hidden answers shown ``shown`` ("solutions" or "nowhere"), as printed.

        Raises
        ------
        ManifestError
            When a recipe the manifest names is not a function of the folder's ``answers.py``.
        """
        if shown not in SHOWN:
            raise ValueError(f"shown must be one of {SHOWN}, got {shown!r}")
        wanted = [answer for answer in self.hidden if answer.shown == shown]
        if not wanted:
            return []
        recipes = importlib.import_module(f"attention_lessons.{self.folder.name}.answers")
        missing = [answer.recipe for answer in wanted if not callable(getattr(recipes, answer.recipe, None))]
        if missing:
            raise ManifestError(f"{self.folder / MANIFEST}: hidden recipes {missing} are not in answers.py")
        return [value for answer in wanted for value in getattr(recipes, answer.recipe)()]


#: Each field's kind, and its value where a manifest may leave it out (``None``: it may not).
FIELDS: dict[str, tuple[str, object]] = {
    "number": ("a whole number", None),
    "title": ("a string", None),
    "part": ("a string", None),
    "notebook": ("a string", None),
    "explorers": ("a list of strings", None),
    "self_checks": ("a list of strings", None),
    "hidden": ("a list of tables", []),
    "no_solution_values": ("a string", ""),
    "answers_nowhere_else": ("true or false", False),
    "answers_shared": ("a list of strings", []),
    "data": ("a list of strings", None),
    "model_wheels": ("a list of strings", []),
    "data_downloads": ("a list of strings", []),
    "extra": ("a string", ""),
    "kernel_peak_mib": ("a number", None),
    "kernel_target_mib": ("a number", 300),
    "colours_by_meaning": ("true or false", None),
    "colour_meanings": ("a list of strings", None),
    "minutes": ("a whole number", None),
    "minutes_with_homework": ("a whole number", 0),
    "homework": ("a string", ""),
}
_KINDS = {
    "a whole number": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "a number": lambda value: isinstance(value, int | float) and not isinstance(value, bool),
    "a string": lambda value: isinstance(value, str),
    "true or false": lambda value: isinstance(value, bool),
    "a list of strings": lambda value: isinstance(value, list) and all(isinstance(v, str) for v in value),
    "a list of tables": lambda value: isinstance(value, list) and all(isinstance(v, dict) for v in value),
}
_HIDDEN_FIELDS = ("what", "recipe", "shown")


def _checked(path: Path, name: str, value: object) -> object:
    """``value`` of the field ``name`` (a list as a tuple), refused when it is not of the field's kind."""
    kind, _default = FIELDS[name]
    if not _KINDS[kind](value):
        raise ManifestError(f"{path}: {name} must be {kind}, got {value!r}")
    return tuple(value) if isinstance(value, list) else value


def _hidden(path: Path, entries: tuple[dict, ...]) -> tuple[Hidden, ...]:
    """The ``[[hidden]]`` tables of a manifest, each with exactly ``what``, ``recipe`` and ``shown``."""
    answers = []
    for index, entry in enumerate(entries):
        where = f"{path}: hidden[{index}]"
        if set(entry) != set(_HIDDEN_FIELDS):
            raise ManifestError(f"{where} must be a table with exactly {_HIDDEN_FIELDS}, got {entry!r}")
        if not all(isinstance(entry[key], str) and entry[key] for key in _HIDDEN_FIELDS):
            raise ManifestError(f"{where}: what, recipe and shown must be non-empty strings")
        if entry["shown"] not in SHOWN:
            raise ManifestError(f"{where}.shown must be one of {SHOWN}, got {entry['shown']!r}")
        answers.append(Hidden(entry["what"], entry["recipe"], entry["shown"]))
    return tuple(answers)


def read(path: Path) -> Lesson:
    """The lesson that the manifest ``path`` (``attention_lessons/lNN_slug/lesson.toml``) describes.

    Raises
    ------
    ManifestError
        Naming ``path`` and the field: one missing, unknown or of the wrong kind, a number or
        notebook that is not the folder's, a part that is not one of :data:`PARTS`, ``minutes`` that is not
        more than 0, ``minutes_with_homework`` without ``homework`` (or the other way round) or not
        less than ``minutes``, an ``extra`` that is not an extra's name (lowercase), or a ``hidden``
        list shown in solutions together with ``no_solution_values``.
    """
    try:
        fields = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ManifestError(f"{path}: not TOML: {error}") from error
    unknown = sorted(set(fields) - set(FIELDS))
    if unknown:
        raise ManifestError(f"{path}: unknown fields {unknown} (the fields: {list(FIELDS)})")
    missing = [name for name, (_, default) in FIELDS.items() if default is None and name not in fields]
    if missing:
        raise ManifestError(
            f"{path}: missing fields {missing} (attention_lessons/template/lesson.toml explains them)"
        )
    values = {name: _checked(path, name, fields.get(name, default)) for name, (_, default) in FIELDS.items()}
    values["hidden"] = _hidden(path, values["hidden"])
    folder = FOLDER.fullmatch(path.parent.name)
    if folder is None:
        raise ManifestError(f"{path}: a lesson's folder is named lNN_slug, like l04_scaling")
    if values["number"] != int(folder[1]):
        raise ManifestError(f"{path}: number is {values['number']}, but the folder is lesson {folder[1]}")
    if values["notebook"] != f"{folder[1]}_{folder[2]}.ipynb":
        expected = f"{folder[1]}_{folder[2]}.ipynb"
        raise ManifestError(f"{path}: notebook must be {expected}, the folder's, got {values['notebook']!r}")
    if values["part"] not in PARTS:
        raise ManifestError(f"{path}: part must be one of {PARTS}, got {values['part']!r}")
    if values["minutes"] <= 0:
        raise ManifestError(
            f"{path}: minutes, the time lesson {folder[1]} takes a class, must be more than 0"
        )
    if ("minutes_with_homework" in fields) != ("homework" in fields):
        raise ManifestError(f"{path}: minutes_with_homework and homework go together (or neither is given)")
    if "minutes_with_homework" in fields and not 0 < values["minutes_with_homework"] < values["minutes"]:
        raise ManifestError(
            f"{path}: minutes_with_homework must be more than 0 and less than minutes "
            f"({values['minutes']}), got {values['minutes_with_homework']}"
        )
    if "extra" in fields and not re.fullmatch(r"[a-z][a-z0-9-]*", values["extra"]):
        raise ManifestError(
            f"{path}: extra names an extra of attention-lessons, like 'model', got {values['extra']!r}"
        )
    if "homework" in fields and not values["homework"].strip():
        raise ManifestError(f"{path}: homework names the part of lesson {folder[1]} done at home, got ''")
    if values["no_solution_values"] and any(answer.shown == "solutions" for answer in values["hidden"]):
        raise ManifestError(f"{path}: hidden lists answers shown in solutions, so no_solution_values must go")
    return Lesson(folder=path.parent, **values)


def lessons(course: Path = COURSE, notebooks: Path = NOTEBOOKS) -> list[Lesson]:
    """Every lesson, in order: the manifests ``attention_lessons/lNN_slug/lesson.toml``, each checked.

    Raises
    ------
    ManifestError
        A manifest that :func:`read` refuses, a lesson folder without its manifest, two lessons of
        one number, or a notebook without a manifest (or a manifest without its notebook).
    """
    folders = sorted(path for path in course.iterdir() if path.is_dir() and FOLDER.fullmatch(path.name))
    bare = [folder.name for folder in folders if not (folder / MANIFEST).is_file()]
    if bare:
        raise ManifestError(
            f"{course}: lesson folders without a {MANIFEST}: {bare} (copy attention_lessons/template's)",
            missed=1,
        )
    found = [read(folder / MANIFEST) for folder in folders]
    numbers = [lesson.number for lesson in found]
    if len(set(numbers)) != len(numbers):
        raise ManifestError(
            f"{course}: two lesson folders share a number: {[f.name for f in folders]}", missed=1
        )
    described = {lesson.notebook for lesson in found}
    saved = {path.name for path in notebooks.glob("[0-9][0-9]_*.ipynb")}
    if saved - described:
        raise ManifestError(
            f"{course}: no manifest for {sorted(saved - described)}: copy attention_lessons/template to "
            "attention_lessons/lNN_slug/ and fill its lesson.toml",
            missed=1,
        )
    if described - saved:
        raise ManifestError(
            f"{course}: manifests of no notebook in {notebooks}: {sorted(described - saved)}", missed=2
        )
    return found
