"""attnlib.training: the model's gradients against finite differences and PyTorch; what training learns."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from attnlib.training import (
    PARAMETER_NAMES,
    Adam,
    Model,
    cross_entropy,
    forward,
    gradients,
    init_parameters,
    previous_token_batch,
    token_labels,
    train,
)

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels

SMALL = Model(vocab_size=5, length=4, d_model=6, d_k=3, d_v=4, seed=1)


def test_gradients_match_central_finite_differences():
    parameters = init_parameters(SMALL, seed=2)
    tokens = previous_token_batch(SMALL, 3, np.random.default_rng(3))
    grads = gradients(SMALL, parameters, tokens).grads
    eps = 1e-6
    for name in PARAMETER_NAMES:
        numeric = np.zeros_like(parameters[name])
        for index in np.ndindex(numeric.shape):
            plus = {**parameters, name: parameters[name].copy()}
            minus = {**parameters, name: parameters[name].copy()}
            plus[name][index] += eps
            minus[name][index] -= eps
            numeric[index] = (forward(SMALL, plus, tokens).loss - forward(SMALL, minus, tokens).loss) / (
                2 * eps
            )
        np.testing.assert_allclose(grads[name], numeric, atol=1e-8, err_msg=name)


@pytest.mark.parametrize("seed", range(20))
def test_gradients_match_pytorch_autograd(seed):
    torch = pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
    rng = np.random.default_rng(100 + seed)
    model = Model(
        vocab_size=int(rng.integers(2, 9)),
        length=int(rng.integers(2, 9)),
        d_model=int(rng.integers(2, 12)),
        d_k=int(rng.integers(1, 9)),
        d_v=int(rng.integers(1, 9)),
        scale=[None, 1.0, 0.3][seed % 3],
        seed=seed,
    )
    parameters = init_parameters(model, seed=seed)
    tokens = previous_token_batch(model, int(rng.integers(1, 6)), rng)
    ours = gradients(model, parameters, tokens)

    W = {name: torch.tensor(value, requires_grad=True) for name, value in parameters.items()}
    X = torch.from_numpy(model.embeddings[tokens] + model.positions)
    Z = torch.nn.functional.scaled_dot_product_attention(
        X @ W["W_q"], X @ W["W_k"], X @ W["W_v"], is_causal=True, scale=model.scale
    )
    logits = Z @ W["W_o"]
    loss = torch.nn.functional.cross_entropy(
        logits[:, 1:].reshape(-1, model.vocab_size), torch.from_numpy(tokens[:, :-1]).reshape(-1)
    )
    loss.backward()
    assert ours.loss == pytest.approx(loss.item(), rel=1e-12)
    for name in PARAMETER_NAMES:
        np.testing.assert_allclose(
            ours.grads[name], W[name].grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=name
        )


def test_cross_entropy_of_a_known_case():
    loss, d_logits = cross_entropy(np.log(np.array([[0.5, 0.25, 0.25]])), np.array([1]))
    assert loss == pytest.approx(np.log(4))
    np.testing.assert_allclose(d_logits, [[0.5, -0.75, 0.25]])


def test_adam_moves_every_entry_by_the_learning_rate_on_its_first_step():
    W = {"W": np.array([1.0, -2.0, 3.0])}
    stepped = Adam(0.1).step(W, {"W": np.array([1e-3, -5.0, 0.0])})
    np.testing.assert_allclose(stepped["W"], [0.9, -1.9, 3.0], atol=1e-6)
    assert W["W"][0] == 1.0  # the given parameters are not changed


def test_training_learns_the_previous_token_pattern():
    run = train(Model(), steps=300, seed=0)
    assert run.losses[0] > 1.5  # about ln 8 at the start: a guess
    assert run.final_loss < 0.01
    weights = run.weights_at(300)
    np.testing.assert_array_equal(weights[1:].argmax(axis=1), np.arange(7))  # query i ≥ 1 looks at key i − 1
    assert np.diagonal(weights, offset=-1).min() > 0.8
    assert np.diagonal(run.weights_at(0), offset=-1).mean() < 0.5  # it was not there at the start


def test_training_is_deterministic_and_saves_the_chosen_steps():
    first, second = (train(SMALL, steps=25, snapshot_every=10, seed=4) for _ in range(2))
    np.testing.assert_array_equal(first.losses, second.losses)
    assert first.snapshot_steps.tolist() == [0, 10, 20, 25]
    assert first.losses.shape == (26,)
    assert all(norms.shape == (25,) for norms in first.grad_norms.values())
    np.testing.assert_array_equal(first.parameters_at(20)["W_q"], second.parameters_at(20)["W_q"])
    assert not np.array_equal(first.parameters_at(0)["W_q"], first.parameters_at(25)["W_q"])
    with pytest.raises(ValueError, match="step 5 was not saved"):
        first.parameters_at(5)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"d_k": 0}, "d_k"),
        ({"length": 1}, "length"),
        ({"scale": -1.0}, "scale"),
        ({"vocab_size": 2.5}, "vocab_size"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_model_arguments_are_named(kwargs, words):
    with pytest.raises((ValueError, TypeError), match=words):
        Model(**kwargs)


def test_bad_tokens_and_parameters_are_named():
    parameters = init_parameters(SMALL)
    with pytest.raises(ValueError, match="ids from 0 to 4"):
        forward(SMALL, parameters, [[0, 1, 2, 5]])
    with pytest.raises(ValueError, match=r"shape \(batch, 4\)"):
        forward(SMALL, parameters, [0, 1, 2, 3])
    with pytest.raises(TypeError, match="integers"):
        forward(SMALL, parameters, [[0.0, 1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="W_k must have shape"):
        forward(SMALL, {**parameters, "W_k": np.ones((3, 3))}, [[0, 1, 2, 3]])
    with pytest.raises(ValueError, match="exactly"):
        forward(SMALL, {"W_q": parameters["W_q"]}, [[0, 1, 2, 3]])
    with pytest.raises(ValueError, match="W_o"):
        forward(SMALL, {**parameters, "W_o": np.full((4, 5), np.nan)}, [[0, 1, 2, 3]])
    with pytest.raises(ValueError, match="learning_rate"):
        train(SMALL, steps=2, learning_rate=0.0)
    with pytest.raises(ValueError, match="seed"):
        train(SMALL, steps=2, seed=-3)
    with pytest.raises(TypeError, match="Model"):
        train("model", steps=2)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda p: forward(None, p, [[0, 1, 2, 3]]), TypeError, "model must be an attnlib.training.Model"),
        (lambda p: gradients("model", p, [[0, 1, 2, 3]]), TypeError, "model must be"),
        (lambda p: init_parameters(None), TypeError, "model must be"),
        (lambda p: previous_token_batch(None, 2, np.random.default_rng(0)), TypeError, "model must be"),
        (lambda p: previous_token_batch(SMALL, 2, 0), TypeError, "rng must be a numpy.random.Generator"),
        (lambda p: previous_token_batch(SMALL, 2, None), TypeError, "rng"),
        (lambda p: previous_token_batch(SMALL, 0, np.random.default_rng(0)), ValueError, "batch_size"),
        (lambda p: forward(SMALL, p, np.zeros((0, 4), dtype=int)), ValueError, "tokens has no sequences"),
        (lambda p: gradients(SMALL, p, np.zeros((0, 4), dtype=int)), ValueError, "tokens has no sequences"),
    ],
)
def test_entry_points_name_a_bad_argument(call, error, words):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty batch used to give a NaN loss with RuntimeWarnings
        with pytest.raises(error, match=words):
            call(init_parameters(SMALL))


def test_a_run_names_a_bad_step_or_sequence():
    run = train(SMALL, steps=2)
    for step in ([0], True, 1.0, "a"):
        with pytest.raises(TypeError, match="step must be a whole number"):
            run.parameters_at(step)
    np.testing.assert_array_equal(run.parameters_at(np.int64(2))["W_q"], run.parameters_at(2)["W_q"])
    for tokens in ("abc", 3, [[0, 1, 2, 3]]):
        with pytest.raises(ValueError, match=r"tokens must be one sequence of shape \(4,\)"):
            run.weights_at(0, tokens)
    with pytest.raises(ValueError, match=r"shape \(batch, 4\)"):
        run.weights_at(0, [0, 1, 2])
    assert run.weights_at(2, [0, 1, 2, 3]).shape == (4, 4)


def test_token_labels_name_position_and_token():
    assert token_labels([3, 0, 3]) == ["0:D", "1:A", "2:D"]
    with pytest.raises(ValueError, match="one sequence"):
        token_labels([[0, 1]])


def test_train_starts_from_the_given_parameters_and_checks_them():
    start = init_parameters(SMALL, seed=5)
    run = train(SMALL, steps=2, seed=0, start=start)
    for name in PARAMETER_NAMES:
        np.testing.assert_array_equal(run.parameters_at(0)[name], start[name])
    assert run.parameters_at(0)["W_q"] is not start["W_q"]  # a copy: training never writes into it
    with pytest.raises(ValueError, match=r"W_q must have shape \(6, 3\)"):
        train(SMALL, steps=1, start={**start, "W_q": np.zeros((3, 6))})
    with pytest.raises(ValueError, match="parameters must be a dict"):
        train(SMALL, steps=1, start={"W_q": start["W_q"]})
