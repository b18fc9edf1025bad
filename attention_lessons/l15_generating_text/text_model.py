"""Lesson 15's text model: a character-level decoder trained on these lessons' own Markdown.

- :func:`load_corpus`: the Markdown cells of lessons 00 … 14, frozen in
  ``attention_lessons/l15_generating_text/lessons_text.txt`` (``tools/train_decoder.py --extract`` wrote it;
  its SHA-256 is :data:`CORPUS_SHA256`), split into a training text and one held-out text per lesson (the
  last tenth of each lesson, cut at a paragraph).
- :class:`Vocabulary`: the characters the model knows (those seen at least
  :data:`MIN_COUNT` times; every rarer one is read as :data:`RARE`), and a ``BOS`` token that
  starts every sequence.
- :func:`load_text_model`: the committed run of ``tools/train_decoder.py`` (config, parameters,
  vocabulary, training log), its SHA-256 checked; :meth:`TextModel.generate` writes text.
- :func:`held_out_loss`, :func:`pooled_kv_losses`, :func:`uptrained_kv_losses`,
  :func:`long_text_losses`: the numbers lesson 15 measures: the loss on the held-out text as
  trained, with grouped-query attention made by pooling heads (and after a short uptraining),
  and past the trained context with a dense cache, a sliding window, and a window with sinks
  (rotated by their places in the rolling cache, and at their original positions);
  :func:`first_token_weights`: how much each head rests on ``BOS``.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from attention_lessons.kit.committed import read_committed
from attnlib.decoder import (
    DecoderConfig,
    check_parameters,
    forward,
    generate,
    next_token_losses,
    pool_kv_heads,
    train,
)
from attnlib.decoder.block import Rotation, block, layer_norm, visible_keys
from attnlib.decoder.config import as_mapping, read_npz
from attnlib.decoder.training import token_losses
from attnlib.validation import as_flag, as_positive_int, as_whole_array

__all__ = [
    "CORPUS_FILE",
    "CORPUS_SHA256",
    "HELD_OUT_FRACTION",
    "MIN_COUNT",
    "MODEL_FILE",
    "MODEL_SHA256",
    "RARE",
    "Corpus",
    "LongTextLosses",
    "TextModel",
    "Vocabulary",
    "corpus_from_text",
    "first_token_weights",
    "held_out_batch",
    "held_out_loss",
    "load_corpus",
    "load_text_model",
    "long_text_losses",
    "model_from_arrays",
    "pooled_kv_losses",
    "uptrained_kv_losses",
]

#: The lesson's package, where its committed files lie, and the script that writes them.
PACKAGE = "attention_lessons.l15_generating_text"
SCRIPT = "tools/train_decoder.py"
#: The frozen corpus, in the package's data directory.
CORPUS_FILE = "lessons_text.txt"
#: Its SHA-256; ``tools/train_decoder.py --extract`` prints it when it writes a new corpus.
CORPUS_SHA256 = "46de332e8d7f2b1d01738940ae15d85eab52300e773a3ffcee6665ac22ea6a4b"
#: The committed model (parameters, vocabulary, training log).
MODEL_FILE = "text_model.npz"
#: Its SHA-256; ``tools/train_decoder.py`` prints it when it writes a new model. The committed
#: model's CPU was not recorded; a re-run anywhere writes another hash (the file holds its wall time).
MODEL_SHA256 = "dfe233909e362790d6ebb31f1bcf58a5d64d40de4b7de648e6862aaab2f19f66"

#: A character seen fewer times than this in the corpus is read as :data:`RARE`.
MIN_COUNT = 40
#: The one symbol every rare character becomes.
RARE = "¤"
#: The share of each lesson held out (its end, cut at a paragraph).
HELD_OUT_FRACTION = 0.1
_HEADER = re.compile(r"^=== (\S+) ===$", re.MULTILINE)


# --- the corpus -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Corpus:
    """The lessons' Markdown, each lesson split into the text trained on and the text held out.

    Attributes
    ----------
    lessons : tuple of str
        The lessons' notebook names, in order.
    training : tuple of str
        Each lesson's first ~90 % (whole paragraphs).
    held_out : tuple of str
        Each lesson's last ~10 %: never seen in training.
    """

    lessons: tuple[str, ...]
    training: tuple[str, ...]
    held_out: tuple[str, ...]

    @property
    def training_text(self) -> str:
        """Every lesson's training part, one after the other (a blank line between)."""
        return "\n\n".join(self.training)


def corpus_from_text(text: str) -> Corpus:
    """Split the frozen file's text (``=== name ===`` lines before each lesson) into a :class:`Corpus`."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    parts = _HEADER.split(text)
    if len(parts) < 3 or parts[0].strip():
        raise ValueError("text must start with a '=== lesson name ===' line before each lesson's Markdown")
    names, bodies = parts[1::2], [body.strip("\n") for body in parts[2::2]]
    training, held_out = zip(*(_split(body) for body in bodies), strict=True)
    return Corpus(tuple(names), training, held_out)


def _split(body: str) -> tuple[str, str]:
    """A lesson's Markdown cut at the first paragraph break after the first 90 % of its characters."""
    cut = body.find("\n\n", int(len(body) * (1 - HELD_OUT_FRACTION)))
    if cut < 0:
        raise ValueError("a lesson is too short to hold out its last paragraph")
    return body[:cut], body[cut + 2 :]


def load_corpus() -> Corpus:
    """The committed corpus (its SHA-256 checked against :data:`CORPUS_SHA256`)."""
    return corpus_from_text(read_committed(PACKAGE, CORPUS_FILE, CORPUS_SHA256, SCRIPT).decode("utf-8"))


# --- characters and token ids -----------------------------------------------------------------


@dataclass(frozen=True)
class Vocabulary:
    """Characters ↔ token ids: id 0 is ``BOS`` (begin of sequence), then one id per character.

    Attributes
    ----------
    chars : str
        The characters, id ``1 + i`` for ``chars[i]``; :data:`RARE` among them.

    Examples
    --------
    >>> vocabulary = Vocabulary("ab ¤")
    >>> vocabulary.encode("a c")
    array([0, 1, 3, 4])
    >>> vocabulary.decode([0, 1, 3, 4])
    'a ¤'
    """

    chars: str

    #: The id that starts every sequence.
    BOS = 0

    def __post_init__(self) -> None:
        if (
            not isinstance(self.chars, str)
            or len(set(self.chars)) != len(self.chars)
            or RARE not in self.chars
        ):
            raise ValueError(f"chars must be distinct characters including the rare symbol {RARE!r}")

    @classmethod
    def from_text(cls, text: str, min_count: int = MIN_COUNT) -> Vocabulary:
        """The characters seen at least ``min_count`` times in ``text``, sorted, plus :data:`RARE`."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        counts = Counter(text)
        min_count = as_positive_int(min_count, "min_count")
        return cls("".join(sorted(ch for ch, n in counts.items() if n >= min_count and ch != RARE)) + RARE)

    @property
    def size(self) -> int:
        """Number of token ids: the characters and ``BOS``."""
        return len(self.chars) + 1

    def normalise(self, text: str) -> str:
        """``text`` with every character the vocabulary lacks replaced by :data:`RARE`."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        known = set(self.chars)
        return "".join(ch if ch in known else RARE for ch in text)

    def encode(self, text: str, *, bos: bool = True) -> np.ndarray:
        """Token ids of ``text`` (rare characters as :data:`RARE`), after ``BOS`` unless ``bos=False``."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        bos = as_flag(bos, "bos")
        index = {ch: i + 1 for i, ch in enumerate(self.chars)}
        rare = index[RARE]
        ids = [index.get(ch, rare) for ch in text]
        return np.array(([self.BOS] if bos else []) + ids, dtype=np.int64)

    def decode(self, ids: npt.ArrayLike) -> str:
        """The text of token ids (``BOS`` left out)."""
        t = as_whole_array(ids, "ids")
        if t.ndim != 1 or (t.size and (t.min() < 0 or t.max() >= self.size)):
            raise ValueError(f"ids must be one sequence of token ids 0 … {self.size - 1}, got {ids!r}")
        return "".join(self.chars[i - 1] for i in t.tolist() if i != self.BOS)


# --- the committed model ----------------------------------------------------------------------


@dataclass(frozen=True)
class TextModel:
    """The committed run of ``tools/train_decoder.py``.

    Attributes
    ----------
    config : DecoderConfig
    params : dict of str to ndarray
    vocabulary : Vocabulary
    settings : dict
        How it was trained: ``steps``, ``batch``, ``learning_rate``, ``seed``, ``eval_every``.
    train_loss : (steps,)
        The loss of each step's batch, before that step's update.
    eval_steps : (n_evals,) int
        The steps at which the held-out loss was measured (before that step's update; the last
        is ``steps``: after training).
    validation_loss : (n_evals,)
        The mean loss on the held-out text, cut into sequences of ``n_ctx`` (``BOS`` first).
    seconds : float
        The training's wall time, as the script measured it.
    """

    config: DecoderConfig
    params: dict[str, np.ndarray] = field(repr=False)
    vocabulary: Vocabulary = field(repr=False)
    settings: dict[str, float]
    train_loss: np.ndarray = field(repr=False)
    eval_steps: np.ndarray = field(repr=False)
    validation_loss: np.ndarray = field(repr=False)
    seconds: float

    def generate(
        self,
        prompt: str,
        n_new: int,
        *,
        temperature: float = 0.0,
        seed: int = 0,
        window: int | None = None,
        sinks: int = 0,
    ) -> str:
        """``prompt`` and ``n_new`` characters the model writes after it (``BOS`` first, not shown).

        As :func:`attnlib.decoder.generate` with the cache; ``temperature=0`` is greedy. The model
        may sample ``BOS`` (id 0) as it samples any token; ``decode`` leaves it out, so the text
        then has fewer than ``n_new`` characters after the prompt.
        """
        if not isinstance(prompt, str):
            raise TypeError(f"prompt must be a str (the text to continue), got {type(prompt).__name__}")
        ids = generate(
            self.config,
            self.params,
            self.vocabulary.encode(prompt),
            n_new,
            temperature=temperature,
            seed=seed,
            window=window,
            sinks=sinks,
        )
        return self.vocabulary.decode(ids)


def load_text_model(path: str | None = None) -> TextModel:
    """Load the committed model (or the ``.npz`` at ``path``, as ``tools/train_decoder.py`` writes it).

    The committed file's SHA-256 is checked against :data:`MODEL_SHA256`.
    """
    if path is None:
        raw = read_committed(PACKAGE, MODEL_FILE, MODEL_SHA256, SCRIPT)
        return model_from_arrays(np.load(io.BytesIO(raw)))
    return read_npz(path, model_from_arrays, "a text model as tools/train_decoder.py writes it")


_CONFIG_FIELDS = ("vocab_size", "n_ctx", "d_model", "n_heads", "n_layers", "d_mlp")


def model_from_arrays(arrays: Mapping[str, np.ndarray]) -> TextModel:
    """A :class:`TextModel` from the arrays ``tools/train_decoder.py`` saves."""
    arrays = as_mapping(arrays)
    config = DecoderConfig(  # a size saved as 2.5 (or a flag saved as 2) is refused by name, not rounded
        **{name: np.asarray(arrays[f"config.{name}"]).item() for name in _CONFIG_FIELDS},
        layer_norm=np.asarray(arrays["config.layer_norm"]).item(),
        positions=str(arrays["config.positions"]),
    )
    vocabulary = Vocabulary(str(arrays["vocabulary"]))
    if vocabulary.size != config.vocab_size:
        raise ValueError(f"the vocabulary has {vocabulary.size} ids, the config {config.vocab_size}")
    params = {name.removeprefix("param."): arrays[name] for name in arrays if name.startswith("param.")}
    return TextModel(
        config,
        check_parameters(config, params),
        vocabulary,
        {
            name.removeprefix("setting."): arrays[name].item()
            for name in arrays
            if name.startswith("setting.")
        },
        arrays["train_loss"],
        arrays["eval_steps"],
        arrays["validation_loss"],
        float(arrays["seconds"]),
    )


# --- what lesson 15 measures ------------------------------------------------------------------


def held_out_batch(vocabulary: Vocabulary, texts: Sequence[str], n_ctx: int) -> np.ndarray:
    """The held-out texts cut into sequences of ``n_ctx`` tokens: ``BOS`` and ``n_ctx − 1`` characters.

    Each text gives its whole pieces of ``n_ctx − 1`` characters (a shorter tail is left out).

    Returns
    -------
    (n_sequences, n_ctx) int64
    """
    length = as_positive_int(n_ctx, "n_ctx", minimum=2) - 1
    if (
        isinstance(texts, str)
        or not isinstance(texts, Sequence)
        or not all(isinstance(t, str) for t in texts)
    ):
        raise TypeError(f"texts must be a list of strings, got {texts!r:.80}")
    pieces = [
        vocabulary.encode(text[start : start + length])
        for text in texts
        for start in range(0, len(text) - length + 1, length)
    ]
    if not pieces:
        raise ValueError(f"no held-out text is {length} characters long")
    return np.stack(pieces)


#: Held-out sequences run through the model at once: all 117 at once would hold every head's
#: weights for all of them, over a GiB; 16 at a time keep a lesson's kernel small.
SEQUENCES_AT_ONCE = 16


def _in_chunks(batch: np.ndarray) -> Iterator[np.ndarray]:
    """``batch``'s rows, :data:`SEQUENCES_AT_ONCE` at a time."""
    for start in range(0, len(batch), SEQUENCES_AT_ONCE):
        yield batch[start : start + SEQUENCES_AT_ONCE]


def _mean_loss(config: DecoderConfig, params: Mapping[str, np.ndarray], batch: np.ndarray) -> float:
    """The mean next-token loss over every sequence of ``batch``, computed a chunk at a time."""
    return float(
        np.concatenate([next_token_losses(config, params, chunk) for chunk in _in_chunks(batch)]).mean()
    )


def held_out_loss(model: TextModel, corpus: Corpus | None = None) -> float:
    """The mean next-character loss (nats) on the held-out text, in sequences of ``n_ctx``."""
    texts = (corpus or load_corpus()).held_out
    return _mean_loss(model.config, model.params, held_out_batch(model.vocabulary, texts, model.config.n_ctx))


def pooled_kv_losses(
    model: TextModel, kv_heads: Sequence[int] | None = None, corpus: Corpus | None = None
) -> dict[int, float]:
    """The held-out loss with the key/value heads mean-pooled to each count (no retraining).

    ``kv_heads`` defaults to ``n_heads``, ``n_heads / 2``, … down to 1 (multi-query); the
    conversion is :func:`attnlib.decoder.pool_kv_heads`.
    """
    c = model.config
    if kv_heads is not None and not isinstance(kv_heads, Sequence | np.ndarray):
        raise TypeError(f"kv_heads must be a list of key/value head counts or None, got {kv_heads!r:.80}")
    counts = [h for h in range(c.n_heads, 0, -1) if c.n_heads % h == 0] if kv_heads is None else kv_heads
    texts = (corpus or load_corpus()).held_out
    batch = held_out_batch(model.vocabulary, texts, c.n_ctx)
    return {int(count): _mean_loss(*pool_kv_heads(c, model.params, count), batch) for count in counts}


def uptrained_kv_losses(
    model: TextModel,
    n_kv_heads: int,
    *,
    steps: int = 35,
    batch: int = 8,
    seed: int = 0,
    corpus: Corpus | None = None,
) -> tuple[float, float]:
    """The held-out loss with ``n_kv_heads`` mean-pooled key/value heads, before and after uptraining.

    Ainslie et al.'s conversion: :func:`attnlib.decoder.pool_kv_heads`, then ``steps`` more steps
    of :func:`attnlib.decoder.train` from the pooled parameters, at the committed run's learning
    rate, on ``batch`` random stretches of the training text per step (as
    ``tools/train_decoder.py`` draws them, seeded by ``seed``). With ``n_kv_heads = n_heads``
    nothing is pooled: the same steps of training alone, the control. The default batch is half
    the committed run's 16: a step's memory grows with the batch (about 110 MiB at 8), and lesson
    15's kernel stays under its 300 MiB target.

    Returns
    -------
    (before, after) : float, float
        The mean held-out loss of the pooled model and of the uptrained one.
    """
    c = model.config
    corpus = corpus or load_corpus()
    ids = model.vocabulary.encode(corpus.training_text, bos=False)
    size = as_positive_int(batch, "batch")

    def stretches(rng: np.random.Generator) -> np.ndarray:
        starts = rng.integers(0, len(ids) - (c.n_ctx - 1) + 1, size=size)
        body = ids[starts[:, None] + np.arange(c.n_ctx - 1)]
        return np.concatenate([np.full((size, 1), Vocabulary.BOS), body], axis=1)

    pooled_config, pooled = pool_kv_heads(c, model.params, n_kv_heads)
    run = train(
        pooled_config,
        stretches,
        steps=steps,
        learning_rate=float(model.settings["learning_rate"]),
        seed=seed,
        params=pooled,
    )
    evaluation = held_out_batch(model.vocabulary, corpus.held_out, c.n_ctx)
    return _mean_loss(pooled_config, pooled, evaluation), _mean_loss(
        pooled_config, run.snapshots[-1], evaluation
    )


def first_token_weights(model: TextModel, corpus: Corpus | None = None) -> np.ndarray:
    """Each head's mean attention weight on the first token (``BOS``), over the held-out sequences.

    The queries at positions ``1 … n_ctx − 1`` are averaged (position 0 can only see itself). A
    head that parks its weight on ``BOS`` when nothing else matches uses it as an attention sink.

    Returns
    -------
    (n_layers, n_heads)
    """
    texts = (corpus or load_corpus()).held_out
    batch = held_out_batch(model.vocabulary, texts, model.config.n_ctx)
    sums = sum(
        forward(model.config, model.params, chunk).weights[:, :, :, 1:, 0].sum(axis=(1, 3))
        for chunk in _in_chunks(batch)
    )  # (layers, heads): summed over sequences and queries
    return sums / (len(batch) * (model.config.n_ctx - 1))


@dataclass(frozen=True)
class LongTextLosses:
    """The loss of each prediction on held-out text longer than the trained context.

    Attributes
    ----------
    name : str
        Which attention: ``"dense"``, ``"window"``, ``"window + sinks"`` (RoPE rotates every
        cached key by its place in the rolling cache, as StreamingLLM does) or ``"sinks, original
        places"`` (the same keys, each rotated by its position in the text).
    window, sinks : int or None, int
    position_losses : (length − 1,)
        The loss of the prediction at each position (the mean over the held-out texts).
    n_ctx : int
        The trained context.
    """

    name: str
    window: int | None
    sinks: int
    position_losses: np.ndarray = field(repr=False)
    n_ctx: int

    @property
    def within(self) -> float:
        """Mean loss of the predictions at positions below ``n_ctx``."""
        return float(self.position_losses[: self.n_ctx - 1].mean())

    @property
    def beyond(self) -> float:
        """Mean loss of the predictions at positions ``n_ctx`` and later."""
        return float(self.position_losses[self.n_ctx - 1 :].mean())


def long_text_losses(
    model: TextModel,
    *,
    length: int = 512,
    window: int = 64,
    sinks: int = 4,
    count: int | None = 4,
    corpus: Corpus | None = None,
) -> list[LongTextLosses]:
    """The loss on held-out stretches of ``length`` tokens: dense, a plain window, window + sinks.

    The first ``count`` held-out texts (lessons in order; ``None``: all) of at least
    ``length − 1`` characters give one sequence each (``BOS`` and their first ``length − 1``
    characters). The windowed passes compute exactly what generation with the rolling cache
    computes (:func:`attnlib.decoder.forward`'s ``window`` and ``sinks``): RoPE rotates each key by
    its place in the cache (StreamingLLM, Xiao et al. 2023, section 3.2), so a sink is never
    further from a query than ``sinks + window − 1``. The fourth setting, ``"sinks, original
    places"``, keeps the same keys but rotates each by its position in the text, so past the
    context the sinks sit at distances the model never trained on. The time grows with
    ``count · length²``: the default takes a few seconds.
    """
    n = as_positive_int(length, "length", minimum=2)
    texts = [text for text in (corpus or load_corpus()).held_out if len(text) >= n - 1]
    if not texts:
        raise ValueError(f"no held-out text has {n - 1} characters")
    texts = texts if count is None else texts[: as_positive_int(count, "count")]
    sequences = [model.vocabulary.encode(text[: n - 1]) for text in texts]
    results = []
    for name, w, s in (("dense", None, 0), ("window", window, 0), ("window + sinks", window, sinks)):
        # one sequence at a time: a batch of them would hold every (length × length) weight at once
        losses = [next_token_losses(model.config, model.params, t, window=w, sinks=s)[0] for t in sequences]
        results.append(LongTextLosses(name, w, s, np.mean(losses, axis=0), model.config.n_ctx))
    original = [_losses_at_original_places(model, t, window, sinks) for t in sequences]
    results.append(
        LongTextLosses("sinks, original places", window, sinks, np.mean(original, axis=0), model.config.n_ctx)
    )
    return results


def _losses_at_original_places(model: TextModel, tokens: np.ndarray, window: int, sinks: int) -> np.ndarray:
    """:func:`attnlib.decoder.next_token_losses` with ``window`` and ``sinks``, every key rotated by
    its position in the text instead of its place in the rolling cache: ``(length − 1,)``."""
    c, p = model.config, check_parameters(model.config, model.params)
    t = np.asarray(tokens)[None]
    positions = np.arange(t.shape[1])
    mask = visible_keys(positions, positions, window=window, sinks=sinks)
    rotation = Rotation(positions, positions, None, 0)  # queries and keys at their own positions
    x = p["embed"][t]
    for layer in range(c.n_layers):
        x, _ = block(c, p, layer, x, mask, positions=positions, rotation=rotation)
    if c.layer_norm:
        x, _ = layer_norm(x, p["ln_final.gain"], p["ln_final.bias"])
    return token_losses(x @ p["unembed"], t)[0]
