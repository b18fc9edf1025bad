"""The student copies (``make student``, ``build/student/``): no solution left, and each one runs.

The lessons tag ``solution`` every cell that holds or prints a right answer (the ``<details>``
answers, lesson 08's "The solutions in numbers", the cells that compute a question's answer);
``tools/build_student.py`` leaves those cells out. These tests check the copies that
``make student`` wrote: no solution cell, none of the exercises' solution values anywhere in their
text (computed here with attnlib and formatted as the lessons print them, each one first found in
the full lesson's solution cells, so that the search can fail), and each copy run top to bottom
in a fresh kernel, with no error, the outputs stored in it, and every self-check saying
"No answer yet" to its empty answer.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
from conftest import hidden_answers, readable, require_build
from nbclient import NotebookClient

import attnlib
from attnlib import backward, counting, positions
from attnlib.multihead import split_heads
from course.kit import examples
from course.l04_scaling import scaling
from course.l13_real_model.checks import AttentionLayer
from course.l14_induction_heads import induction

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
COPIES = ROOT / "build" / "student" / "notebooks"
LESSONS = sorted(path.name for path in NOTEBOOKS.glob("*.ipynb"))
SOLUTION_TAG = "solution"
IGNORE_TAG = "nbval-ignore-output"
NO_ANSWER = "No answer yet"
NOTE_ID = "student-copy"  # the note build_student.py puts after the title
#: How many self-checks (a check called on an answer that is still ``...`` or ``None``) each
#: lesson has; a lesson that is not listed has none.
SELF_CHECKS = {"04": 2, "05": 2, "08": 11, "09": 3, "10": 3, "11": 3, "12": 3, "13": 3, "14": 3, "15": 3}


def _lesson(name: str) -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOKS / name, as_version=4)


def _copy(name: str) -> nbformat.NotebookNode:
    return nbformat.read(COPIES / name, as_version=4)


def _is_solution(cell: nbformat.NotebookNode) -> bool:
    return SOLUTION_TAG in cell.metadata.get("tags", [])


def _output_texts(cell: nbformat.NotebookNode) -> list[str]:
    """The text outputs of a cell, one string per output (a widget's view shows as its text)."""
    texts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            texts.append(output.text)
        texts.extend(
            readable(output.get("data", {}).get(mime, ""))
            for mime in ("text/plain", "text/markdown", "text/html")
        )
    return texts


def _printed(cell: nbformat.NotebookNode) -> tuple[str, list[str]]:
    """What a code cell printed (its streams joined, however they were cut) and what it displayed."""
    streams = "".join(output.text for output in cell.outputs if output.output_type == "stream")
    shown = [output.data.get("text/plain", "") for output in cell.outputs if "data" in output]
    return streams, shown


def _text(cells: list[nbformat.NotebookNode]) -> str:
    """Everything a reader can read in ``cells``: sources and text outputs, with ASCII minus signs."""
    return "\n".join(text for cell in cells for text in [cell.source, *_output_texts(cell)]).replace("−", "-")


def _shows(text: str, value: str) -> bool:
    """Whether ``value`` occurs in ``text`` as a whole number or phrase (not inside a longer number)."""
    return re.search(rf"(?<![\d.]){re.escape(value)}(?!\d)", text) is not None


def _number(value: float, decimals: int = 4) -> str:
    """A number as numpy prints it with ``precision=decimals, suppress=True`` (0.576, not 0.5760)."""
    return np.format_float_positional(round(float(value), decimals), precision=decimals, trim="-")


def _lesson_08_values() -> list[str]:
    """The solutions of exercises 1 to 3 of lesson 08, as its solutions print them."""
    ex1 = examples.plain_attention_exercise()
    one = attnlib.attention_steps(ex1.Q, ex1.K, ex1.K, scale=1.0)
    hand = examples.attention_by_hand()
    three = attnlib.attention_steps(*hand)
    (n_q, d_k), (n_k, d_v) = hand.Q.shape, hand.V.shape
    totals = counting.operation_counts(n_q, n_k, d_k, d_v, stable=False).totals()
    with np.printoptions(precision=4, suppress=True):  # lesson 08's print options
        printed = [str(three.raw_scores), str(attnlib.causal_mask(4))]  # 3, step 1: S; 2d: the mask
    exercise_1 = [*one.weights, one.output[0], one.output[2]]  # a and c (its middle entry, 2, is everywhere)
    exercise_3 = [*three.scaled_scores.ravel(), *three.weights.ravel(), *three.output.ravel()]
    return [
        *printed,
        *(_number(value) for value in [*exercise_1, *exercise_3]),
        *(_number(value, 2) for value in three.output.ravel()),  # Z to 2 decimals
        str((n_q, n_k)),  # 2a: the shape of the weights
        _number(attnlib.default_scale(6)),  # 2b: the scale of queries and keys of d_k = 6
        f"{totals['multiplications']} multiplications and {totals['additions']} additions",  # 2c
    ]


def _lesson_11_values() -> list[str]:
    """Lesson 11's "which way does a score move?": the weighted mean of da, and ds of key 1."""
    a_row, da = np.array([0.5, 0.3, 0.2]), np.array([-1.0, -0.2, -0.5])
    return [f"{a_row @ da:.2f}", _number(backward.softmax_backward(a_row, da)[1], 3)]


def _lesson_15_values() -> list[str]:
    """Lesson 15's cache self-check (a decoder's cache for 20,000 tokens, in MiB) and its question of
    8 sequences of 4,096 tokens with Llama 2 7B and 70B, as its solution cells print them."""
    exercise = counting.DecoderShape(
        n_layers=24, d_model=2048, n_heads=16, n_kv_heads=4, d_mlp=5632, vocab=32000
    )
    mib = counting.kv_cache_bytes(exercise, 20_000, bytes_per_number=2) / 2**20
    published = examples.published_decoders()
    batches = [
        counting.kv_cache_bytes(published[name].shape, 4096, bytes_per_number=2, batch=8) / 2**30
        for name in ("Llama 2 7B", "Llama 2 70B")
    ]
    return [f"{mib:.1f} MiB", *(f"take {gib:.1f} GiB" for gib in batches)]


def _lesson_14_values() -> list[str]:
    """Where lesson 14's self-check asks the induction head to look: the key after the earlier copy."""
    half = induction.load_induction_run().half
    sequence = induction.repeated_sequences(1, half, 16, seed=7)[0]  # the lesson's new sequence
    query = half + 3
    earlier = max(p for p in range(query) if sequence[p] == sequence[query])
    return [f"the induction head looks at position {earlier + 1}"]


#: The solution values each lesson's solution cells give, as the lesson prints them.
SOLUTION_VALUES = {
    "04": [f"{attnlib.default_scale(4096 // 32):.4f}"],  # the scale of one head: d_model = 4096, 32 heads
    "08": _lesson_08_values(),
    "09": [
        str(split_heads(np.zeros((8, 10, 64)), 4).shape),  # self-check 1
        f"{counting.multi_head_parameter_counts(768, n_heads=12)['total']:,}".replace(
            ",", "{,}"
        ),  # 2, in LaTeX
        "[True, False, False, False]",  # self-check 3: the row of the sentence of length 1
        str((4, 7, 20)),  # the question on cross-attention: (heads, n_q, n_k)
    ],
    "11": _lesson_11_values(),
    "13": [
        str(4 * 384**2 + 4 * 384),  # one attention layer of all-MiniLM-L6-v2: four 384 × 384 and biases
        "most to 'sat'",  # the token that cat attends to most in layer 1, head 8
        str(AttentionLayer(768, 12, 3072).d_k),  # BERT-base's d_k, read off its config
    ],
    "14": _lesson_14_values(),
    "15": _lesson_15_values(),
}


def _lesson_04_never_printed() -> list[str]:
    """The weights of lesson 04's new query (d_k = 64, seed 1), which its self-check asks for."""
    Q, K = scaling.random_queries_keys(64, n_queries=1, n_keys=8, seed=1)
    return [_number(value) for value in attnlib.attention_steps(Q[0], K, K).weights]


def _lesson_05_never_printed() -> list[str]:
    """Lesson 05's self-checks: the queries Q_y against K_x, and the real rows of *she likes tea*."""
    rng = np.random.default_rng(1)  # the 3 queries, 5 keys and 5 values of section 2, in that order
    _, K_x, V_x = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    Q_y = np.array([[1.0, 0.0, -1.0, 2.0], [0.5, 1.5, 0.0, -1.0]])
    emb = examples.she_likes_coffee()
    table = dict(zip(emb.tokens, emb.X, strict=True)) | {"tea": np.array([1.0, 0.1, 0.6, 0.3])}
    X = np.array([table[word] for word in ("she", "likes", "tea")] + [np.zeros(4)])  # + one padding token
    real = np.array([True, True, True, False])
    padded = attnlib.attention_steps(*attnlib.qkv(X, emb.W_q, emb.W_k, emb.W_v), mask=real).weights
    weights = [*attnlib.attention_steps(Q_y, K_x, V_x).weights.ravel(), *padded[:3, :3].ravel()]
    return [_number(value) for value in weights]  # the padding's row and column (1/3, 0) are everywhere


#: Self-checks' answers that no cell of the lesson prints (a check never shows the answer).
NEVER_PRINTED = {
    "04": _lesson_04_never_printed(),
    "05": _lesson_05_never_printed(),
    "10": [_number(value) for value in positions.sinusoidal(101, 8)[100, :4]],  # PE[100, :4], d_model = 8
    "12": [
        _number(np.exp(2.0 - 5.0)),  # the rescaling factor when the maximum grows from 2 to 5
        str(counting.tile_counts(2048, 2048, block_q=128, block_k=128, causal=True).skipped),
        *(  # self-check 1: the GiB of one head's float32 weights at n = 24,576, as a table would print it
            f"{counting.weights_bytes(24_576, 24_576) / 2**30:{spec}}" for spec in ("", ".2f", ".3f")
        ),
    ],
}


def _stale_or_missing() -> str | None:
    """Why build/student cannot be tested (missing, or older than the lessons or the tool), or None."""
    copies = [COPIES / name for name in LESSONS]
    missing = [path.name for path in copies if not path.exists()]
    if missing:
        return f"build/student has no {missing}"
    newest = max(
        path.stat().st_mtime for path in [*NOTEBOOKS.glob("*.ipynb"), ROOT / "tools" / "build_student.py"]
    )
    stale = [path.name for path in copies if path.stat().st_mtime < newest]
    return f"build/student is older than the lessons or tools/build_student.py: {stale}" if stale else None


@pytest.fixture(scope="module")
def built() -> None:
    """Skip (fail under CI) when build/student is missing or stale."""
    require_build(_stale_or_missing(), "make student")


@pytest.fixture(scope="module", params=LESSONS)
def executed(request: pytest.FixtureRequest, built: None) -> tuple[str, nbformat.NotebookNode]:
    """A student copy run top to bottom in a fresh kernel, as a learner runs it (once per lesson)."""
    notebook = _copy(request.param)
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=600,
        resources={"metadata": {"path": str(COPIES)}},
        store_widget_state=False,
    )
    client.execute()  # raises CellExecutionError, with the cell and its traceback, on an error
    return request.param, notebook


def _answer_names(source: str) -> set[str]:
    """The names a cell assigns an empty answer: ``...`` (or a dict of them), or ``None  # your answer``."""
    names = set()
    lines = source.splitlines()
    for node in ast.parse(source).body:
        if not isinstance(node, ast.Assign):
            continue
        values = (
            node.value.values if isinstance(node.value, ast.Dict) else [node.value]
        )  # or a dict of answers
        empty = any(isinstance(value, ast.Constant) and value.value is Ellipsis for value in values)
        none = isinstance(node.value, ast.Constant) and node.value.value is None
        if empty or (none and "# your" in lines[node.lineno - 1]):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return names


def _self_checks(source: str, answers: set[str]) -> int:
    """How many calls of a ``check…`` function in ``source`` are given one of ``answers``."""
    calls = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)]
    return sum(
        (getattr(call.func, "id", "") or getattr(call.func, "attr", "")).startswith("check")
        and any(isinstance(arg, ast.Name) and arg.id in answers for arg in call.args)
        for call in calls
    )


def test_the_number_formats_match_how_numpy_prints() -> None:
    assert _number(0.57603, 4) == "0.576" and _number(-1.56464, 2) == "-1.56" and _number(8.0) == "8"
    assert _shows("A = [[0.576  0.284  0.14  ]", "0.14")
    assert not _shows("0.1411", "0.14") and not _shows("10.14", "0.14") and not _shows("1120 blocks", "120")


@pytest.mark.usefixtures("built")
def test_every_lesson_has_a_copy_with_the_same_name() -> None:
    assert sorted(path.name for path in COPIES.glob("*.ipynb")) == LESSONS


@pytest.mark.parametrize("name", LESSONS)
def test_every_answer_block_of_a_lesson_is_a_solution_cell_of_its_own(name: str) -> None:
    for cell in _lesson(name).cells:
        if "<details" in cell.source:
            assert _is_solution(cell), f"a <details> block in an untagged cell: {cell.source[:80]!r}"
            source = cell.source.strip()
            assert source.startswith("<details") and source.endswith("</details>"), (
                f"a solution cell holds more than its <details> block: {cell.source[:80]!r}"
            )


@pytest.mark.usefixtures("built")
@pytest.mark.parametrize("name", LESSONS)
def test_a_copy_has_no_solution_cell_and_no_answer_block(name: str) -> None:
    copy, lesson = _copy(name), _lesson(name)
    assert not [cell for cell in copy.cells if _is_solution(cell)]
    assert hidden_answers(_text(copy.cells)) == 0
    kept = [cell.id for cell in lesson.cells if not _is_solution(cell)]
    assert [cell.id for cell in copy.cells if cell.id != NOTE_ID] == kept, "only the solutions are left out"


@pytest.mark.usefixtures("built")
@pytest.mark.parametrize("number", sorted(SOLUTION_VALUES))
def test_no_solution_value_is_in_a_copy(number: str) -> None:
    name = next(name for name in LESSONS if name.startswith(number))
    lesson = _lesson(name)
    solutions = _text([cell for cell in lesson.cells if _is_solution(cell)])
    copy = _text(_copy(name).cells)
    for value in SOLUTION_VALUES[number]:
        assert _shows(solutions, value), (
            f"{value!r} is not in the solutions of {name}: the search would find nothing"
        )
        assert not _shows(copy, value), f"the student copy of {name} gives away {value!r}"


#: Lessons whose hidden answers no other lesson may print either (given to 4 decimals, a value
#: met in another lesson's outputs is the answer given away). Every answer of theirs with at least
#: three decimals is searched, except, with the reason, a value an exercise cannot avoid.
ANSWERED_NOWHERE_ELSE = {
    "04": (),
    "08": (
        # exercise 3's S / √2 holds q₂ · k₃ / √2 = 1/√2: its data are the source exercise set's
        _number(1 / np.sqrt(2)),
    ),
}


def _distinctive(values: list[str]) -> list[str]:
    """The hidden answers with at least three decimals (short ones like 0.14 are everywhere)."""
    return [value for value in values if re.fullmatch(r"-?\d+\.\d{3,}", value)]


@pytest.mark.parametrize("number", sorted(ANSWERED_NOWHERE_ELSE))
def test_no_other_lesson_prints_a_hidden_answer(number: str) -> None:
    hidden = _distinctive([*SOLUTION_VALUES.get(number, []), *NEVER_PRINTED.get(number, [])])
    searched = [value for value in hidden if value not in ANSWERED_NOWHERE_ELSE[number]]
    assert searched, f"lesson {number} has no hidden answer with three decimals to search for"
    others = {name: _text(_lesson(name).cells) for name in LESSONS if not name.startswith(number)}
    for value in searched:
        shown = [name for name, text in others.items() if _shows(text, value)]
        assert not shown, f"lesson {number}'s hidden answer {value} is printed in {shown}"


@pytest.mark.usefixtures("built")
@pytest.mark.parametrize("number", sorted(NEVER_PRINTED))
def test_no_self_check_answer_is_printed(number: str) -> None:
    name = next(name for name in LESSONS if name.startswith(number))
    for value in NEVER_PRINTED[number]:
        assert not _shows(_text(_lesson(name).cells), value), (
            f"{name} prints {value!r}, a self-check's answer"
        )
        assert not _shows(_text(_copy(name).cells), value), f"the student copy of {name} gives away {value!r}"


def test_a_copy_runs_and_gives_the_outputs_stored_in_it(executed: tuple[str, nbformat.NotebookNode]) -> None:
    name, run = executed
    for stored, fresh in zip(_copy(name).cells, run.cells, strict=True):
        if stored.cell_type == "code" and IGNORE_TAG not in stored.metadata.get("tags", []):
            assert _printed(fresh) == _printed(stored), f"{name}: {stored.source[:60]!r} prints otherwise"
            assert fresh.execution_count == stored.execution_count


def test_every_self_check_of_a_copy_says_no_answer_yet(executed: tuple[str, nbformat.NotebookNode]) -> None:
    name, run = executed
    cells = [cell for cell in run.cells if cell.cell_type == "code"]
    answers = set().union(*(_answer_names(cell.source) for cell in cells))
    checks = 0
    for cell in cells:
        calls = _self_checks(cell.source, answers)
        said = sum(
            text.count(NO_ANSWER)
            for output in cell.outputs
            for text in [output.get("text", ""), output.get("data", {}).get("text/plain", "")]
        )
        assert said == calls, (
            f"{name}: {cell.source[:60]!r} checks {calls} empty answers, says {NO_ANSWER!r} {said}×"
        )
        checks += calls
    assert checks == SELF_CHECKS.get(name[:2], 0), f"{name} has {checks} self-checks"
