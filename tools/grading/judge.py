"""Autograding without trusting the submission: nbgrader's ``Execute`` step, replaced.

nbgrader's own autograde runs each submitted notebook in a kernel of the teacher's, tests and all,
so the student's code runs as the teacher and can rewrite its own tests' verdicts. Here, in
``tools/grading/nbgrader_config.py``, :class:`SandboxedGrading` takes ``Execute``'s place among
``Autograde.autograde_preprocessors`` (nbgrader's sanitising, its ``SaveAutoGrades``, late
penalties and feedback stay as they are):

- **the course's assignments** (``tools/grading/lessons/``): only the student's answer cells
  are taken from the submission, by their nbgrader id, and run in the sandbox
  (``tools/grading/sandbox.py``), where they define the functions the questions ask for. Every other
  cell comes from the teacher's source notebook (hidden tests included) and runs here, in the
  grader, where each function the student wrote is a :class:`Remote` stand-in: calling it sends
  the arguments to the sandbox and brings back what the student's function returned, as numbers
  (``codec``). The self-checks judge those numbers against the model computed here, so nothing in
  the submission can reach a test, a check, numpy's comparisons or attnlib; a cell the submission
  added or changed is never run.
- **any other nbgrader assignment** (one a teacher wrote in nbgrader's format): every code cell of
  the sanitised notebook runs in the sandbox in order, as plain Python, and each test cell's verdict
  is its own output. The teacher and the class are safe from it, but a submission can still tamper
  with its own tests there: write assignments the course's way (a function per question) to have
  them judged outside.

A submission that runs past its time or whose process dies is **not graded**: its remaining
tests get the reason as their error, and the reason is written to the course's
``not_graded.json``, which ``week.py export`` adds to ``grades.csv``.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import nbformat
import numpy as np
from assignments import ASSIGNMENTS, Assignment
from codec import CodecError, decode, encode
from nbformat.notebooknode import NotebookNode
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from sandbox import Sandbox, SandboxError
from traitlets import Float, List, Unicode

#: What the sandbox runs before a course assignment's answer cells: the numpy they are written with.
STUDENT_SETUP = "import numpy as np"
#: The most characters of a cell's printed text and of an error's message kept in the graded notebook.
MAX_TEXT = 4000
#: Where the reasons a submission was not graded are kept, in the course folder.
REPORT = "not_graded.json"


class StudentCodeError(RuntimeError):
    """The student's function raised, or returned something that is not numbers."""


class Remote:
    """A student's function, living in the sandbox: called here, it runs there."""

    def __init__(self, box: Sandbox, name: str) -> None:
        self.box, self.name = box, name
        self.__name__ = self.__qualname__ = name

    def __repr__(self) -> str:
        return f"<your function {self.name}, run in the grading sandbox>"

    def __call__(self, *args: object) -> object:
        try:
            request = {"op": "call", "function": self.name, "args": encode(args)}
        except CodecError as error:
            raise TypeError(f"the grader cannot send {self.name} its arguments: {error}") from None
        reply = self.box.request(request)
        error = reply.get("error")
        if error:
            raise StudentCodeError(_explain(error, self.name))
        try:
            return decode(reply["value"])
        except (KeyError, CodecError) as error:
            raise StudentCodeError(f"{self.name} returned {error}") from None


def _explain(error: dict, where: str) -> str:
    """A student's error in words, with the library's absence said plainly."""
    text = f"{where}: {error.get('ename')}: {error.get('evalue')}"
    if error.get("ename") == "ModuleNotFoundError" and any(
        name in str(error.get("evalue")) for name in ("'attnlib", "'course")
    ):
        text += " (attnlib and the course are not there when grading: compute it yourself, with numpy)"
    return text


def _stream(text: str) -> NotebookNode:
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def _error(ename: str, evalue: str, lines: list[str]) -> NotebookNode:
    return nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=lines)


def _run_here(cell: NotebookNode, namespace: dict) -> None:
    """Run a teacher's cell in the grader; its prints and its error become its outputs."""
    printed = io.StringIO()
    cell.outputs = []
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(cell.source, f"<{_grade_id(cell) or 'cell'}>", "exec"), namespace)
    except Exception as error:  # a test's failure is its verdict
        if printed.getvalue():
            cell.outputs.append(_stream(printed.getvalue()[:MAX_TEXT]))
        message = str(error)[:MAX_TEXT]  # a check's message may quote the student's answer
        cell.outputs.append(_error(type(error).__name__, message, [f"{type(error).__name__}: {message}"]))
        return
    if printed.getvalue():
        cell.outputs.append(_stream(printed.getvalue()[:MAX_TEXT]))


def _outputs(cell: NotebookNode, reply: dict, where: str) -> None:
    """A sandboxed cell's reply as the cell's outputs (its texts cut to ``MAX_TEXT``: the
    submission wrote them)."""
    printed, error = reply.get("stdout"), reply.get("error")
    cell.outputs = [_stream(str(printed)[:MAX_TEXT])] if printed else []
    if error:
        error = error if isinstance(error, dict) else {"ename": "Error", "evalue": str(error)}
        explained = _explain(error, where)[:MAX_TEXT]
        frames = error.get("traceback") if isinstance(error.get("traceback"), list) else []
        lines = [str(line)[:MAX_TEXT] for line in frames[-8:-1]] + [explained]
        cell.outputs.append(_error(str(error.get("ename"))[:100], explained, lines))


def _grade_id(cell: NotebookNode) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def judge_outside(
    box: Sandbox, assignment: Assignment, source: NotebookNode, submitted: NotebookNode
) -> NotebookNode:
    """The teacher's notebook, each answer cell replaced by the student's and every cell run:
    the student's answers in the sandbox, everything else here."""
    answers = {_grade_id(cell): cell.source for cell in submitted.cells if cell.cell_type == "code"}
    questions = {f"{question.id}-answer": question for question in assignment.questions}
    graded = nbformat.from_dict(json.loads(json.dumps(source)))
    namespace: dict = {"__name__": "__main__"}
    box.request({"op": "exec", "code": STUDENT_SETUP})
    with np.printoptions():  # a cell's print settings end with the notebook
        for cell in graded.cells:
            if cell.cell_type != "code":
                continue
            question = questions.get(_grade_id(cell))
            if question is None:
                _run_here(cell, namespace)
                continue
            blank = cell.source.split("### BEGIN SOLUTION")[0] + "raise NotImplementedError()"
            cell.source = answers.get(_grade_id(cell), blank)
            definitions = cell.source.rstrip()
            if definitions.endswith(question.binds):
                definitions = definitions[: -len(question.binds)]
            try:  # the cell's functions, without the line that binds the lesson's names (run here)
                reply = box.request({"op": "exec", "code": definitions})
            except SandboxError as error:
                reply = {"error": {"ename": "NotGraded", "evalue": str(error)}}
            _outputs(cell, reply, "your answer cell")
            name = question.name
            namespace[name] = Remote(box, name)
            binding = nbformat.v4.new_code_cell(question.binds)
            _run_here(binding, namespace)
            cell.outputs += binding.outputs
    return graded


def run_inside(box: Sandbox, notebook: NotebookNode) -> NotebookNode:
    """Every code cell of ``notebook`` run in the sandbox, in order; the replies become the outputs."""
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        try:
            reply = box.request({"op": "exec", "code": cell.source})
        except SandboxError as error:
            reply = {"error": {"ename": "NotGraded", "evalue": str(error)}}
        _outputs(cell, reply, "this cell")
    return notebook


def record(root: Path, student: str, assignment: str, step: str, reason: str | None) -> None:
    """Keep (or clear, with None) why ``step`` (``"refused"`` at collection, ``"judge"`` when
    grading) left ``student``'s ``assignment`` ungraded, in ``root/not_graded.json``."""
    path = root / REPORT
    reasons = json.loads(path.read_text()) if path.exists() else {}
    notes = reasons.setdefault(f"{student}/{assignment}", {})
    if reason:
        kept = notes.get(step, [])  # a refusal is listed once, however often collect meets it again
        notes[step] = ([*kept, reason] if reason not in kept else kept) if step == "refused" else reason
    else:
        notes.pop(step, None)
    kept = {key: value for key, value in reasons.items() if value}
    path.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n")


def status(root: Path, student: str, assignment: str, submitted: bool) -> str:
    """The grades table's word on ``student``'s ``assignment``: graded, not submitted, or not
    graded and why (with every submission refused on the way, and feedback that could not be written)."""
    path = root / REPORT
    notes = (json.loads(path.read_text()) if path.exists() else {}).get(f"{student}/{assignment}", {})
    refused = "; ".join(notes.get("refused", []))
    feedback = f"no feedback: {notes['feedback']}" if notes.get("feedback") else ""
    if notes.get("judge"):
        judged = (
            notes["judge"] if notes["judge"].startswith("not graded") else f"not graded: {notes['judge']}"
        )
        return "; ".join(filter(None, [judged, refused, feedback]))
    if not submitted:
        return f"not graded: {refused}" if refused else "not submitted"
    return "; ".join(filter(None, ["graded", refused, feedback]))


class SandboxedGrading(NbGraderPreprocessor):
    """nbgrader's ``Execute``, replaced: each submission judged with its code in a sandbox."""

    budget_s = Float(120.0, help="Wall-clock seconds for a whole submission").tag(config=True)
    hidden = List(Unicode(), help="More folders the sandbox hides (the exchange, the hub's state)").tag(
        config=True
    )

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        """Judge one submitted notebook; its cells' outputs are the verdicts ``SaveAutoGrades`` reads."""
        info = resources["nbgrader"]
        coursedir = CourseDirectory(config=self.config)
        root = Path(coursedir.root).resolve()
        hidden = [root, *map(Path, self.hidden)]
        with Sandbox(self.budget_s, hidden) as box:
            assignment = ASSIGNMENTS.get(info["assignment"])
            if assignment is None:
                nb = run_inside(box, nb)
            else:
                folder = Path(coursedir.format_path(coursedir.source_directory, ".", info["assignment"]))
                source = nbformat.read(folder / f"{info['notebook']}.ipynb", as_version=4)
                nb = judge_outside(box, assignment, source, nb)
            reason = box.ended
        note = f"not graded after that: {reason}" if reason else None
        record(root, info["student"], info["assignment"], "judge", note)
        return nb, resources
