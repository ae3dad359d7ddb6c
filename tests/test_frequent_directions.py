"""Tests for kernelsketch.sketches.FrequentDirections.

The guarantee checked everywhere (Ghashami et al. 2016, Thm 1.1; Liberty 2013
for ``shrink="half"`` with ``j = l // 2``):

    0 <= A^T A - B^T B,   ||A^T A - B^T B||_2 <= error_bound_ <= ||A - A_k||_F^2 / (j - k)

for every k < j, against a dense eigendecomposition of A^T A - B^T B.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.utils.estimator_checks import parametrize_with_checks

from kernelsketch import config_context
from kernelsketch.sketches import FrequentDirections
from kernelsketch.sketches.frequent_directions import _shrink_rows, _shrink_rows_svd

KINDS = (
    "gaussian",
    "low_rank",
    "student_t",
    "cauchy",
    "norm_ascending",
    "norm_descending",
    "repeated",
    "one_hot",
    "with_zero_rows",
    "decaying",
)

PROPERTY_SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------- references
def make_matrix(kind, n, d, seed, dtype=np.float64):
    """Random and adversarial row streams."""
    rng = np.random.default_rng(seed)
    if kind == "gaussian":
        A = rng.standard_normal((n, d))
    elif kind == "low_rank":
        r = int(rng.integers(1, 4))
        A = rng.standard_normal((n, r)) @ rng.standard_normal((r, d))
    elif kind == "student_t":
        A = rng.standard_t(2.0, size=(n, d))
    elif kind == "cauchy":
        A = rng.standard_cauchy((n, d))
    elif kind in ("norm_ascending", "norm_descending"):
        A = rng.standard_normal((n, d)) * np.exp(rng.uniform(-4, 4, size=(n, 1)))
        order = np.argsort(np.linalg.norm(A, axis=1))
        A = A[order if kind == "norm_ascending" else order[::-1]]
    elif kind == "repeated":
        A = np.repeat(rng.standard_normal((3, d)), -(-n // 3), axis=0)[:n]
    elif kind == "one_hot":
        A = np.eye(d)[rng.integers(0, d, size=n)] * rng.uniform(0.5, 2.0, size=(n, 1))
    elif kind == "with_zero_rows":
        A = rng.standard_normal((n, d))
        A[rng.random(n) < 0.5] = 0.0
    elif kind == "decaying":
        # Spectrum over ~16 orders of magnitude: exercises the SVD fallback.
        A = rng.standard_normal((n, d)) * np.logspace(0, -8, d)
    else:  # pragma: no cover - test bug
        raise ValueError(kind)
    return np.ascontiguousarray(A, dtype=dtype)


def naive_fd(A, capacity, j, ell):
    """Per-row Frequent Directions with an SVD at every shrink (the textbook loop).

    ``capacity`` rows of buffer; shrink by the j-th squared singular value when
    full; final compaction to ``ell`` rows as in ``get_sketch``.  Returns
    (B, delta_sum).
    """
    d = A.shape[1]
    exact = ell >= d
    B = np.zeros((0, d))
    delta_sum = 0.0

    def shrink(B, j):
        _, s, vt = np.linalg.svd(B, full_matrices=False)
        lam = s**2
        delta = 0.0 if exact or j > lam.size else lam[j - 1]
        # the documented rounding floor: directions within rounding noise of
        # zero are dropped, not kept as noise rows (otherwise how many rows
        # survive -- hence when the next shrink happens -- depends on noise)
        delta = max(delta, B.shape[0] * np.finfo(np.float64).eps * lam[0])
        keep = lam > delta
        return np.sqrt(lam[keep] - delta)[:, None] * vt[keep], delta

    for row in A.astype(np.float64):
        B = np.vstack([B, row])
        if B.shape[0] == capacity:
            B, delta = shrink(B, j)
            delta_sum += delta
    if B.shape[0] > ell:
        B, delta = shrink(B, ell)
        delta_sum += delta
    return B, delta_sum


def covariance_gap(A, B):
    """Eigenvalues of A^T A - B^T B in float64."""
    A = A.astype(np.float64)
    B = B.astype(np.float64)
    return np.linalg.eigvalsh(A.T @ A - B.T @ B)


def tail_energies(A, length):
    """||A - A_k||_F^2 for k = 0, 1, ..., length - 1 (zero past the rank)."""
    s2 = np.linalg.svd(A.astype(np.float64), compute_uv=False) ** 2
    tails = np.cumsum(s2[::-1])[::-1]
    return np.concatenate([tails, np.zeros(max(0, length - tails.size))])[:length]


def rtol_for(dtype):
    return 1e-9 if np.dtype(dtype) == np.float64 else 2e-5


def assert_guarantee(fd, A, rtol):
    """The FD guarantee for the sketch ``fd`` of the rows ``A``."""
    B = fd.get_sketch()
    assert B.shape == (fd.sketch_size, A.shape[1])
    frob = float(np.sum(A.astype(np.float64) ** 2))
    tol = rtol * frob + 1e-300
    gap = covariance_gap(A, B)
    assert gap[0] >= -tol, f"A^T A - B^T B not PSD: min eigenvalue {gap[0]} (tol {tol})"
    bound = fd.error_bound_
    assert gap[-1] <= bound + tol, f"||A^TA - B^TB|| = {gap[-1]} > error_bound_ = {bound}"
    j = fd.sketch_size if fd.shrink == "l" else fd.sketch_size // 2
    tails = tail_energies(A, j)
    for k in range(j):
        assert bound <= tails[k] / (j - k) + tol, (k, bound, tails[k] / (j - k))
    assert fd.n_samples_seen_ == A.shape[0]
    assert fd.squared_frobenius_ == pytest.approx(frob, rel=1e-6 if rtol > 1e-9 else 1e-12, abs=1e-300)


def random_splits(draw, n):
    """A random split of range(n) into consecutive blocks."""
    cuts = draw(st.lists(st.integers(0, n), max_size=6))
    return np.unique([0, *cuts, n])


# ------------------------------------------------------------ sklearn checks
@parametrize_with_checks(
    [
        FrequentDirections(),
        FrequentDirections(sketch_size=4, shrink="half", n_components=2),
        FrequentDirections(sketch_size=3, buffer_size=11),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# --------------------------------------------------------- property tests
@PROPERTY_SETTINGS
@given(
    kind=st.sampled_from(KINDS),
    n=st.integers(1, 150),
    d=st.integers(1, 24),
    ell=st.integers(2, 12),
    shrink=st.sampled_from(["l", "half"]),
    float32=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
    extra=st.one_of(st.none(), st.integers(0, 40)),
    data=st.data(),
)
def test_stream_guarantee_and_split_invariance(kind, n, d, ell, shrink, float32, seed, extra, data):
    dtype = np.float32 if float32 else np.float64
    A = make_matrix(kind, n, d, seed, dtype)
    # buffer_size: the papers' buffer (None) or a larger one; the guarantee holds for every buffer size
    buffer_size = None if extra is None else (2 * ell if shrink == "l" else ell) + extra
    fd_fit = FrequentDirections(sketch_size=ell, shrink=shrink, buffer_size=buffer_size).fit(A)
    fd_stream = FrequentDirections(sketch_size=ell, shrink=shrink, buffer_size=buffer_size)
    cuts = random_splits(data.draw, n)
    for a, b in itertools.pairwise(cuts):
        if b > a:
            fd_stream.partial_fit(A[a:b])
    assert_guarantee(fd_stream, A, rtol_for(dtype))
    # partial_fit over any split == fit, bit for bit.
    np.testing.assert_array_equal(fd_stream.get_sketch(), fd_fit.get_sketch())
    assert fd_stream.error_bound_ == fd_fit.error_bound_
    assert fd_stream.get_sketch().dtype == dtype


@st.composite
def merge_plans(draw):
    n = draw(st.integers(1, 120))
    cuts = random_splits(draw, n)
    parts = [(a, b) for a, b in itertools.pairwise(cuts) if b > a]
    # A random binary tree: repeatedly merge sketch j into sketch i.
    merges = []
    alive = list(range(len(parts)))
    while len(alive) > 1:
        i, j = draw(st.permutations(alive))[:2]
        merges.append((i, j))
        alive.remove(j)
    return n, parts, merges


@PROPERTY_SETTINGS
@given(
    plan=merge_plans(),
    kind=st.sampled_from(KINDS),
    d=st.integers(1, 20),
    ell=st.integers(2, 10),
    shrink=st.sampled_from(["l", "half"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_merge_tree_guarantee(plan, kind, d, ell, shrink, seed):
    n, parts, merges = plan
    A = make_matrix(kind, n, d, seed)
    sketches = {i: FrequentDirections(sketch_size=ell, shrink=shrink).fit(A[a:b]) for i, (a, b) in enumerate(parts)}
    for i, j in merges:
        assert sketches[i].merge(sketches.pop(j)) is sketches[i]
    (merged,) = sketches.values()
    # Rows of the merged stream in any order: the guarantee is about A^T A.
    assert_guarantee(merged, A, 1e-9)
    one_pass = FrequentDirections(sketch_size=ell, shrink=shrink).fit(A)
    assert_guarantee(one_pass, A, 1e-9)


@PROPERTY_SETTINGS
@given(
    kind=st.sampled_from(KINDS),
    n=st.integers(1, 80),
    d=st.integers(1, 16),
    ell=st.integers(2, 8),
    shrink=st.sampled_from(["l", "half"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_matches_naive_per_row_reference(kind, n, d, ell, shrink, seed):
    A = make_matrix(kind, n, d, seed)
    fd = FrequentDirections(sketch_size=ell, shrink=shrink, buffer_size="paper").fit(A)
    capacity, j = (2 * ell, ell) if shrink == "l" else (ell, ell // 2)
    B_ref, delta_ref = naive_fd(A, capacity, j, ell)
    B = fd.get_sketch()
    frob = float(np.sum(A**2))
    # Shrinking is a continuous spectral function of the buffer's covariance,
    # so the blocked Gram route and the per-row SVD loop agree on B^T B.
    np.testing.assert_allclose(B.T @ B, B_ref.T @ B_ref, atol=1e-8 * frob)
    assert fd.error_bound_ == pytest.approx(delta_ref, abs=1e-8 * frob)
    # The textbook l-row variant (one row freed per SVD) obeys the same
    # ||A - A_k||_F^2 / (l - k) bound as the default 2l buffer.
    B_classic, delta_classic = naive_fd(A, ell, ell, ell)
    gap = covariance_gap(A, B_classic)
    tails = tail_energies(A, ell)
    for k in range(ell):
        assert gap[-1] <= delta_classic + 1e-9 * frob
        assert delta_classic <= tails[k] / (ell - k) + 1e-9 * frob


# ----------------------------------------------------------- exact regime
@pytest.mark.parametrize("shrink", ["l", "half"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_exact_when_sketch_size_at_least_n_features(shrink, dtype):
    A = make_matrix("gaussian", 300, 6, 0, dtype)
    for ell in (6, 9):
        fd = FrequentDirections(sketch_size=ell, shrink=shrink, buffer_size="paper")
        for block in np.array_split(A, 7):
            fd.partial_fit(block)
        B = fd.get_sketch().astype(np.float64)
        A64 = A.astype(np.float64)
        rtol = 1e-12 if dtype == np.float64 else 1e-5
        np.testing.assert_allclose(B.T @ B, A64.T @ A64, atol=rtol * np.sum(A64**2))
        assert fd.error_bound_ <= rtol * np.sum(A64**2)


# ----------------------------------------------------------- shrink routes
@pytest.mark.parametrize("shape", [(20, 50), (20, 7), (12, 12)])
@pytest.mark.parametrize("spread", [0.0, 10.0, 14.0])
def test_gram_shrink_matches_svd_shrink(shape, spread):
    rng = np.random.default_rng(1)
    r, d = shape
    B = rng.standard_normal(shape) * np.logspace(0, -spread / 2, d)
    for j in (1, r // 2, min(r, d), r):
        rows_gram, delta1 = _shrink_rows(B, j, False)
        rows_svd, delta2 = _shrink_rows_svd(B, j, False)
        assert rows_gram.shape[0] <= j - 1 and rows_svd.shape[0] <= j - 1
        assert delta1 == pytest.approx(delta2, rel=1e-9, abs=1e-12 * np.sum(B**2))
        C1 = rows_gram.T @ rows_gram
        C2 = rows_svd.T @ rows_svd
        np.testing.assert_allclose(C1, C2, atol=1e-10 * np.sum(B**2))
        gap = np.linalg.eigvalsh(B.T @ B - C1)
        assert gap[0] >= -1e-12 * np.sum(B**2)
        assert gap[-1] <= delta1 * (1 + 1e-9) + 1e-12 * np.sum(B**2)


# ------------------------------------------------------- sparse and dtypes
def test_csr_matches_dense_with_tiny_working_memory():
    rng = np.random.default_rng(3)
    A = sp.random(400, 40, density=0.1, format="csr", random_state=4, dtype=np.float64)
    with config_context(working_memory=40 * 8 * 7 / 2**20):  # 7 rows per chunk
        fd_sparse = FrequentDirections(sketch_size=5).fit(A)
    fd_dense = FrequentDirections(sketch_size=5).fit(A.toarray())
    np.testing.assert_array_equal(fd_sparse.get_sketch(), fd_dense.get_sketch())
    X = sp.random(10, 40, density=0.3, format="csr", random_state=rng.integers(1000))
    np.testing.assert_allclose(fd_sparse.transform(X), fd_dense.transform(X.toarray()))


def test_float32_preserved_and_later_blocks_cast():
    A = make_matrix("gaussian", 200, 10, 5, np.float32)
    fd = FrequentDirections(sketch_size=4).partial_fit(A[:100])
    fd.partial_fit(A[100:].astype(np.float64))  # cast to the sketch's float32
    ref = FrequentDirections(sketch_size=4).fit(A)
    np.testing.assert_array_equal(fd.get_sketch(), ref.get_sketch())
    assert fd.get_sketch().dtype == np.float32
    assert fd.components_.dtype == np.float32
    assert fd.transform(A[:3]).dtype == np.float32


def test_transform_components_and_singular_values():
    A = make_matrix("decaying", 300, 15, 6)
    fd = FrequentDirections(sketch_size=6, n_components=4).fit(A)
    B = fd.get_sketch()
    V = fd.components_
    assert V.shape == (6, 15)
    np.testing.assert_allclose(V @ V.T, np.eye(6), atol=1e-12)
    np.testing.assert_allclose(fd.singular_values_, np.linalg.svd(B, compute_uv=False), atol=1e-12)
    assert np.all(np.diff(fd.singular_values_) <= 0)
    np.testing.assert_allclose(B, fd.singular_values_[:, None] * V, atol=1e-12)
    np.testing.assert_allclose(fd.transform(A), A @ V[:4].T)
    assert list(fd.get_feature_names_out()) == [f"frequentdirections{i}" for i in range(4)]


def test_fewer_rows_than_sketch_is_exact_and_padded():
    A = make_matrix("gaussian", 3, 10, 7)
    fd = FrequentDirections(sketch_size=5).fit(A)
    B = fd.get_sketch()
    assert B.shape == (5, 10)
    np.testing.assert_allclose(B[3:], 0.0)
    np.testing.assert_allclose(B.T @ B, A.T @ A, atol=1e-12 * np.sum(A**2))
    assert fd.error_bound_ == pytest.approx(0.0, abs=1e-12 * np.sum(A**2))
    V = fd.components_
    np.testing.assert_allclose(V @ V.T, np.eye(5), atol=1e-12)


def test_get_sketch_does_not_disturb_the_stream():
    A = make_matrix("gaussian", 250, 12, 8)
    fd = FrequentDirections(sketch_size=4).partial_fit(A[:130])
    fd.get_sketch()  # compaction shrinks a copy, not the buffer
    fd.partial_fit(A[130:])
    ref = FrequentDirections(sketch_size=4).fit(A)
    np.testing.assert_array_equal(fd.get_sketch(), ref.get_sketch())
    assert fd.error_bound_ == ref.error_bound_


# ------------------------------------------------------------ persistence
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_to_dict_from_dict_round_trip(dtype):
    A = make_matrix("student_t", 300, 9, 9, dtype)
    fd = FrequentDirections(sketch_size=5, shrink="half").fit(A[:170])
    state = fd.to_dict()
    restored = FrequentDirections.from_dict(state)
    assert restored.get_params() == fd.get_params()
    np.testing.assert_array_equal(restored.get_sketch(), fd.get_sketch())
    fd.partial_fit(A[170:])
    restored.partial_fit(A[170:])
    np.testing.assert_array_equal(restored.get_sketch(), fd.get_sketch())
    assert restored.error_bound_ == fd.error_bound_
    assert restored.squared_frobenius_ == fd.squared_frobenius_
    assert restored.n_samples_seen_ == 300
    empty = FrequentDirections.from_dict(FrequentDirections(sketch_size=3).to_dict())
    assert not hasattr(empty, "n_features_in_")
    with pytest.raises(ValueError, match="buffer"):
        FrequentDirections.from_dict({**state, "buffer": np.zeros((2, 4))})


# -------------------------------------------------------------- merging
def test_merge_equals_guarantee_and_edge_cases():
    A = make_matrix("norm_descending", 200, 8, 10)
    left = FrequentDirections(sketch_size=3).fit(A[:90])
    right = FrequentDirections(sketch_size=3).fit(A[90:])
    left.merge(right)
    assert_guarantee(left, A, 1e-9)
    # Merging an unfitted sketch is a no-op; merging into an unfitted one copies.
    before = left.get_sketch()
    left.merge(FrequentDirections(sketch_size=3))
    np.testing.assert_array_equal(left.get_sketch(), before)
    fresh = FrequentDirections(sketch_size=3).merge(left)
    np.testing.assert_allclose(fresh.get_sketch().T @ fresh.get_sketch(), before.T @ before, atol=1e-10 * np.sum(A**2))
    assert fresh.n_samples_seen_ == 200
    # Self-merge sketches A stacked twice.
    twice = FrequentDirections(sketch_size=3).fit(A)
    twice.merge(twice)
    assert_guarantee(twice, np.vstack([A, A]), 1e-9)


@pytest.mark.parametrize(
    "other, match",
    [
        (FrequentDirections(sketch_size=4), "sketch_size"),
        (FrequentDirections(sketch_size=3, shrink="half"), "shrink"),
        ("n_features", "n_features"),
        ("dtype", "dtype"),
    ],
)
def test_merge_refuses_mismatch(other, match):
    A = make_matrix("gaussian", 20, 5, 11)
    fd = FrequentDirections(sketch_size=3).fit(A)
    if other == "n_features":
        other = FrequentDirections(sketch_size=3).fit(A[:, :4])
    elif other == "dtype":
        other = FrequentDirections(sketch_size=3).fit(A.astype(np.float32))
    else:
        other.fit(A)
    with pytest.raises(ValueError, match=match):
        fd.merge(other)
    with pytest.raises(TypeError, match="FrequentDirections"):
        fd.merge(A)


# ------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "params, error, match",
    [
        ({"sketch_size": 1}, ValueError, "sketch_size must be >= 2"),
        ({"sketch_size": 0}, ValueError, "sketch_size must be >= 2"),
        ({"sketch_size": 2.5}, TypeError, "sketch_size must be an int"),
        ({"shrink": "quarter"}, ValueError, "shrink must be one of"),
        ({"sketch_size": 3, "n_components": 4}, ValueError, "n_components"),
    ],
)
def test_bad_params(params, error, match):
    with pytest.raises(error, match=match):
        FrequentDirections(**params).fit(np.ones((4, 3)))


def test_changed_params_refused_mid_stream():
    fd = FrequentDirections(sketch_size=3).fit(np.ones((10, 5)))
    fd.set_params(sketch_size=4)
    with pytest.raises(ValueError, match="call fit to restart"):
        fd.partial_fit(np.ones((2, 5)))
    fd.fit(np.ones((10, 5)))  # fit restarts with the new parameters
    assert fd.get_sketch().shape == (4, 5)


def test_save_load_round_trip(tmp_path):
    import kernelsketch

    A = make_matrix("cauchy", 200, 12, 12, np.float32)
    fd = FrequentDirections(sketch_size=4).fit(A[:110])
    kernelsketch.save(fd, tmp_path / "fd.ks")
    loaded = kernelsketch.load(tmp_path / "fd.ks")
    fd.partial_fit(A[110:])
    loaded.partial_fit(A[110:])
    np.testing.assert_array_equal(loaded.get_sketch(), fd.get_sketch())
    assert loaded.error_bound_ == fd.error_bound_


def test_bad_data():
    X = np.ones((5, 3))
    X[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        FrequentDirections().fit(X)
    X[2, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        FrequentDirections().partial_fit(X)
    fd = FrequentDirections(sketch_size=2).fit(np.ones((5, 3)))
    with pytest.raises(ValueError, match="4 features"):
        fd.transform(np.ones((2, 4)))
    with pytest.raises(ValueError, match="4 features"):
        fd.partial_fit(np.ones((2, 4)))


def test_a_larger_buffer_shrinks_less_often_with_the_same_guarantee():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(3000, 30)) * np.linspace(4, 0.1, 30)
    small = FrequentDirections(sketch_size=8, buffer_size="paper").fit(A)
    large = FrequentDirections(sketch_size=8, buffer_size=500).fit(A)
    assert large._buffer.shape == (500, 30) and small._buffer.shape == (16, 30)
    # a shrink empties at least buffer_size - l + 1 rows
    assert large._n_shrinks <= 3000 // (500 - 8 + 1) < small._n_shrinks
    assert_guarantee(large, A, 1e-9)
    s = np.linalg.svd(A, compute_uv=False)
    for k in range(8):  # Delta <= ||A - A_k||_F^2 / (l - k), whatever the buffer
        assert large.error_bound_ <= float(np.sum(s[k:] ** 2)) / (8 - k) * (1 + 1e-9)
    with pytest.raises(ValueError, match=r"buffer_size must be >= 16"):
        FrequentDirections(sketch_size=8, buffer_size=10).fit(A)
    with pytest.raises(ValueError, match=r"buffer_size must be >= 8"):
        FrequentDirections(sketch_size=8, shrink="half", buffer_size=7).fit(A)
    with pytest.raises(TypeError, match="buffer_size must be 'auto', 'paper', an int"):
        FrequentDirections(buffer_size=50.0).fit(A)
    # a saved stream keeps its buffer size and goes on exactly
    back = FrequentDirections.from_dict(large.to_dict())
    back.partial_fit(A[:700])
    np.testing.assert_array_equal(back.get_sketch(), large.partial_fit(A[:700]).get_sketch())


def test_the_auto_buffer_is_memory_budgeted_and_keeps_the_guarantee(monkeypatch):
    from kernelsketch.sketches import frequent_directions as fdm

    # 32 MiB of float64 rows, at most 4096 rows, at least the papers' buffer
    assert FrequentDirections(sketch_size=8)._capacity(30) == 4096
    assert FrequentDirections(sketch_size=8)._capacity(fdm.AUTO_MAX_FEATURES) == 4096
    assert FrequentDirections(sketch_size=8)._capacity(fdm.AUTO_MAX_FEATURES + 1) == 16  # the papers' beyond
    assert FrequentDirections(sketch_size=8, shrink="half")._capacity(10**7) == 8
    with monkeypatch.context() as m:  # within the feature limit, the memory budget caps the rows
        m.setattr(fdm, "AUTO_BUFFER_BYTES", 8 * 100 * 500)
        assert FrequentDirections(sketch_size=8)._capacity(100) == 500
        assert FrequentDirections(sketch_size=8)._capacity(500) == 100
    assert FrequentDirections(sketch_size=8, buffer_size="paper")._capacity(30) == 16
    assert FrequentDirections(sketch_size=8, buffer_size=None)._capacity(30) == 16
    rng = np.random.default_rng(1)
    A = rng.normal(size=(20_000, 30)) * np.linspace(4, 0.1, 30)
    auto = FrequentDirections(sketch_size=8).fit(A)
    assert auto._buffer.shape == (4096, 30) and auto._n_shrinks <= 20_000 // (4096 - 8 + 1)
    assert_guarantee(auto, A, 1e-9)
    s = np.linalg.svd(A, compute_uv=False)
    for k in range(8):
        assert auto.error_bound_ <= float(np.sum(s[k:] ** 2)) / (8 - k) * (1 + 1e-9)
    # the state of an 'auto' stream reloads with the same buffer and goes on exactly
    back = FrequentDirections.from_dict(auto.to_dict())
    np.testing.assert_array_equal(back.partial_fit(A[:5000]).get_sketch(), auto.partial_fit(A[:5000]).get_sketch())
    with pytest.raises(ValueError, match="buffer_size must be 'auto', 'paper'"):
        FrequentDirections(buffer_size="big").fit(A)


def test_streaming_kpca_keeps_the_papers_buffer_for_algorithm_1():
    from kernelsketch.decomposition import StreamingKPCA

    X = np.random.default_rng(2).normal(size=(300, 3))
    paper = StreamingKPCA(n_random_features=40, sketch_size=6, basis="last_full_buffer", bandwidth=2.0).fit(X)
    sketch = StreamingKPCA(n_random_features=40, sketch_size=6, bandwidth=2.0).fit(X)
    assert paper.sketch_._buffer.shape[0] == 12  # Algorithm 1's W is defined on the paper's buffer
    assert sketch.sketch_._buffer.shape[0] == 4096
