import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import pdist

from kernelsketch.kernels import estimate_bandwidth, resolve_bandwidth


def test_percentile_exact_for_small_sets(rng):
    X = rng.normal(size=(60, 3))
    d = pdist(X)
    assert estimate_bandwidth(X, "percentile") == pytest.approx(np.percentile(d, 25))
    assert estimate_bandwidth(X, "percentile", percentile=10) == pytest.approx(np.percentile(d, 10))
    assert estimate_bandwidth(X, "median") == pytest.approx(np.median(d))
    assert estimate_bandwidth(sp.csr_matrix(X), "median") == pytest.approx(np.median(d))


def test_percentile_sampled_close_to_brute_force(rng):
    X = rng.normal(size=(3000, 4))  # 4.5M pairs > 100k sampled
    brute = np.percentile(pdist(X), 25)
    est = estimate_bandwidth(X, "percentile", random_state=1)
    assert abs(est - brute) / brute < 0.01
    # seeded: same seed, same answer; other seed, (slightly) different
    assert estimate_bandwidth(X, random_state=1) == est
    assert estimate_bandwidth(X, random_state=2) != est
    Xs = sp.csr_matrix(X)
    assert estimate_bandwidth(Xs, random_state=1) == pytest.approx(est)


def test_mean_sq_matches_brute_force(rng):
    X = rng.normal(size=(200, 5)) * 3 + 7
    d2 = pdist(X) ** 2
    assert estimate_bandwidth(X, "mean_sq") == pytest.approx(np.sqrt(d2.mean()))
    assert estimate_bandwidth(X, "mean_sq", lam=10) == pytest.approx(np.sqrt(d2.mean() / 10))
    assert estimate_bandwidth(sp.csr_matrix(X), "mean_sq") == pytest.approx(np.sqrt(d2.mean()))


def test_identical_points_error():
    X = np.ones((10, 3))
    for method in ("percentile", "median", "mean_sq"):
        with pytest.raises(ValueError, match="identical"):
            estimate_bandwidth(X, method)
    with pytest.raises(ValueError, match="identical"):
        estimate_bandwidth(sp.csr_matrix(X), "median")


def test_mostly_duplicates_zero_percentile():
    X = np.zeros((100, 2))
    X[0] = 1.0
    with pytest.raises(ValueError, match="percentile of interpoint distances is 0"):
        estimate_bandwidth(X, "percentile")


def test_resolve_and_bad_values():
    X = np.arange(10.0).reshape(5, 2)
    assert resolve_bandwidth(2, X) == 2.0
    assert resolve_bandwidth("median", X) > 0
    with pytest.raises(ValueError, match="unknown bandwidth heuristic"):
        resolve_bandwidth("silverman", X)
    with pytest.raises(ValueError, match="positive"):
        resolve_bandwidth(-1.0, X)
    with pytest.raises(TypeError, match="bandwidth"):
        resolve_bandwidth(None, X)
    with pytest.raises(ValueError, match="sample"):
        estimate_bandwidth(np.ones((1, 2)))
