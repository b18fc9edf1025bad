"""attention_lessons.l14_induction_heads.induction: the data, the head scores on hand-made patterns, ablation,
composition, and the committed run (its hash, its log against a fresh run of tools/train_induction.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import ROOT, run_training_script

from attention_lessons.l14_induction_heads.induction import (
    ablation_losses,
    composition_baseline,
    composition_scores,
    earlier_token_mass,
    half_losses,
    in_context_score,
    induction_batch,
    induction_scores,
    induction_targets,
    load_induction_run,
    phase_change_step,
    previous_token_scores,
    repeated_sequences,
    token_k_circuit,
    token_ov_circuit,
)
from attnlib.decoder import DecoderConfig, forward, init_parameters, next_token_losses, parameter_shapes

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels


def previous_token_pattern(n):
    """Query 0 sees itself; every other query puts all its weight on the key before it."""
    w = np.zeros((n, n))
    w[0, 0] = 1.0
    w[np.arange(1, n), np.arange(n - 1)] = 1.0
    return w


def induction_pattern(half):
    """First half: attend to self; second half: query i attends to key i − half + 1."""
    n = 2 * half
    w = np.eye(n)
    w[half:] = 0.0
    w[np.arange(half, n), np.arange(1, half + 1)] = 1.0
    return w


def test_repeated_sequences():
    tokens = repeated_sequences(5, 6, 4, seed=3)
    assert tokens.shape == (5, 12) and tokens.dtype.kind == "i"
    np.testing.assert_array_equal(tokens[:, 6:], tokens[:, :6])
    assert tokens.min() >= 0 and tokens.max() <= 3
    assert (tokens[:, 1:6] != tokens[:, :5]).all()  # no token repeats the one before it
    np.testing.assert_array_equal(tokens, repeated_sequences(5, 6, 4, seed=3))
    assert not np.array_equal(tokens, repeated_sequences(5, 6, 4, seed=4))
    counts = np.bincount(repeated_sequences(400, 8, 4, seed=0).ravel(), minlength=4)
    assert counts.min() > 0.2 * counts.sum()  # every token is about as common
    with pytest.raises(ValueError, match="half must be at least 2"):
        repeated_sequences(2, 1, 4)
    with pytest.raises(ValueError, match="vocab_size must be at least 2"):
        repeated_sequences(2, 4, 1)


def test_induction_batch_repeats_a_segment_of_varying_length():
    rng = np.random.default_rng(0)
    tokens = induction_batch(rng, 200, 20, 7, shortest=3)
    assert tokens.shape == (200, 20) and tokens.max() <= 6
    lengths = []
    for row in tokens:  # the longest L with row[-L:] == row[-2L:-L]
        lengths.append(
            max(L for L in range(1, 11) if np.array_equal(row[20 - L :], row[20 - 2 * L : 20 - L]))
        )
    assert min(lengths) >= 3 and max(lengths) == 10 and len(set(lengths)) >= 7
    with pytest.raises(ValueError, match="shortest=11 is longer than half of n_ctx=20"):
        induction_batch(rng, 2, 20, 7, shortest=11)


def test_previous_token_scores_of_hand_made_patterns():
    n = 6
    perfect = previous_token_pattern(n)
    uniform = np.tri(n) / np.arange(1, n + 1)[:, None]
    weights = np.stack([np.stack([perfect, np.eye(n)]), np.stack([uniform, 0.5 * perfect + 0.5 * np.eye(n)])])
    scores = previous_token_scores(weights)  # (n_layers, n_heads, n, n): one sequence
    expected_uniform = np.mean([1 / (i + 1) for i in range(1, n)])
    np.testing.assert_allclose(scores, [[1.0, 0.0], [expected_uniform, 0.5]])
    batched = np.stack([weights, weights[:, ::-1]], axis=1)  # (n_layers, B = 2, n_heads, n, n)
    np.testing.assert_allclose(
        previous_token_scores(batched), [[0.5, 0.5], [(expected_uniform + 0.5) / 2] * 2]
    )
    with pytest.raises(ValueError, match=r"weights must have shape \(n_layers, batch, n_heads, n, n\)"):
        previous_token_scores(np.ones((2, 3, 3)))


def test_induction_targets_follow_earlier_occurrences():
    #            0  1  2  3  4  5
    tokens = np.array([3, 1, 4, 3, 1, 3])
    targets = induction_targets(tokens)[0]
    assert targets.shape == (6, 6)
    assert not targets[:3].any()  # 3, 1, 4 have not appeared before
    assert set(np.flatnonzero(targets[3])) == {1}  # 3 appeared at 0: look at 1
    assert set(np.flatnonzero(targets[4])) == {2}  # 1 appeared at 1: look at 2
    assert set(np.flatnonzero(targets[5])) == {1, 4}  # 3 appeared at 0 and 3: look at 1 and 4


def test_induction_scores_of_hand_made_patterns():
    half = 5
    tokens = repeated_sequences(1, half, 9, seed=2)
    perfect = induction_pattern(half)
    prev = previous_token_pattern(2 * half)
    weights = np.stack([np.stack([prev, perfect])])  # one layer, two heads
    scores = induction_scores(weights, tokens)
    assert scores.shape == (1, 2)
    # the previous-token head looks one key too early: it scores only where tokens repeat by chance
    assert scores[0, 1] == pytest.approx(1.0)
    assert scores[0, 0] < 0.25
    # a batch of two sequences, the second with half the weight moved to itself
    blurred = 0.5 * perfect + 0.5 * np.eye(2 * half)
    both = np.stack([perfect, blurred])[None, :, None]  # (1 layer, 2 sequences, 1 head, n, n)
    twice = np.concatenate([tokens, tokens])
    assert induction_scores(both, twice)[0, 0] == pytest.approx(0.75)
    with pytest.raises(ValueError, match="do not match weights"):
        induction_scores(weights, tokens[:, :-1])
    # no token appears twice: no query has a target
    assert not induction_scores(weights, np.arange(10)).any()


def test_half_losses_and_in_context_score():
    half = 4
    losses = np.array([2.0, 2.0, 2.0, 9.0, 0.5, 0.5, 0.5])  # 2·half − 1 predictions
    first, repeated = half_losses(losses, half)
    assert (first, repeated) == (2.0, 0.5)  # the prediction of token `half` (9.0) is in neither
    assert in_context_score(losses, half) == pytest.approx(-1.5)
    stacked = np.stack([losses, losses + 1.0])
    np.testing.assert_allclose(in_context_score(stacked, half), [-1.5, -1.5])
    with pytest.raises(ValueError, match=r"2·half − 1 = 7 entries on its last axis, got shape \(6,\)"):
        half_losses(losses[:-1], half)


def test_phase_change_step_is_where_the_running_mean_falls_below_half_of_ln_vocab():
    losses = np.full(100, math.log(16))
    losses[60:] = 0.2
    assert phase_change_step(losses, 16, window=10) == 60 + 5  # the mean of 10 steps, 6 of them low
    losses[30] = 0.0  # one lucky batch
    assert phase_change_step(losses, 16, window=10) == 65
    assert phase_change_step(losses, 16, window=1) == 30
    assert phase_change_step(np.full(50, 2.0), 16) is None
    with pytest.raises(ValueError, match="at least window=25"):
        phase_change_step(losses[:10], 16)


def copying_model(half, vocab):
    """A hand-built two-layer circuit: layer 0 head 0 moves the previous token, layer 1 head 1
    attends to where that matches the current token and copies it; the other heads do nothing."""
    n = 2 * half
    config = DecoderConfig(vocab_size=vocab, n_ctx=n, d_model=3 * vocab + n, n_heads=2, n_layers=2)
    params = {name: np.zeros(shape) for name, shape in parameter_shapes(config).items()}
    # the residual stream's slots: the token, the previous token, the copied token, the position
    tok, prev, out = slice(0, vocab), slice(vocab, 2 * vocab), slice(2 * vocab, 3 * vocab)
    pos = slice(3 * vocab, 3 * vocab + n)
    params["embed"][:, tok] = np.eye(vocab)
    params["pos_embed"][:, pos] = np.eye(n)
    dh = config.d_head
    big = 40.0
    # layer 0, head 0: query at position i matches key at position i − 1; its value is the token,
    # written into the "previous token" slot
    shift = np.eye(n, k=-1)
    params["layer0.W_q"][pos, :n] = big * shift
    params["layer0.W_k"][pos, :n] = np.eye(n)
    params["layer0.W_v"][tok, :vocab] = np.eye(vocab)
    params["layer0.W_o"][:vocab, prev] = np.eye(vocab)
    # layer 1, head 1: query = current token, key = previous token; value = the key's own token
    params["layer1.W_q"][tok, dh : dh + vocab] = big * np.eye(vocab)
    params["layer1.W_k"][prev, dh : dh + vocab] = np.eye(vocab)
    params["layer1.W_v"][tok, dh : dh + vocab] = np.eye(vocab)
    params["layer1.W_o"][dh : dh + vocab, out] = 6 * np.eye(vocab)
    params["unembed"][out] = np.eye(vocab)
    return config, params


def test_scores_ablation_and_composition_find_a_hand_built_circuit():
    half, vocab = 6, 10
    config, params = copying_model(half, vocab)
    rng = np.random.default_rng(1)
    first_halves = np.array([rng.permutation(vocab)[:half] for _ in range(8)])  # no token twice
    tokens = np.concatenate([first_halves, first_halves], axis=1)
    weights = forward(config, params, tokens).weights
    prev, ind = previous_token_scores(weights), induction_scores(weights, tokens)
    # position 0 has no previous token: its layer-0 head reads itself, so key 0 also offers the
    # first token and takes part of the weight of queries that hold it
    assert prev[0, 0] > 0.99 and ind[1, 1] > 0.85
    assert prev[0, 0] == prev.max() and ind[1, 1] == ind.max()

    losses = next_token_losses(config, params, tokens).mean(axis=0)
    first, repeated = half_losses(losses, half)
    assert repeated < 0.3 < math.log(vocab) < first  # the copy is right; nothing predicts the first half

    ablation = ablation_losses(config, params, tokens)
    assert ablation.baseline == pytest.approx(repeated)
    assert ablation.losses.shape == (2, 2)
    # without either of the circuit's heads the repeat is no better than a guess
    assert min(ablation.losses[0, 0], ablation.losses[1, 1]) > math.log(vocab) - 0.3
    assert ablation.losses[0, 1] == pytest.approx(repeated) and ablation.losses[1, 0] == pytest.approx(
        repeated
    )

    k = composition_scores(config, params)
    assert k.shape == (2, 2)
    # head 1's keys read exactly the vocab-dimensional slot head 0 writes: both circuits are
    # (multiples of) the same rank-vocab projection P, and ‖P Pᵀ‖ / ‖P‖² = 1/√vocab
    assert k[0, 1] == pytest.approx(1 / math.sqrt(vocab))
    assert k[0, 0] == 0 and k[1, 1] == 0  # zero matrices: nothing written, nothing read
    q = composition_scores(config, params, kind="Q")
    assert q[0, 1] == 0  # head 1's queries read the token slot, where head 0 does not write
    assert composition_baseline(config, kind="K", samples=20) < 0.6 * k[0, 1]

    tokens_matched = token_k_circuit(config, params, writer=(0, 0), reader=(1, 1))
    assert tokens_matched.shape == (vocab, vocab)
    # a query for token a scores highest the keys where head 0 copied an a
    assert np.array_equal(tokens_matched.argmax(axis=1), np.arange(vocab))
    assert not token_k_circuit(config, params, writer=(0, 1), reader=(1, 1)).any()  # head 0,1 writes nothing


def test_token_k_circuit_is_the_product_of_the_circuits_and_rejects_bad_heads():
    config = DecoderConfig(vocab_size=5, n_ctx=6, d_model=8, n_heads=2, n_layers=2, positions="attention")
    params = init_parameters(config, 3)
    dh = config.d_model // config.n_heads
    W_ov = params["layer0.W_v"][:, dh:] @ params["layer0.W_o"][dh:]
    W_qk = params["layer1.W_q"][:, :dh] @ params["layer1.W_k"][:, :dh].T
    expected = params["embed"] @ W_qk @ W_ov.T @ params["embed"].T
    assert np.allclose(token_k_circuit(config, params, writer=(0, 1), reader=(1, 0)), expected)
    with pytest.raises(ValueError, match="earlier layer"):
        token_k_circuit(config, params, writer=(1, 0), reader=(1, 1))
    with pytest.raises(ValueError, match="writer must be"):
        token_k_circuit(config, params, writer=(0, 2), reader=(1, 1))


def test_token_ov_circuit_is_embed_w_ov_unembed_and_rejects_bad_heads():
    config = DecoderConfig(vocab_size=5, n_ctx=6, d_model=8, n_heads=2, n_layers=2, positions="attention")
    params = init_parameters(config, 4)
    dh = config.d_model // config.n_heads
    W_ov = params["layer1.W_v"][:, dh:] @ params["layer1.W_o"][dh:]
    expected = params["embed"] @ W_ov @ params["unembed"]
    assert np.allclose(token_ov_circuit(config, params, (1, 1)), expected)
    for bad in [(2, 0), (0, 2), [1, 0, 0], (1,), "10"]:  # a list of two is a head (test_l14_odd_arguments)
        with pytest.raises(ValueError, match="head must be"):
            token_ov_circuit(config, params, bad)


def test_earlier_token_mass_adds_the_probabilities_of_the_tokens_seen_so_far():
    config = DecoderConfig(vocab_size=7, n_ctx=6, d_model=8, n_heads=2, n_layers=2, positions="attention")
    params = init_parameters(config, 5)
    tokens = np.array([[3, 1, 3, 5, 1, 0], [0, 1, 2, 3, 4, 5]])
    logits = forward(config, params, tokens).logits
    probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    mass = earlier_token_mass(config, params, tokens)
    assert mass.shape == (2, 5)
    for b in range(2):
        for i in range(5):
            assert np.isclose(mass[b, i], probs[b, i, sorted(set(tokens[b, : i + 1]))].sum())
    assert np.allclose(earlier_token_mass(config, params, tokens[0]), mass[:1])  # one sequence


def test_composition_scores_of_random_weights_match_the_baseline():
    config = DecoderConfig(vocab_size=5, n_ctx=4, d_model=16, n_heads=4, n_layers=2)
    baseline = composition_baseline(config, samples=100)
    scores = np.concatenate(
        [composition_scores(config, init_parameters(config, seed)).ravel() for seed in range(4)]
    )
    assert abs(scores.mean() - baseline) < 0.1 * baseline
    with pytest.raises(ValueError, match="writer_layer=1 must come before reader_layer=1"):
        composition_scores(config, init_parameters(config), writer_layer=1)
    with pytest.raises(ValueError, match="kind must be 'K', 'Q' or 'V'"):
        composition_scores(config, init_parameters(config), kind="k")
    with pytest.raises(ValueError, match="reader_layer must be a layer from 0 to 1"):
        composition_scores(config, init_parameters(config), reader_layer=2)


def test_ablation_needs_two_halves():
    config, params = copying_model(3, 4)
    with pytest.raises(ValueError, match="even length of at least 4"):
        ablation_losses(config, params, [[0, 1, 2, 0, 1]])


def test_the_committed_run_loads_and_its_hash_is_checked(monkeypatch):
    import attention_lessons.l14_induction_heads.induction as induction

    run = load_induction_run()
    config = run.config
    assert config.n_layers == 2 and config.d_mlp == 0 and config.n_ctx == 2 * run.half
    steps = run.settings["steps"]
    assert run.loss.shape == run.first_half_loss.shape == run.repeated_half_loss.shape == (steps,)
    assert run.snapshot_steps[0] == 0 and run.snapshot_steps[-1] == steps
    n = 2 * run.half
    assert run.probe_weights.shape == (len(run.snapshot_steps), 2, config.n_heads, n, n)
    np.testing.assert_array_equal(run.probe[run.half :], run.probe[: run.half])
    # the last snapshot's weights are those of the saved parameters, float64 rounded to float32: the
    # same weights computed again, rounded the same way, give the same float32 or its neighbour
    again = forward(config, run.params, run.probe).weights[:, 0].astype(np.float32)
    np.testing.assert_array_max_ulp(run.probe_weights[-1], again, maxulp=1)
    np.testing.assert_allclose(run.in_context_score, run.repeated_half_loss - run.first_half_loss)
    assert (ROOT / "attention_lessons" / "l14_induction_heads" / induction.RUN_FILE).stat().st_size < 500_000
    monkeypatch.setattr(induction, "RUN_SHA256", "0" * 64)
    with pytest.raises(ValueError, match="not the committed 0000"):
        load_induction_run()


def test_the_committed_run_has_a_previous_token_head_and_an_induction_head():
    """What lesson 14 tells: the phase change, the two heads, their ablation and composition."""
    run = load_induction_run()
    config, vocab = run.config, run.config.vocab_size
    early, late = run.repeated_half_loss[:50].mean(), run.repeated_half_loss[-100:].mean()
    assert early > math.log(vocab) - 0.5 and late < 0.7  # the repeated half: from a guess to far below
    assert 300 < phase_change_step(run.repeated_half_loss, vocab) < 800
    assert abs(run.first_half_loss[-100:].mean() - math.log(vocab)) < 0.15  # the first half stays a guess
    tokens = repeated_sequences(64, run.half, vocab, seed=123)
    weights = forward(config, run.params, tokens).weights
    prev, ind = previous_token_scores(weights), induction_scores(weights, tokens)
    assert prev[0].max() > 0.6 and prev[1].max() < 0.2
    assert ind[1].max() > 0.6 and ind[0].max() < 0.3
    previous_head, induction_head = int(prev[0].argmax()), int(ind[1].argmax())
    ablation = ablation_losses(config, run.params, tokens)
    assert ablation.losses[0, previous_head] > ablation.baseline + 1.0
    assert ablation.losses[1, induction_head] > ablation.baseline + 0.5
    k = composition_scores(config, run.params)
    assert k[previous_head, induction_head] > 1.3 * composition_baseline(config)
    assert k[previous_head, induction_head] == k[:, induction_head].max()


def test_the_script_reproduces_the_first_steps_of_the_committed_run(tmp_path):
    fresh = run_training_script("train_induction.py", 50, tmp_path)
    committed = load_induction_run()
    for name in ("loss", "first_half_loss", "repeated_half_loss"):
        np.testing.assert_allclose(fresh[name], getattr(committed, name)[:50], rtol=1e-10, err_msg=name)
    np.testing.assert_array_equal(fresh["snapshot_steps"], [0, 50])
    # float64 weights rounded to float32 on both sides (losses within 1e-10): at most one ulp apart
    np.testing.assert_array_max_ulp(fresh["probe_weights"], committed.probe_weights[:2], maxulp=1)
    np.testing.assert_array_equal(fresh["probe"], committed.probe)


@pytest.mark.slow
def test_the_script_reproduces_the_committed_run_and_its_phase_change(tmp_path):
    committed = load_induction_run()
    fresh = run_training_script("train_induction.py", committed.settings["steps"], tmp_path)
    committed_file = ROOT / "attention_lessons" / "l14_induction_heads" / "induction_run.npz"
    assert set(fresh.files) == set(np.load(committed_file).files)
    # the same phase change (1500 steps of a chaotic process: another CPU's last bits may move it a
    # little), the same final losses and the same two heads
    vocab = committed.config.vocab_size
    step = phase_change_step(fresh["repeated_half_loss"], vocab)
    assert abs(step - phase_change_step(committed.repeated_half_loss, vocab)) <= 25
    assert fresh["repeated_half_loss"][-100:].mean() == pytest.approx(
        committed.repeated_half_loss[-100:].mean(), abs=0.05
    )
    scores = [
        previous_token_scores(fresh["probe_weights"][-1]),
        induction_scores(fresh["probe_weights"][-1], fresh["probe"]),
    ]
    expected = [
        previous_token_scores(committed.probe_weights[-1]),
        induction_scores(committed.probe_weights[-1], committed.probe),
    ]
    assert (
        scores[0][0].argmax() == expected[0][0].argmax() and scores[1][1].argmax() == expected[1][1].argmax()
    )
    np.testing.assert_allclose(scores, expected, atol=0.05)
