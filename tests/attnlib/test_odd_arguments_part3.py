"""Part III's attnlib functions, called with odd arguments: a right answer or a clear error.

The harness of ``test_odd_arguments.py`` (``conftest``'s :data:`~conftest.ODD` values and
``answer_or_clear_error``), applied to the decoder (lessons 14 and 15), the sampler and the
counting of generation and memory. Every combination of odd values goes into each entry of
:data:`CALLS`; ``PYTHONPATH=tests python tests/attnlib/test_odd_arguments_part3.py`` counts the
calls that are not clean (the issue 30 sweep: 1,337 calls, 102 not clean, with the lessons' own
functions, which ``tests/lessons/l14_induction_heads/`` and ``l15_generating_text/`` now sweep).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from conftest import every_odd_combination, print_unclean

from attnlib import counting, decoder, sampling
from attnlib.decoder import DecoderConfig, KVCache

SMALL = DecoderConfig(vocab_size=5, n_ctx=4, d_model=4, n_heads=2, n_layers=2)
ROPE = DecoderConfig(vocab_size=5, n_ctx=4, d_model=4, n_heads=2, n_layers=1, positions="rope")
PARAMS = decoder.init_parameters(SMALL, seed=0)
ROPE_PARAMS = decoder.init_parameters(ROPE, seed=0)
TOKENS = np.array([[1, 2, 3, 1]])
SHAPE = counting.DecoderShape(n_layers=2, d_model=4, n_heads=2, d_mlp=0, vocab=3)


def _diverging_is_an_answer(config: DecoderConfig) -> Callable[[object, object], object]:
    """:func:`attnlib.decoder.train` with ``steps`` and ``learning_rate``; its documented answer to a
    learning rate so large that training overflows, ``FloatingPointError("training diverged …")``,
    counts as an answer."""

    def call(steps: object, rate: object) -> object:
        try:
            return decoder.train(config, lambda rng: TOKENS, steps=steps, learning_rate=rate)
        except FloatingPointError as exc:
            assert str(exc).startswith("training diverged"), exc
            return None

    return call


def _cache_append(layer: object, K: object) -> object:
    cache = KVCache(2)
    cache.add_tokens(1)
    return cache.append(layer, K, K)


CALLS: dict[str, tuple[Callable[..., object], int]] = {
    # attnlib.decoder
    "DecoderConfig": (lambda v, n: DecoderConfig(vocab_size=v, n_ctx=n, d_model=4, n_heads=2, n_layers=1), 2),
    "DecoderConfig-heads": (
        lambda h, kv: DecoderConfig(vocab_size=3, n_ctx=2, d_model=4, n_heads=h, n_kv_heads=kv, n_layers=1),
        2,
    ),
    "DecoderConfig-options": (
        lambda p, m: DecoderConfig(
            vocab_size=3, n_ctx=2, d_model=4, n_heads=1, n_layers=1, positions=p, d_mlp=m
        ),
        2,
    ),
    "parameter_shapes": (decoder.parameter_shapes, 1),
    "init_parameters": (lambda seed: decoder.init_parameters(SMALL, seed), 1),
    "check_parameters": (lambda p: decoder.check_parameters(SMALL, p), 1),
    "check_parameters-embed": (lambda x: decoder.check_parameters(SMALL, {**PARAMS, "embed": x}), 1),
    "check_tokens": (lambda t, any_length: decoder.check_tokens(SMALL, t, any_length=any_length), 2),
    "forward": (lambda t, ablate: decoder.forward(SMALL, PARAMS, t, ablate=ablate), 2),
    "forward-window": (lambda w, s: decoder.forward(SMALL, PARAMS, TOKENS, window=w, sinks=s), 2),
    "generate": (lambda prompt, n: decoder.generate(SMALL, PARAMS, prompt, n), 2),
    "generate-rope": (lambda n, w: decoder.generate(ROPE, ROPE_PARAMS, [1], n, window=w), 2),
    "generate-sampling": (
        lambda t, seed: decoder.generate(SMALL, PARAMS, [1], 2, temperature=t, seed=seed),
        2,
    ),
    "generate-cache": (lambda cache, n: decoder.generate(SMALL, PARAMS, [1], n, use_cache=cache), 2),
    "generate_with_trace": (
        lambda cache, seed: decoder.generate_with_trace(SMALL, PARAMS, [1], 1, use_cache=cache, seed=seed),
        2,
    ),
    "pool_kv_heads": (lambda n: decoder.pool_kv_heads(SMALL, PARAMS, n), 1),
    "loss_and_gradients": (lambda t: decoder.loss_and_gradients(SMALL, PARAMS, t), 1),
    "next_token_losses": (lambda t, w: decoder.next_token_losses(SMALL, PARAMS, t, window=w), 2),
    "train": (_diverging_is_an_answer(SMALL), 2),
    "visible_keys": (decoder.visible_keys, 2),
    "visible_keys-window": (lambda w, s: decoder.visible_keys([3], [0, 1, 2, 3], window=w, sinks=s), 2),
    "KVCache": (lambda n, w: KVCache(n, window=w), 2),
    "KVCache-sinks": (lambda s: KVCache(1, window=2, sinks=s), 1),
    "KVCache.add_tokens": (lambda count: KVCache(1).add_tokens(count), 1),
    "KVCache.append": (_cache_append, 2),
    # attnlib.sampling
    "next_token_probabilities": (lambda z, t: sampling.next_token_probabilities(z, temperature=t), 2),
    "next_token_probabilities-filters": (
        lambda k, p: sampling.next_token_probabilities([1.0, 2.0, 0.5], top_k=k, top_p=p),
        2,
    ),
    # attnlib.counting: generation and memory
    "llama_parameter_counts": (counting.llama_parameter_counts, 1),
    "DecoderShape-more": (
        lambda h, kv: counting.DecoderShape(
            n_layers=1, d_model=4, n_heads=h, d_mlp=0, vocab=2, n_kv_heads=kv
        ),
        2,
    ),
    "kv_cache_bytes-batch": (
        lambda batch, w: counting.kv_cache_bytes(SHAPE, 4, bytes_per_number=2, batch=batch, window=w),
        2,
    ),
    "kv_cache_outgrows_weights-window": (
        lambda w, s: counting.kv_cache_outgrows_weights(
            SHAPE, parameters=100, bytes_per_number=2, window=w, sinks=s
        ),
        2,
    ),
    "generation_multiplications-cache": (
        lambda n, cache: counting.generation_multiplications(SHAPE, n, cache=cache),
        2,
    ),
    "counted_generation": (
        lambda X, heads: counting.counted_generation(X, [], n_heads=heads, cache=True),
        2,
    ),
    "weights_bytes": (lambda n_q, n_k: counting.weights_bytes(n_q, n_k), 2),
    "weights_bytes-sizes": (lambda b, i: counting.weights_bytes(2, 2, batch_heads=b, itemsize=i), 2),
    "tiled_bytes": (lambda bq, bk: counting.tiled_bytes(4, 4, 2, 2, block_q=bq, block_k=bk), 2),
    "tile_counts": (lambda n_q, causal: counting.tile_counts(n_q, 4, block_q=2, block_k=2, causal=causal), 2),
    "hbm_traffic": (lambda n, sram: counting.hbm_traffic(n, 2, sram=sram), 2),
    "hbm_traffic-loop": (lambda loop: counting.hbm_traffic(4, 2, sram=64, loop=loop), 1),
    "sram_blocks": (lambda d, sram: counting.sram_blocks(d, sram, "flash"), 2),
    "counted_hbm_traffic": (lambda Q, sram: counting.counted_hbm_traffic(Q, Q, Q, sram=sram), 2),
}


@pytest.mark.parametrize("name", CALLS)
def test_every_combination_of_odd_arguments(name: str) -> None:
    every_odd_combination(name, *CALLS[name])


if __name__ == "__main__":
    print_unclean(CALLS)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: decoder.check_tokens(SMALL, [[1, 2], [3]]), ValueError, "tokens is ragged"),
        (lambda: decoder.check_tokens(SMALL, None), TypeError, "tokens is None"),
        (lambda: decoder.visible_keys([2.5], [0, 1]), TypeError, "query_positions must be integers"),
        (
            lambda: decoder.visible_keys([3], [-1, 0]),
            ValueError,
            "key_positions must be whole numbers of at least 0",
        ),
        (lambda: _cache_append(-1, np.ones((1, 1, 1, 2))), ValueError, "layer must be at least 0"),
        (lambda: _cache_append(2, np.ones((1, 1, 1, 2))), ValueError, "layer must be from 0 to 1"),
        (
            lambda: counting.kv_cache_bytes(SHAPE, 9, bytes_per_number=2, sinks=2),
            ValueError,
            "sinks=2 needs a window",
        ),
        (
            lambda: counting.kv_cache_outgrows_weights(SHAPE, parameters=9, bytes_per_number=2, sinks=1),
            ValueError,
            "sinks=1 needs a window",
        ),
        (
            lambda: counting.counted_hbm_traffic(np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2))),
            ValueError,
            "n, d ≥ 1",
        ),
    ],
)
def test_part_three_names_what_is_wrong(call: Callable[[], object], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_what_a_held_out_sweep_found_is_named() -> None:
    """Issue 44's held-out sweep: a message that named another argument, numpy's own errors."""
    with pytest.raises(TypeError, match=r"^bytes_per_number must be a whole number, got 2\.5"):
        counting.kv_cache_outgrows_weights(SHAPE, parameters=100, bytes_per_number=2.5)
    with pytest.raises(ValueError, match=r"parameter embed of shape \(1000000000000000, 4\) would take"):
        decoder.init_parameters(DecoderConfig(vocab_size=10**15, n_ctx=4, d_model=4, n_heads=2, n_layers=1))
    with pytest.raises(ValueError, match=r"parameter pos_embed of shape \(\d+, 4\) would take"):
        decoder.init_parameters(DecoderConfig(vocab_size=5, n_ctx=2**62, d_model=4, n_heads=2, n_layers=1))
    for ablate in (None, 3, "01"):
        with pytest.raises(TypeError, match="ablate must be a list of \\(layer, head\\) pairs"):
            decoder.forward(SMALL, PARAMS, TOKENS, ablate=ablate)
    with pytest.raises(
        ValueError, match=r"do not fit layer 0's cache, which holds keys of shape \(1, 2, 1, 2\)"
    ):
        cache = KVCache(1)
        cache.add_tokens(1)
        cache.append(0, np.ones((1, 2, 1, 2)), np.ones((1, 2, 1, 2)))
        cache.add_tokens(1)
        cache.append(0, np.ones((1, 1, 1, 2)), np.ones((1, 1, 1, 2)))  # one key/value head, not two


def test_a_window_longer_than_any_sequence_is_no_window() -> None:
    """``window=10**200`` was refused (more than 2**62); it hides nothing, as no window does."""
    huge = 10**200
    np.testing.assert_array_equal(
        decoder.forward(SMALL, PARAMS, TOKENS, window=huge).logits,
        decoder.forward(SMALL, PARAMS, TOKENS).logits,
    )
    np.testing.assert_array_equal(
        decoder.generate(ROPE, ROPE_PARAMS, [1], 6, window=huge, sinks=huge),
        decoder.generate(ROPE, ROPE_PARAMS, [1], 6),
    )
    np.testing.assert_array_equal(decoder.visible_keys([3], [0, 1, 2, 3], window=huge), [[True] * 4])
    assert counting.kv_cache_bytes(SHAPE, 9, bytes_per_number=2, window=huge) == counting.kv_cache_bytes(
        SHAPE, 9, bytes_per_number=2
    )


def test_a_temperature_below_the_float_range_is_greedy() -> None:
    """T ≤ 1e-308 once drew token 0 (its probability was 0); now the draw is the greedy choice."""
    greedy = decoder.generate(SMALL, PARAMS, [1], 3)
    for temperature in (1e-308, 1e-310, 5e-324):
        for seed in range(5):
            np.testing.assert_array_equal(
                decoder.generate(SMALL, PARAMS, [1], 3, temperature=temperature, seed=seed), greedy
            )


def test_valid_edge_cases_are_answered() -> None:
    """What the sweep found refused although valid: no queries, no keys seen, list pairs, tied heads."""
    from attnlib.efficient import tiled_attention

    assert tiled_attention(np.zeros((0, 3)), np.ones((4, 3)), np.ones((4, 2))).shape == (0, 2)
    np.testing.assert_array_equal(decoder.visible_keys([], [0, 1]), np.zeros((0, 2), dtype=bool))
    tied = decoder.forward(SMALL, PARAMS, TOKENS, ablate=[[0, 1], [0, 1]]).logits  # a list pair, twice
    np.testing.assert_array_equal(tied, decoder.forward(SMALL, PARAMS, TOKENS, ablate=[(0, 1)]).logits)
