"""What 4-bit weights cost, measured with a proxy: the shipped weights rounded a second time.

Lesson 16 · 1 (the aside on Q4_1). The file's weights were rounded once, from bf16 to Q4_1 (the
layers' matrices) and Q8_0 (the embedding); the bf16 weights are not available, so what that
rounding cost cannot be measured directly. The proxy measures what **one more rounding of the
same kind and size** costs: the dequantized float32 weights rounded again, by the same recipe, on
a grid that is not the first one.

Why another grid: on the very blocks the file used, the recipe gives back the weights it was
given, bit for bit (every Q4_1 block holds a number at code 0 and one at code 15, so the block's
minimum and scale come out as the stored ones, and every number sits on a code; tested, and
checked on all 3.3 million blocks of the file's matrices by ``tools/l16_measure.py``): a rounding
that changes nothing measures nothing. Blocks shifted by half a block (16 numbers) each straddle
two of the file's blocks, whose grids differ, so the second rounding moves most numbers (85% of
them at 4 bits), each by up to half its new step: an error of RMS a little under ``d/√12`` for a
scale ``d``, the size of the first rounding's.

- :func:`round_blocks`: rows rounded in blocks of 32, Q4_1's recipe (a scale and a minimum) or
  Q8_0's (a scale, symmetric codes), at any number of bits, on blocks shifted along the row;
- :func:`block_scales`: the scale each block gets (float16), for the expected error ``d/√12``;
- :func:`bits_per_weight`: the bits a number costs, the block's float16 scale (and minimum) shared;
- :func:`rerounded_model`: the model with its Q4_1 matrices (or its embedding) rounded again, and
  how far the weights moved;
- :func:`text_perplexity`: the perplexity of a text past a position, as the lesson measures it.

The recipes are llama.cpp's reference quantizers (``quantize_row_q4_1_ref``,
``quantize_row_q8_0_ref``, ``ggml-quants.c``): the scale and the codes in float32, the scale and
the minimum stored as float16, a number read back as ``d·q + m``. Every step is an elementwise
float32 operation or a maximum, which IEEE arithmetic rounds the same way on every CPU, so the
re-rounded weights are the same bits on any machine.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from attention_lessons.l16_real_language_model.analysis import next_token_losses
from attnlib.model import llama
from attnlib.validation import as_positive_int, is_number

__all__ = [
    "BLOCK",
    "bits_per_weight",
    "block_scales",
    "matrix_names",
    "rerounded_model",
    "round_blocks",
    "text_perplexity",
]

#: Numbers per block, Q4_1's and Q8_0's.
BLOCK = 32
#: The layers' matrices, which the file stores as Q4_1.
_MATRICES = ("W_q", "W_k", "W_v", "W_o", "W_gate", "W_up", "W_down")


def _checked_rows(rows: npt.ArrayLike, bits: object, shift: object, block: object) -> tuple[np.ndarray, int]:
    """``rows`` as float32 (..., n) and ``block``, after the checks :func:`round_blocks` names."""
    block = as_positive_int(block, "block", minimum=2)
    as_positive_int(bits, "bits", minimum=2, maximum=8)
    if not is_number(shift, whole=True) or not 0 <= shift < block:
        raise ValueError(
            f"shift must be a whole number from 0 to {block - 1} (block={block}), got {shift!r:.60}"
        )
    x = np.asarray(rows)
    if x.dtype.kind != "f":
        raise TypeError(f"rows must be floating-point numbers (float32 weights), got {x.dtype}")
    if x.ndim == 0 or x.shape[-1] == 0 or x.shape[-1] % block:
        raise ValueError(
            f"rows must be (..., n) with n a whole number of {block}-number blocks, got shape {x.shape}"
        )
    if not np.isfinite(x).all():
        raise ValueError("rows must be finite: a block with inf or nan has no scale")
    return x.astype(np.float32, copy=False), block


def _blocks(x: np.ndarray, shift: int, block: int) -> np.ndarray:
    """(..., n) → (..., n / block, block), the blocks starting ``shift`` numbers into the row (the
    first ``shift`` numbers close the last block: the row read as a ring)."""
    return np.roll(x, -shift, axis=-1).reshape(*x.shape[:-1], -1, block)


def _scales(b: np.ndarray, bits: int, symmetric: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each block's scale and minimum in float32, as llama.cpp computes them before storing."""
    if symmetric:
        levels = np.float32(2 ** (bits - 1) - 1)
        return np.abs(b).max(axis=-1, keepdims=True) / levels, np.zeros((*b.shape[:-1], 1), np.float32)
    levels = np.float32(2**bits - 1)
    low = b.min(axis=-1, keepdims=True)
    return (b.max(axis=-1, keepdims=True) - low) / levels, low


def block_scales(
    rows: npt.ArrayLike, bits: int, *, symmetric: bool = False, shift: int = 0, block: int = BLOCK
) -> np.ndarray:
    """The scale ``d`` (float16, as stored) that :func:`round_blocks` gives each block.

    Parameters
    ----------
    rows, bits, symmetric, shift, block
        As :func:`round_blocks`.

    Returns
    -------
    (..., n / block) float32
        Block ``k`` of a row starts ``shift + k·block`` numbers into it. Rounding moves a number by
        up to ``d/2``, an RMS of about ``d/√12`` when the numbers do not sit on the grid already.
    """
    x, block = _checked_rows(rows, bits, shift, block)
    d, _ = _scales(_blocks(x, shift, block), bits, symmetric)
    return d[..., 0].astype(np.float16).astype(np.float32)


def round_blocks(
    rows: npt.ArrayLike, bits: int, *, symmetric: bool = False, shift: int = 0, block: int = BLOCK
) -> np.ndarray:
    """``rows`` rounded in blocks along the last axis, and read back as float32.

    Q4_1's recipe (``symmetric=False``): per block, ``d = (max − min) / (2^bits − 1)`` and ``m = min``,
    each number's code ``q = ⌊(x − m)/d + ½⌋`` in ``0 … 2^bits − 1``, read back as ``d·q + m`` with
    ``d`` and ``m`` stored as float16 (``bits=4``: Q4_1 itself). Q8_0's (``symmetric=True``):
    ``d = max|x| / (2^(bits−1) − 1)``, ``q = round(x/d)`` (halves away from 0), read back as ``d·q``
    (``bits=8``: Q8_0 itself).

    Parameters
    ----------
    rows : (..., n) float
        The numbers as a GGUF file stores them: blocks run along each stored row. ``n`` a whole
        number of blocks.
    bits : int
        2 to 8.
    symmetric : bool
        Q8_0's recipe (a scale per block) instead of Q4_1's (a scale and a minimum).
    shift : int
        Where the first block starts, ``0 … block − 1`` numbers into the row; the first ``shift``
        numbers join the last ones in the last block. ``0``: the file's own blocks, on which
        re-rounding the file's numbers gives them back (the module's docstring says why);
        ``block // 2``: blocks that each straddle two of the file's.
    block : int
        Numbers per block (32 in the file).

    Returns
    -------
    (..., n) float32
    """
    x, block = _checked_rows(rows, bits, shift, block)
    b = _blocks(x, shift, block)
    d, low = _scales(b, bits, symmetric)
    inverse = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d != 0)  # an all-equal block: codes 0
    if symmetric:
        top = 2 ** (bits - 1) - 1
        scaled = b * inverse
        q = np.clip(np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5)), -top, top)
    else:
        q = np.clip(np.floor((b - low) * inverse + np.float32(0.5)), 0, 2**bits - 1)
    d16, m16 = d.astype(np.float16).astype(np.float32), low.astype(np.float16).astype(np.float32)
    back = (q.astype(np.float32) * d16 + m16).reshape(x.shape)
    return np.roll(back, shift, axis=-1)


def bits_per_weight(bits: int, *, symmetric: bool = False, block: int = BLOCK) -> float:
    """The bits one number costs: its code, and its share of the block's float16 scale (and minimum).

    Q4_1: ``4 + 2·16/32 = 5``; Q8_0: ``8 + 16/32 = 8.5``.
    """
    bits = as_positive_int(bits, "bits", minimum=2, maximum=8)
    block = as_positive_int(block, "block", minimum=2)
    return bits + (1 if symmetric else 2) * 16 / block


def matrix_names(config: llama.LlamaConfig) -> list[str]:
    """The names of the model's matrices that the file stores as Q4_1: seven per layer, 210 here."""
    return [f"layer{layer}.{name}" for layer in range(config.n_layers) for name in _MATRICES]


def _targets(model: llama.LlamaModel, part: str) -> Iterator[tuple[str, bool]]:
    """Each parameter of ``part`` and whether the file stores it transposed: a matrix ``(in, out)``
    is stored as ``(out, in)``, its blocks along the input axis; the embedding as it is."""
    if part == "matrices":
        yield from ((name, True) for name in matrix_names(model.config))
    elif part == "embedding":
        yield "embed", False
    else:
        raise ValueError(f"part must be 'matrices' (the Q4_1 ones) or 'embedding' (Q8_0), got {part!r:.60}")


def rerounded_model(
    model: llama.LlamaModel,
    bits: int,
    *,
    symmetric: bool = False,
    shift: int = BLOCK // 2,
    part: str = "matrices",
) -> tuple[llama.LlamaModel, dict[str, float]]:
    """``model`` with one part of its weights rounded a second time (:func:`round_blocks`), and the change.

    Parameters
    ----------
    model : LlamaModel
        SmolLM2 as loaded (:func:`attnlib.model.llama.load_smollm2`); it is not changed.
    bits, symmetric, shift
        As :func:`round_blocks`, applied along each stored row (a matrix's input axis).
    part : {"matrices", "embedding"}
        The 210 Q4_1 matrices of the layers, or the Q8_0 embedding. The rest, the norms (float32)
        included, is shared with ``model``, not copied.

    Returns
    -------
    model : LlamaModel
        New arrays for ``part`` only: the layers' matrices are 425 MB in float32, the embedding 113 MB.
    change : dict
        ``weights`` (how many numbers were rounded again), ``changed`` (how many moved),
        ``relative_rms`` (``‖W' − W‖ / ‖W‖`` over them all), ``expected_relative_rms`` (the same
        for an error of RMS ``d/√12`` in each block, ``d`` the new scales) and ``max_abs`` (the
        largest move).
    """
    if not isinstance(model, llama.LlamaModel):
        raise TypeError(f"model must be an attnlib.model.llama.LlamaModel, got {type(model).__name__}")
    params = dict(model.params)
    total = {"weights": 0, "changed": 0, "square": 0.0, "moved": 0.0, "expected": 0.0, "max_abs": 0.0}
    for name, transposed in _targets(model, part):
        stored = params[name].T if transposed else params[name]
        again = round_blocks(stored, bits, symmetric=symmetric, shift=shift)
        move = (again - stored).astype(np.float64)
        d = block_scales(stored, bits, symmetric=symmetric, shift=shift).astype(np.float64)
        total["weights"] += stored.size
        total["changed"] += int(np.count_nonzero(move))
        total["square"] += float(np.square(stored, dtype=np.float64).sum())
        total["moved"] += float(np.square(move).sum())
        total["expected"] += float(np.square(d).sum()) * BLOCK / 12
        total["max_abs"] = max(total["max_abs"], float(np.abs(move).max()))
        params[name] = again.T if transposed else again  # back to the model's layout
    change = {
        "weights": total["weights"],
        "changed": total["changed"],
        "relative_rms": float(np.sqrt(total["moved"] / total["square"])),
        "expected_relative_rms": float(np.sqrt(total["expected"] / total["square"])),
        "max_abs": total["max_abs"],
    }
    return dataclasses.replace(model, params=params), change


def text_perplexity(model: llama.LlamaModel, ids: npt.ArrayLike, *, past: int = 64) -> float:
    """The perplexity of ``ids`` past position ``past``: ``exp`` of the mean loss of the predictions
    of tokens ``past + 1 …`` (lesson 16 · 5 and · 6 on their text: ``past=64``). One forward pass."""
    t = np.asarray(ids)
    past = as_positive_int(past, "past", minimum=0)
    if t.ndim != 1 or len(t) < past + 2:
        raise ValueError(
            f"ids must be one sequence of more than past + 1 = {past + 1} tokens, got shape {t.shape}"
        )
    losses = next_token_losses(llama.forward(model, t), t)
    return float(np.exp(losses[past:].mean()))
