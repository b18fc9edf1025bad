"""The worked examples of the lessons, as named data.

Each function returns the *inputs* of one example; the numbers it is known to give are in its
docstring, and ``tests/kit/test_examples.py`` checks that attnlib reproduces them. Lessons call these
functions rather than typing the numbers again.

Where they come from: each example and its "known values" were given, at the precision quoted
here, in the brief this library was built from (issue 2 of the project's tracker), which collected
them from earlier teaching material without naming it. So the values are cited from that brief,
and every one of them is recomputed by attnlib in the tests; no earlier publication is claimed.
(The "Q3" case, with the same weights and output, also appears in public homework notebooks, for
example https://github.com/Manikanta-Rajulapati2002/Deep_Learning_NLP_spacy_transformers.)

:func:`published_decoders` is different: the shapes of four published language models (lesson 15),
each with its Hugging Face ``config.json`` and its paper, and its exact parameter count, which
``tests/attnlib/test_counting_generation.py`` reproduces with :func:`attnlib.counting.llama_parameter_counts`
(and, where ``transformers`` is installed, by building each model on PyTorch's meta device).

Three examples are this course's own: :func:`plain_attention_exercise`, made for lesson 08's
exercise 1 so that its answers are printed in no earlier lesson (lessons 03 and 05 compute
:func:`one_query_three_vectors`, which has the same shape), :func:`online_softmax_row` (lesson 12
and its explorer) and :func:`real_model_sentences` (lesson 13's head explorer). Their values are
attnlib's, checked in the tests the same way.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from attnlib.counting import DecoderShape

__all__ = [
    "QKV",
    "Embedded",
    "PublishedDecoder",
    "attention_by_hand",
    "four_tokens_2d",
    "one_query_three_vectors",
    "online_softmax_row",
    "plain_attention_exercise",
    "published_decoders",
    "q3",
    "random_projections_seed42",
    "real_model_sentences",
    "she_likes_coffee",
]


class QKV(NamedTuple):
    """Queries, keys and values of an example, ready for attention.

    Attributes
    ----------
    Q : (n_q, d_k) or (d_k,)
    K : (n_k, d_k)
    V : (n_k, d_v)
    """

    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray


class Embedded(NamedTuple):
    """Token embeddings with the projection matrices of an example.

    Attributes
    ----------
    tokens : tuple of str, length n
    X : (n, d_model)
        One embedding per row, in the order of ``tokens``.
    W_q, W_k : (d_model, d_k)
    W_v : (d_model, d_v)
    """

    tokens: tuple[str, ...]
    X: np.ndarray
    W_q: np.ndarray
    W_k: np.ndarray
    W_v: np.ndarray


def q3() -> QKV:
    """The "Q3" exercise: two queries that each match one key exactly.

    ``Q = K = [[1,0,1,0],[0,1,0,1]]`` and ``V = [[1,2,3,4],[5,6,7,8]]``, as integers (so attnlib
    computes in float64). With ``d_k = 4`` the scaled scores are ``[[1, 0], [0, 1]]``.

    Known values: weights ``[[0.73105854, 0.26894143], [0.26894143, 0.73105854]]`` and output
    row 0 ``[2.0757656, 3.0757656, 4.0757656, 5.0757656]``. Those were computed in float32
    computation; in float64 the weights are ``e/(e+1) = 0.7310585786`` and ``0.2689414214``, so the
    given digits agree to 1e-7 (one float32 rounding step).
    """
    Q = np.array([[1, 0, 1, 0], [0, 1, 0, 1]])
    return QKV(Q=Q, K=Q.copy(), V=np.array([[1, 2, 3, 4], [5, 6, 7, 8]]))


def four_tokens_2d() -> Embedded:
    """Four tokens in 2D with identity projections (``W_q = W_k = W_v = I₂``).

    Embeddings ``[[0.9,0.1],[0.2,0.8],[0.1,0.9],[0.8,0.2]]``, labelled ``Token-1`` … ``Token-4``:
    tokens 1 and 4 point along x, tokens 2 and 3 along y, so each attends mostly to itself and
    its neighbour in direction. Small enough to draw every vector and every score.
    """
    X = np.array([[0.9, 0.1], [0.2, 0.8], [0.1, 0.9], [0.8, 0.2]])
    identity = np.eye(2)
    return Embedded(
        tokens=("Token-1", "Token-2", "Token-3", "Token-4"),
        X=X,
        W_q=identity,
        W_k=identity.copy(),
        W_v=identity.copy(),
    )


def one_query_three_vectors() -> QKV:
    """One query ``s`` against ``h1, h2, h3``, for *plain* dot-product attention (``scale=1.0``).

    ``h1 = (1,2,3)``, ``h2 = (1,2,1)``, ``h3 = (0,1,-1)`` are both the keys and the values;
    ``s = (1,2,1)`` is the single query. Scores ``s·h = (8, 6, 1)``.

    Known values (unscaled): weights ``a ≈ (0.88, 0.12, 0.00)`` and context vector
    ``c ≈ (1.00, 2.00, 2.76)``.
    """
    H = np.array([[1, 2, 3], [1, 2, 1], [0, 1, -1]])
    return QKV(Q=np.array([1, 2, 1]), K=H, V=H.copy())


def plain_attention_exercise() -> QKV:
    """Lesson 08's exercise 1: one query ``s`` against ``h1, h2, h3``, plain dot-product attention.

    Made for this course (not from the brief): the shape of :func:`one_query_three_vectors`, with
    numbers of its own, so that the exercise's answers are not the ones lessons 03 and 05 print.
    ``h1 = (2,2,-1)``, ``h2 = (1,2,1)``, ``h3 = (-1,2,1)`` are both the keys and the values;
    ``s = (1,1,2)`` is the single query. Its answers are not written here, where the student
    copies' course folder can be read: lesson 08's solution and ``attention_lessons/l08_exercises/answers.py``
    compute them.
    """
    H = np.array([[2, 2, -1], [1, 2, 1], [-1, 2, 1]])
    return QKV(Q=np.array([1, 1, 2]), K=H, V=H.copy())


def attention_by_hand() -> QKV:
    """The pencil-and-paper exercise: ``Q`` 2×2, ``K`` 3×2, ``V`` 3×3, scaled by ``1/√2``.

    ``Q = [[1,2],[3,1]]``, ``K = [[2,1],[1,1],[0,1]]``, ``V = [[1,2,-2],[1,1,2],[0,1,-1]]``.
    Lesson 08's exercise 3: its answers are computed by ``attention_lessons/l08_exercises/answers.py``, not
    written here.
    """
    return QKV(
        Q=np.array([[1, 2], [3, 1]]),
        K=np.array([[2, 1], [1, 1], [0, 1]]),
        V=np.array([[1, 2, -2], [1, 1, 2], [0, 1, -1]]),
    )


def random_projections_seed42() -> Embedded:
    """Three random 4-D embeddings and random 4×4 projections, from seed 42.

    Uses NumPy's *legacy* global generator on purpose: ``np.random.seed(42)``, then
    ``X = np.random.rand(3, 4)`` and ``W_q``, ``W_k``, ``W_v`` each ``np.random.rand(4, 4)``, in
    that order, so that the numbers match the given ones (the newer ``default_rng(42)``
    draws different numbers). A private ``RandomState(42)`` gives exactly that stream without
    touching the global generator.

    Known value: weights row 0 ``[0.52735889, 0.11510842, 0.35753269]``.
    """
    legacy = np.random.RandomState(42)  # same stream as np.random.seed(42); np.random.rand(...)
    X = legacy.rand(3, 4)
    W_q, W_k, W_v = (legacy.rand(4, 4) for _ in range(3))
    return Embedded(tokens=("x1", "x2", "x3"), X=X, W_q=W_q, W_k=W_k, W_v=W_v)


def she_likes_coffee() -> Embedded:
    """ "she likes coffee": three tokens with 4-D embeddings.

    ``she = (0.2,0.9,0.1,0.5)``, ``likes = (0.8,0.3,0.7,0.2)``, ``coffee = (0.4,0.6,0.3,0.9)``;
    ``W_q = W_k`` with 0.9 on the diagonal and 0.1 elsewhere;
    ``W_v = [[0.8,0.2,0.1,0.1],[0.2,0.8,0.2,0.1],[0.1,0.2,0.8,0.1],[0.1,0.1,0.1,0.9]]``.

    Known values: ``X[0,:] @ W_q[:,0] = 0.33``; raw scores
    ``[[1.2884,1.064,1.452],[1.064,1.6064,1.4496],[1.452,1.4496,1.8768]]``; row sums of the
    exponentiated scaled scores ``[5.67359329, 5.99932583, 6.68700378]``; weights row 0
    ``[0.33567137, 0.30004505, 0.36428358]``; output row 0
    ``[0.57530294, 0.70527381, 0.50530294, 0.64177546]``.
    """
    X = np.array([[0.2, 0.9, 0.1, 0.5], [0.8, 0.3, 0.7, 0.2], [0.4, 0.6, 0.3, 0.9]])
    W_qk = np.full((4, 4), 0.1) + 0.8 * np.eye(4)
    W_v = np.array([[0.8, 0.2, 0.1, 0.1], [0.2, 0.8, 0.2, 0.1], [0.1, 0.2, 0.8, 0.1], [0.1, 0.1, 0.1, 0.9]])
    return Embedded(tokens=("she", "likes", "coffee"), X=X, W_q=W_qk, W_k=W_qk.copy(), W_v=W_v)


def online_softmax_row(n_keys: int = 16, seed: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """One query's scores over ``n_keys`` keys and the keys' values in 2D, seeded (lesson 12).

    This course's own: drawn for lesson 12's online softmax and its explorer. The scores are
    normal with standard deviation 2 plus a slow upward drift from 0 to 3, so that the running
    maximum grows in several blocks (with the defaults, in at least two of the four blocks of 4
    after the first); the values are standard normal.

    Returns
    -------
    scores : (n_keys,) float64
    values : (n_keys, 2) float64
    """
    rng = np.random.default_rng(seed)
    scores = rng.normal(scale=2.0, size=n_keys) + np.linspace(0.0, 3.0, n_keys)
    values = rng.normal(size=(n_keys, 2))
    return scores, values


def real_model_sentences() -> tuple[str, ...]:
    """The three sentences lesson 13's head explorer precomputes (every head of every layer).

    This course's own: the first is lesson 13's worked sentence (what does "it" attend to?), the
    second has two pronouns, the third a plural verb far from its subject ("keys … are").
    """
    return (
        "The cat sat on the mat because it was tired",
        "She poured the coffee and he drank it.",
        "The keys to the cabinet are on the table.",
    )


class PublishedDecoder(NamedTuple):
    """A published decoder-only language model's shape, and where each number comes from.

    Attributes
    ----------
    name : str
        The model's Hugging Face repository, ``owner/name``.
    shape : attnlib.counting.DecoderShape
        From its ``config.json``: ``num_hidden_layers``, ``hidden_size``, ``num_attention_heads``,
        ``num_key_value_heads``, ``intermediate_size``, ``vocab_size``, ``tie_word_embeddings``
        (``d_head = hidden_size / num_attention_heads``).
    n_ctx : int
        The context length it was trained with, as ``sources`` say where it comes from.
    window : int or None
        Its sliding attention window (``sliding_window`` in ``config.json``), None for none.
    parameters : int
        Its exact parameter count: the sum of ``p.numel()`` over the parameters of the
        ``transformers`` model built from that ``config.json``.
    sources : tuple of str
        The ``config.json`` and the paper.
    """

    name: str
    shape: DecoderShape
    n_ctx: int
    window: int | None
    parameters: int
    sources: tuple[str, ...]


def published_decoders() -> dict[str, PublishedDecoder]:
    """Llama 2 7B and 70B, Mistral 7B v0.1 and Llama 3 8B: Llama-style decoders (lesson 15).

    All four are pre-norm decoders with RMSNorm, rotary positions, SwiGLU MLPs, no biases and an
    untied unembedding, so :func:`attnlib.counting.llama_parameter_counts` counts them all.
    Llama 2 7B keeps a key/value head per query head (multi-head attention); the other three
    share each key/value head among 8 query heads (grouped-query attention); Mistral attends
    within a sliding window of 4,096 tokens.

    Returns
    -------
    dict of str to PublishedDecoder
        Keyed by a short name: ``"Llama 2 7B"``, ``"Llama 2 70B"``, ``"Mistral 7B"``, ``"Llama 3 8B"``.
    """
    llama2 = (
        "Touvron et al. 2023, Llama 2: Open Foundation and Fine-Tuned Chat Models, arXiv:2307.09288 "
        "(Table 1: context length 4k)"
    )
    models = [
        PublishedDecoder(
            "meta-llama/Llama-2-7b-hf",
            DecoderShape(n_layers=32, d_model=4096, n_heads=32, n_kv_heads=32, d_mlp=11008, vocab=32000),
            4096,
            None,
            6_738_415_616,
            ("https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json", llama2),
        ),
        PublishedDecoder(
            "meta-llama/Llama-2-70b-hf",
            DecoderShape(n_layers=80, d_model=8192, n_heads=64, n_kv_heads=8, d_mlp=28672, vocab=32000),
            4096,
            None,
            68_976_648_192,
            ("https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json", llama2),
        ),
        PublishedDecoder(
            "mistralai/Mistral-7B-v0.1",
            DecoderShape(n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, d_mlp=14336, vocab=32000),
            8192,
            4096,
            7_241_732_096,
            (
                "https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json",
                "Jiang et al. 2023, Mistral 7B, arXiv:2310.06825 "
                "(Table 1: window_size 4096, context_len 8192)",
            ),
        ),
        PublishedDecoder(
            "meta-llama/Meta-Llama-3-8B",
            DecoderShape(n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, d_mlp=14336, vocab=128256),
            8192,
            None,
            8_030_261_248,
            (
                "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json "
                "(max_position_embeddings 8192: the context)",
                "Llama Team, AI @ Meta 2024, The Llama 3 Herd of Models, arXiv:2407.21783 (Table 3)",
            ),
        ),
    ]
    short = ("Llama 2 7B", "Llama 2 70B", "Mistral 7B", "Llama 3 8B")
    return dict(zip(short, models, strict=True))
