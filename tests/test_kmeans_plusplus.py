"""k-means++ seeding: the package's own, step for step scikit-learn's (the same seed picks the same rows)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import kmeans_plusplus as sklearn_kmeans_plusplus

from kernelsketch.kernels import kmeans_plusplus as module
from kernelsketch.kernels.kmeans_plusplus import kmeans_plusplus


@st.composite
def seeding_problems(draw):
    n = draw(st.integers(1, 400))
    d = draw(st.integers(1, 12))
    k = draw(st.integers(1, min(n, 15)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.normal(size=(n, d)) * draw(st.sampled_from([1e-3, 1.0, 1e3]))
    if draw(st.booleans()):
        X = np.round(X)  # ties: equal rows, zero distances, rows already chosen
    if draw(st.booleans()):
        X[rng.random(X.shape) < 0.7] = 0.0
        X = sp.csr_matrix(X)
    if draw(st.booleans()):
        X = X.astype(np.float32)
    return X, k, draw(st.integers(0, 2**31 - 1))


@settings(max_examples=150, deadline=None)
@given(seeding_problems())
def test_the_same_rows_as_scikit_learn_for_the_same_seed(problem):
    X, k, seed = problem
    want_centers, want_indices = sklearn_kmeans_plusplus(X, k, random_state=seed)
    centers, indices = kmeans_plusplus(X, k, random_state=seed)
    np.testing.assert_array_equal(indices, want_indices)
    np.testing.assert_array_equal(centers, want_centers)
    assert centers.dtype == want_centers.dtype


def test_float32_distances_are_taken_in_float64_chunks(monkeypatch):
    # rows far from the origin with small spreads: float32 arithmetic alone loses the differences
    monkeypatch.setattr(module, "_UPCAST_ROWS", 7)  # several chunks, a short last one
    rng = np.random.default_rng(1)
    X = (1000.0 + rng.normal(scale=0.01, size=(300, 3))).astype(np.float32)
    for seed in range(5):
        want = sklearn_kmeans_plusplus(X, 6, random_state=seed)[1]
        np.testing.assert_array_equal(kmeans_plusplus(X, 6, random_state=seed)[1], want)


def test_a_randomstate_is_drawn_from_and_the_same_seed_repeats():
    X = np.random.default_rng(2).normal(size=(200, 4))
    rs = np.random.RandomState(5)
    first = kmeans_plusplus(X, 4, random_state=rs)[1]
    assert not np.array_equal(first, kmeans_plusplus(X, 4, random_state=rs)[1])  # (the state moved on)
    np.testing.assert_array_equal(first, kmeans_plusplus(X, 4, random_state=5)[1])


def test_separated_pairs_get_one_centre_each():
    X = np.repeat(np.arange(5)[:, None] * 100.0, 2, axis=0) + np.tile([[0.0], [0.1]], (5, 1))
    for seed in range(10):
        assert sorted(kmeans_plusplus(X, 5, random_state=seed)[1] // 2) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    ("k", "seed", "error", "match"),
    [
        (11, 0, ValueError, "between 1 and the number of rows"),
        (0, 0, ValueError, "between 1 and the number of rows"),
        (2, 0.5, TypeError, "random_state must be an int or a numpy RandomState"),
        (2, np.random.default_rng(0), TypeError, "got Generator"),
    ],
)
def test_impossible_requests_are_refused(k, seed, error, match):
    with pytest.raises(error, match=match):
        kmeans_plusplus(np.zeros((10, 2)), k, random_state=seed)
