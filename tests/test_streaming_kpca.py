"""StreamingKPCA (RFF + Frequent Directions): the FD guarantee on the features, the Gram factor, merging."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh
from scipy.spatial.distance import cdist
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

import kernelsketch
from kernelsketch.decomposition import StreamingKPCA
from kernelsketch.kernels import estimate_bandwidth

TOL = 1e-9


@parametrize_with_checks(
    [
        StreamingKPCA(n_components=3, n_random_features=20, sketch_size=6, bandwidth=1.0),
        StreamingKPCA(
            n_random_features=10, sketch_size=4, shrink="half", bandwidth="median", variant="paired", random_state=0
        ),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _features_and_sketch(est, X):
    return est.feature_map_.transform(X), est.sketch_.get_sketch()


@pytest.mark.parametrize("shrink,factor", [("l", 1.0), ("half", 2.0)])
@pytest.mark.parametrize("variant", ["cos", "paired"])
def test_covariance_error_within_fd_bound(shrink, factor, variant, rng):
    X = rng.normal(size=(800, 5))
    l = 12
    est = StreamingKPCA(
        n_random_features=60, sketch_size=l, shrink=shrink, bandwidth=2.0, variant=variant, random_state=1
    ).fit(X)
    Z, B = _features_and_sketch(est, X)
    E = Z.T @ Z - B.T @ B
    w = np.linalg.eigvalsh(E)
    assert w.min() >= -TOL  # B^T B <= Z^T Z
    assert w.max() <= est.error_bound_ + TOL
    frob = np.sum(Z * Z)
    assert est.error_bound_ <= factor * frob / l + TOL
    assert frob <= 2 * len(X) + TOL  # each squared row norm is at most 2


@pytest.mark.parametrize("k", [3, 8, 12])
def test_gram_factor_error_bound(k, rng):
    """||Z Z^T - Y Y^T||_2 = max_{x perp W} ||Z x||^2 <= sigma_{k+1}(B)^2 + Delta (Lemma 2.2's argument)."""
    X = rng.normal(size=(400, 4))
    est = StreamingKPCA(k, n_random_features=40, sketch_size=12, bandwidth=1.5, random_state=2).fit(X)
    Z, B = _features_and_sketch(est, X)
    Y = est.gram_factor(X)
    np.testing.assert_allclose(Y, Z @ est.components_.T, atol=1e-12)
    err = np.linalg.norm(Z @ Z.T - Y @ Y.T, 2)
    s = np.linalg.svd(B, compute_uv=False)
    tail = s[k] ** 2 if k < len(s) else 0.0
    assert err <= tail + est.error_bound_ + TOL
    assert err <= 2 * len(X) / (12 - 0) + TOL  # eps n with l = 2 / eps for k = 0 ... and any k here


def test_gram_factor_converges_to_rff_gram_as_l_grows(rng):
    X = rng.normal(size=(300, 4))
    errs = []
    for l in (4, 16, 64):
        est = StreamingKPCA(n_random_features=64, sketch_size=l, bandwidth=2.0, random_state=0).fit(X)
        Z = est.feature_map_.transform(X)
        Y = est.gram_factor(X)
        errs.append(np.linalg.norm(Z @ Z.T - Y @ Y.T, 2))
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 1e-9  # l >= m: the sketch is exact


def test_partial_fit_equals_fit(rng):
    X = rng.normal(size=(700, 6))
    kw = dict(n_components=6, n_random_features=50, sketch_size=10, bandwidth=2.0, random_state=5)
    full = StreamingKPCA(**kw).fit(X)
    streamed = StreamingKPCA(**kw)
    for block in np.array_split(X, [1, 33, 34, 400]):
        streamed.partial_fit(block)
    with kernelsketch.config_context(working_memory=2 * 8 * 50 * 7 / 2**20):  # 7 rows per chunk
        chunked = StreamingKPCA(**kw).fit(X)
    for other in (streamed, chunked):
        assert other.n_samples_seen_ == 700
        # singular vectors are defined up to sign: compare B^T B and sign-aligned scores
        B, Bf = other.sketch_.get_sketch(), full.sketch_.get_sketch()
        np.testing.assert_allclose(B.T @ B, Bf.T @ Bf, atol=1e-10)
        np.testing.assert_allclose(other.error_bound_, full.error_bound_, rtol=1e-10)
        T, Tf = other.transform(X), full.transform(X)
        T = T * np.sign(np.sum(T * Tf, axis=0))
        np.testing.assert_allclose(T, Tf, atol=1e-8)


def test_merge_within_fd_guarantee(rng):
    X = rng.normal(size=(900, 5))
    kw = dict(n_random_features=48, sketch_size=10, bandwidth=2.0, random_state=3)
    one = StreamingKPCA(**kw).fit(X)
    parts = [StreamingKPCA(**kw).fit(b) for b in np.array_split(X, 3)]
    merged = parts[0].merge(parts[1]).merge(parts[2])
    assert merged.n_samples_seen_ == 900
    Z = one.feature_map_.transform(X)
    B1, B2 = one.sketch_.get_sketch(), merged.sketch_.get_sketch()
    for est, B in ((one, B1), (merged, B2)):
        w = np.linalg.eigvalsh(Z.T @ Z - B.T @ B)
        assert w.min() >= -TOL and w.max() <= est.error_bound_ + TOL
    assert merged.error_bound_ <= np.sum(Z * Z) / 10 + TOL
    # both lie within their bounds below Z^T Z, hence within the larger bound of each other
    assert np.linalg.norm(B1.T @ B1 - B2.T @ B2, 2) <= max(one.error_bound_, merged.error_bound_) + TOL


def test_merge_refuses_mismatches(rng):
    X = rng.normal(size=(60, 3))
    a = StreamingKPCA(n_random_features=16, sketch_size=4, bandwidth=1.0, random_state=0).fit(X)
    with pytest.raises(ValueError, match="different random features"):
        a.merge(StreamingKPCA(n_random_features=16, sketch_size=4, bandwidth=1.0, random_state=1).fit(X))
    with pytest.raises(ValueError, match="sketch_size"):
        a.merge(StreamingKPCA(n_random_features=16, sketch_size=6, bandwidth=1.0, random_state=0).fit(X))
    with pytest.raises(ValueError, match="different random features"):
        a.merge(StreamingKPCA(n_random_features=16, sketch_size=4, bandwidth="median", random_state=0).fit(X))
    with pytest.raises(NotFittedError):
        a.merge(StreamingKPCA(n_random_features=16, sketch_size=4, bandwidth=1.0, random_state=0))
    with pytest.raises(TypeError):
        a.merge(a.sketch_)


@pytest.mark.parametrize(
    "params,match",
    [
        ({"sketch_size": 1}, "sketch_size"),
        ({"n_random_features": 0}, "n_random_features"),
        ({"n_components": 5, "sketch_size": 4}, "n_components=5 must be <= sketch_size=4"),
        ({"n_components": 5, "sketch_size": 8, "n_random_features": 4}, "n_random_features=4"),
        ({"kernel": "polynomial"}, "shift-invariant"),
        ({"orthogonal": True, "kernel": "cauchy"}, "Gaussian"),
    ],
)
def test_bad_params(params, match, rng):
    with pytest.raises(ValueError, match=match):
        StreamingKPCA(**{"bandwidth": 1.0, **params}).fit(rng.normal(size=(10, 3)))


def test_dtype_sparse_seed(rng):
    Xs = sp.random(300, 15, density=0.3, format="csr", random_state=0)
    kw = dict(n_components=4, n_random_features=30, sketch_size=8, bandwidth=1.0, random_state=0)
    a = StreamingKPCA(**kw).fit(Xs)
    b = StreamingKPCA(**kw).fit(Xs.toarray())
    np.testing.assert_allclose(a.transform(Xs), b.transform(Xs.toarray()), atol=1e-10)
    T32 = a.transform(Xs.astype(np.float32))
    assert T32.dtype == np.float32
    np.testing.assert_allclose(T32, a.transform(Xs), atol=1e-5)
    c = StreamingKPCA(**kw).fit(Xs.toarray().astype(np.float32))
    assert c.transform(Xs.toarray().astype(np.float32)).dtype == np.float32
    np.testing.assert_allclose(c.singular_values_, b.singular_values_, rtol=1e-4)


@pytest.fixture(scope="module")
def cpu_2000():
    from kernelsketch.datasets import load_dataset

    X, _ = load_dataset("cpu")
    X = np.asarray(X, dtype=np.float64)[np.random.default_rng(0).permutation(len(X))[:2000]]
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    h = estimate_bandwidth(X, "median", random_state=0)
    return X, h, np.exp(-cdist(X, X, "sqeuclidean") / h**2)


@pytest.mark.slow
def test_cpu_gram_converges(cpu_2000):
    """||K - Z W W^T Z^T||_2 / n falls as m and l grow together (Theorem 2.1: eps n with l ~ 1/eps)."""
    X, h, K = cpu_2000
    errs = []
    for m, l in ((40, 5), (160, 20), (640, 80)):
        e = []
        for s in range(2):
            Y = StreamingKPCA(n_random_features=m, sketch_size=l, bandwidth=h, random_state=s).fit(X).gram_factor(X)
            e.append(abs(eigsh(K - Y @ Y.T, k=1, which="LM", return_eigenvectors=False, v0=np.ones(len(K)))[0]))
        errs.append(np.mean(e) / len(K))
    assert errs[0] > errs[1] > errs[2], errs
    assert errs[2] < 0.5 * errs[0], errs


def _projector(W):
    return W @ W.T


@pytest.mark.parametrize("n", [403, 1000])
def test_both_bases_against_a_verbatim_algorithm_1(n):
    """basis="last_full_buffer" is Algorithm 1's W; basis="sketch" spans its final B; neither has null directions."""
    from .reference import algorithm1_skpca

    X = np.random.default_rng(0).normal(size=(n, 3))
    ell, m = 10, 64
    paper = StreamingKPCA(
        n_random_features=m, sketch_size=ell, shrink="half", basis="last_full_buffer", bandwidth=2.0, random_state=0
    ).fit(X)
    sketch = StreamingKPCA(
        n_random_features=m, sketch_size=ell, shrink="half", bandwidth=2.0, random_state=0, buffer_size="paper"
    ).fit(X)
    Z = paper.feature_map_.transform(X)
    W_ref, B_ref = algorithm1_skpca(Z, ell)
    assert paper.components_.shape == (ell, m)  # the full buffer has rank ell
    np.testing.assert_allclose(_projector(paper.components_.T), _projector(W_ref), atol=1e-8)
    # the sketch basis: the row space of Algorithm 1's final B (rank below ell: the rows since the last shrink)
    rank = np.linalg.matrix_rank(B_ref)
    assert rank < ell and sketch.components_.shape == (rank, m)
    _, _, Vt = np.linalg.svd(B_ref)
    np.testing.assert_allclose(_projector(sketch.components_.T), _projector(Vt[:rank].T), atol=1e-8)
    for est in (paper, sketch):
        assert np.all(est.singular_values_ > 1e-8 * est.singular_values_[0])
        np.testing.assert_allclose(est.components_ @ est.components_.T, np.eye(est.components_.shape[0]), atol=1e-12)
    # Lemma 2.2 for the sketch basis: ||Z Z^T - Z W W^T Z^T||_2 <= ||Z||_F^2 / (ell / 2) (shrink by the ell/2-th)
    Y = sketch.gram_factor(X)
    err = np.linalg.norm(Z @ Z.T - Y @ Y.T, 2)
    assert err <= np.linalg.norm(Z, "fro") ** 2 / (ell // 2)


def test_explicit_n_components_above_the_rank_warns_and_returns_only_real_directions():
    X = np.random.default_rng(0).normal(size=(203, 3))
    est = StreamingKPCA(
        n_components=10, n_random_features=64, sketch_size=10, shrink="half", bandwidth=2.0, random_state=0
    ).fit(X)
    with pytest.warns(RuntimeWarning, match="has rank"):
        Y = est.transform(X)
    assert Y.shape[1] == est.components_.shape[0] < 10
    short = StreamingKPCA(
        n_random_features=64, sketch_size=10, basis="last_full_buffer", bandwidth=2.0, random_state=0
    ).fit(X[:7])  # never filled a buffer: the sketch's row space
    assert short.components_.shape == (7, 64)
