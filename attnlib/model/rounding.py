"""How far two float32 runs of the encoder may differ: a bound from the rounding of its sums.

Two programs (attnlib and transformers, or one program on two CPUs) add in different orders, so
their float32 results differ in their last digits; a comparison between them asks for agreement
to :func:`float32_tolerance`, far below the size of any mistake, not to the last digit. For
all-MiniLM-L6-v2 on a dozen tokens, in float32 epsilons (2⁻²³) of the largest entry::

>>> minilm = BertConfig(n_layers=6, n_heads=12, d_model=384, d_ff=1536, vocab_size=30522,
...                     max_positions=512, type_vocab_size=2, layer_norm_eps=1e-12, pad_token_id=0)
>>> round(float32_tolerance(minilm, 12) / 2**-23)
1113
"""

from __future__ import annotations

import math

from attnlib.model.bert import BertConfig

__all__ = ["float32_tolerance"]


def float32_tolerance(config: BertConfig, n_tokens: int, largest: float = 1.0) -> float:
    """How far two float32 runs of a BERT encoder may differ, on an output whose largest entry is ``largest``.

    Lesson 13 · 3 (attnlib against transformers) and · 6 (a padded batch against each sentence
    alone): the bound those comparisons use, not a tolerance by habit.

    Two runs that sum in different orders (another CPU's kernels, or attnlib against transformers)
    round differently. A sum of m float32 terms whose rounding errors are independent, of mean zero,
    is within about √m·u of the exact sum, relative to the size of its terms, u = 2⁻²⁴ (Higham and
    Mary, SIAM J. Sci. Comput. 41, 2019: the worst case m·u is far too loose for m in the
    thousands). On one layer's path a value goes through sums of ``d_model`` terms seven times (a
    query, key or value projection, the output projection, the feed-forward's first product, and
    each layer norm's mean and variance), of ``d_k`` (a score), ``n_tokens`` (weights times values)
    and ``d_ff`` (the feed-forward's second product). The bound adds all of these over every layer,
    as if no error ever cancelled another or shrank, and doubles it: each run is within it of the
    exact result.

    Parameters
    ----------
    config : attnlib.model.BertConfig
    n_tokens : int
    largest : float
        The largest entry of the output compared (1, the default, for attention weights).

    Returns
    -------
    float
        For all-MiniLM-L6-v2 on a dozen tokens, 1.3e-4 · ``largest``: 1,100 float32 epsilons.
    """
    sums = [config.d_model] * 7 + [config.d_k, n_tokens, config.d_ff]
    return 2 * config.n_layers * sum(math.sqrt(m) for m in sums) * 2**-24 * largest
