"""Synthetic generators: shapes, seeds, the geometry they promise, and separability claims."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.svm import SVC

from kernelsketch.datasets import make_cluster_in_cluster, make_crescent_fullmoon, make_random_noisy

TWO_D = [make_cluster_in_cluster, make_crescent_fullmoon]


@pytest.mark.parametrize("make", TWO_D)
def test_two_d_shapes_and_balance(make):
    X, y = make(random_state=0)
    assert X.shape == (5000, 2) and X.dtype == np.float64  # Figure 1: 5000 points each
    assert y.dtype == np.int64 and np.bincount(y).tolist() == [2500, 2500]
    X, y = make(101, random_state=0)
    assert X.shape == (101, 2) and np.bincount(y).tolist() == [50, 51]
    # rows are shuffled: a small prefix (the paper's n = 100 subsample) holds both groups
    assert set(y[:20].tolist()) == {0, 1}


@pytest.mark.parametrize("make", TWO_D)
def test_two_d_determinism(make):
    X1, y1 = make(300, random_state=7)
    X2, y2 = make(300, random_state=7)
    X3, _ = make(300, random_state=8)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.allclose(X1, X3)
    X4, _ = make(300, random_state=np.random.default_rng(7))
    np.testing.assert_array_equal(X1, X4)


def test_cluster_in_cluster_geometry():
    X, y = make_cluster_in_cluster(4000, random_state=1)
    r = np.linalg.norm(X, axis=1)
    assert r[y == 0].max() <= 1.0
    assert r[y == 1].min() >= 2.0 and r[y == 1].max() <= 3.0
    # both groups centred at the origin: the class means coincide (why no line separates them)
    for k in (0, 1):
        assert np.linalg.norm(X[y == k].mean(axis=0)) < 0.15


def test_crescent_fullmoon_geometry():
    X, y = make_crescent_fullmoon(4000, random_state=1)
    r = np.linalg.norm(X, axis=1)
    theta = np.mod(np.arctan2(X[:, 1], X[:, 0]), 2 * np.pi)
    assert r[y == 0].max() <= 1.0
    assert r[y == 1].min() >= 1.5 and r[y == 1].max() <= 2.5
    crescent = theta[y == 1]
    assert crescent.min() >= np.pi / 4 and crescent.max() <= 7 * np.pi / 4
    # it wraps the moon on three sides: left, above and below
    assert (crescent > 3 * np.pi / 4).any() and (np.abs(crescent - np.pi) < 0.1).any()


@pytest.mark.parametrize("make", TWO_D)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_linear_fails_where_rbf_kernel_separates(make, seed):
    X, y = make(2000, random_state=seed)
    linear = cross_val_score(LogisticRegression(), X, y, cv=3).mean()
    rbf = cross_val_score(SVC(kernel="rbf", gamma=1.0), X, y, cv=3).mean()
    # measured: linear 0.50 (cluster in cluster) / 0.62-0.65 (crescent); RBF 1.00
    assert linear < 0.8
    assert rbf > 0.97


def test_random_noisy_shape_determinism_and_validation():
    A = make_random_noisy(300, 40, signal_dim=5, random_state=3)
    assert A.shape == (300, 40) and A.dtype == np.float64
    np.testing.assert_array_equal(A, make_random_noisy(300, 40, signal_dim=5, random_state=3))
    assert not np.allclose(A, make_random_noisy(300, 40, signal_dim=5, random_state=4))
    with pytest.raises(ValueError, match="signal_dim must be < n_features"):
        make_random_noisy(10, 5, signal_dim=5)
    with pytest.raises(ValueError, match="zeta"):
        make_random_noisy(10, 5, signal_dim=2, zeta=0)
    with pytest.raises(TypeError, match="n_samples"):
        make_random_noisy(True, 5, signal_dim=2)


@pytest.mark.parametrize("seed", [0, 1])
def test_random_noisy_spectrum(seed):
    n, d, s, zeta = 3000, 300, 30, 10.0
    A = make_random_noisy(n, d, signal_dim=s, zeta=zeta, random_state=seed)
    sv = np.linalg.svd(A, compute_uv=False)
    D = 1.0 - np.arange(s) / d
    # Signal: S has i.i.d. N(0,1) entries, so S D U has singular values sqrt(n) D_ii (1 +- O(sqrt(s/n))).
    ratio = sv[:s] / (np.sqrt(n) * D)
    assert np.all(np.abs(ratio - 1) < 0.15), ratio
    # Noise: the rest sit below the Marchenko-Pastur edge (sqrt(n) + sqrt(d)) / zeta ...
    edge = (np.sqrt(n) + np.sqrt(d)) / zeta
    assert sv[s] < 1.05 * edge and sv[-1] > 0.9 * (np.sqrt(n) - np.sqrt(d)) / zeta
    # ... so the top-s singular values dominate: a clear gap at rank s.
    assert sv[s - 1] > 5 * sv[s]


def test_random_noisy_default_is_the_papers_matrix():
    A = make_random_noisy(random_state=0)
    assert A.shape == (20000, 1000)  # Section 3: RandomNoisy is 20000 x 1000, s = 50, zeta = 10
    # Energy check without an SVD: ||A||_F^2 = n * sum(D_ii^2) + n d / zeta^2 in expectation.
    D = 1.0 - np.arange(50) / 1000
    expected = 20000 * np.sum(D**2) + 20000 * 1000 / 100
    assert abs(np.sum(A * A) / expected - 1) < 0.02
