"""project and qkv: shapes and values."""

import numpy as np
import pytest

from attnlib import project, qkv

RNG_SEED = 7


@pytest.fixture
def rng():
    return np.random.default_rng(RNG_SEED)


def test_project_is_x_times_w(rng):
    X, W = rng.normal(size=(3, 4)), rng.normal(size=(4, 5))
    out = project(X, W)
    assert out.shape == (3, 5)
    np.testing.assert_allclose(out, X @ W, rtol=1e-14)


def test_project_by_hand():
    np.testing.assert_array_equal(project([[1, 2], [3, 4]], [[1, 0, 2], [0, 1, 3]]), [[1, 2, 8], [3, 4, 18]])


def test_project_batch(rng):
    X, W = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 5))
    out = project(X, W)
    assert out.shape == (2, 3, 5)
    for b in range(2):
        np.testing.assert_allclose(out[b], X[b] @ W, rtol=1e-14)


def test_project_single_embedding(rng):
    x, W = rng.normal(size=4), rng.normal(size=(4, 2))
    out = project(x, W)
    assert out.shape == (2,)
    np.testing.assert_allclose(out, x @ W, rtol=1e-14)


def test_project_dtypes(rng):
    assert project([[1, 2]], [[1], [2]]).dtype == np.float64
    X32, W32 = rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(4, 2)).astype(np.float32)
    assert project(X32, W32).dtype == np.float32
    assert project(X32, W32.astype(np.float64)).dtype == np.float64


def test_qkv_shapes_and_values(rng):
    X = rng.normal(size=(3, 4))
    W_q, W_k, W_v = rng.normal(size=(4, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 6))
    Q, K, V = qkv(X, W_q, W_k, W_v)
    assert (Q.shape, K.shape, V.shape) == ((3, 2), (3, 2), (3, 6))
    np.testing.assert_allclose(Q, X @ W_q, rtol=1e-14)
    np.testing.assert_allclose(K, X @ W_k, rtol=1e-14)
    np.testing.assert_allclose(V, X @ W_v, rtol=1e-14)


def test_qkv_batch(rng):
    X = rng.normal(size=(2, 3, 4))
    W_q, W_k, W_v = rng.normal(size=(4, 5)), rng.normal(size=(4, 5)), rng.normal(size=(4, 2))
    Q, K, V = qkv(X, W_q, W_k, W_v)
    assert (Q.shape, K.shape, V.shape) == ((2, 3, 5), (2, 3, 5), (2, 3, 2))
    for b in range(2):
        np.testing.assert_allclose(Q[b], X[b] @ W_q, rtol=1e-14)
        np.testing.assert_allclose(K[b], X[b] @ W_k, rtol=1e-14)
        np.testing.assert_allclose(V[b], X[b] @ W_v, rtol=1e-14)


def test_qkv_identity_returns_embeddings(rng):
    X = rng.normal(size=(4, 3))
    for projected in qkv(X, np.eye(3), np.eye(3), np.eye(3)):
        np.testing.assert_array_equal(projected, X)
