"""The landmark estimators' shared contract: fit's order of random draws, the map."""

import numpy as np
import pytest

from kernelsketch import KernelJL, Nystroem, SubsampleKPCA
from kernelsketch.maps import sample_landmarks
from kernelsketch.utils.validation import check_random_state

from .reference import naive_kernel

ESTIMATORS = [
    (Nystroem, {"n_components": 3}),
    (KernelJL, {"n_components": 3}),
    (SubsampleKPCA, {"n_components": 3}),
]


@pytest.mark.parametrize("cls, params", ESTIMATORS)
@pytest.mark.parametrize("seed", [0, 7, 2**31 - 5])
def test_draw_seeds_then_sample_landmarks_replays_fit(rng, cls, params, seed):
    # Another fitting path (Dask) relies on this to pick the same rows.
    X = rng.normal(size=(300, 4))
    est = cls(n_landmarks=40, bandwidth="median", random_state=seed, **params).fit(X)
    g = check_random_state(seed)
    kernel_seed, extra = cls.draw_seeds(g)
    assert len(extra) == cls.n_seeds_before_landmarks
    np.testing.assert_array_equal(sample_landmarks(300, 40, g), est.landmark_indices_)


@pytest.mark.parametrize("cls, params", ESTIMATORS)
def test_map_is_kernel_times_projection_plus_offset(rng, cls, params):
    X = rng.normal(size=(200, 3))
    est = cls(n_landmarks=30, bandwidth=1.3, random_state=0, **params).fit(X)
    Y = rng.normal(size=(50, 3))
    K = naive_kernel(Y, est.landmarks_, "gaussian", bandwidth=1.3)
    offset = getattr(est, "offset_", None)
    expected = K @ est.projection_ + (0.0 if offset is None else offset)
    np.testing.assert_allclose(est.transform(Y), expected, rtol=1e-10, atol=1e-12)


def test_uncentred_kernel_jl_has_no_offset(rng):
    X = rng.normal(size=(200, 3))
    est = KernelJL(n_components=4, n_landmarks=30, bandwidth=1.0, centered=False, random_state=0).fit(X)
    K = naive_kernel(X[:20], est.landmarks_, "gaussian", bandwidth=1.0)
    np.testing.assert_allclose(est.transform(X[:20]), K @ est.projection_, rtol=1e-10, atol=1e-12)


def test_leading_parameter_is_positional_like_scikit_learn():
    # PCA(n_components, *, ...) and KMeans(n_clusters, *, ...)
    from kernelsketch import NystroemKernelKMeans

    assert SubsampleKPCA(3).n_components == 3
    assert NystroemKernelKMeans(2).n_clusters == 2
    with pytest.raises(TypeError):
        SubsampleKPCA(3, 40)  # everything after the first is keyword-only


# -- the selector seam (issue 20): one selector, every fitting path --------------------------
class FarthestPointSelector:
    """A data- and kernel-dependent selector: greedy farthest points (in the kernel) among 3m candidates."""

    def __init__(self):
        self.calls = 0

    def select(self, data, n_landmarks, rng, *, kernel=None, replace=False):
        self.calls += 1
        cand = np.sort(rng.choice(data.n_rows, size=min(data.n_rows, 3 * n_landmarks), replace=False))
        C = data.gather(cand)
        K = kernel(C)
        chosen = [0]
        closest = K[0].copy()
        for _ in range(n_landmarks - 1):
            nxt = int(np.argmin(closest))
            chosen.append(nxt)
            np.maximum(closest, K[nxt], out=closest)
        return C[np.array(chosen)], cand[np.array(chosen)]


class LegacySelector(FarthestPointSelector):
    """The same selection through the seam's first version (``rows=``, indices returned)."""

    def select(self, n_rows, n_landmarks, rng, *, kernel, replace, rows):
        class Data:
            def __init__(self):
                self.n_rows = n_rows

            def gather(self, idx):
                return rows(idx)

        return super().select(Data(), n_landmarks, rng, kernel=kernel, replace=replace)[1]


class PairMeans:
    """Landmarks that are not rows: each the mean of two uniformly drawn rows."""

    def select(self, data, n_landmarks, rng, *, kernel=None, replace=False):
        idx = np.sort(rng.choice(data.n_rows, size=2 * n_landmarks, replace=False))
        R = data.gather(idx)
        return 0.5 * (R[0::2] + R[1::2]), None


@pytest.mark.parametrize("base, params", ESTIMATORS)
def test_a_custom_selector_drives_every_fitting_path(tmp_path, base, params):
    import kernelsketch as ks

    selector = FarthestPointSelector()
    cls = type(f"FarthestPoint{base.__name__}", (base,), {"landmark_selector": selector})
    X = np.random.default_rng(1).normal(size=(600, 3))
    est = cls(n_landmarks=25, bandwidth="median", random_state=3, **params)
    in_memory = est.fit(X)
    assert selector.calls == 1
    # the farthest-point landmarks are spread: not what uniform sampling draws
    assert not np.array_equal(
        in_memory.landmark_indices_, base(n_landmarks=25, random_state=3, **params).fit(X).landmark_indices_
    )
    np.save(tmp_path / "X.npy", X)
    from_file = ks.fit_source(cls(n_landmarks=25, bandwidth="median", random_state=3, **params), tmp_path / "X.npy")
    assert selector.calls == 2
    np.testing.assert_array_equal(from_file.estimator.landmark_indices_, in_memory.landmark_indices_)
    np.testing.assert_allclose(from_file.estimator.transform(X), in_memory.transform(X), rtol=1e-10, atol=1e-12)


@pytest.mark.distributed
def test_a_custom_selector_drives_the_dask_fit():
    da = pytest.importorskip("dask.array")
    from kernelsketch.distributed import fit

    selector = FarthestPointSelector()
    cls = type("FarthestPointNystroem", (Nystroem,), {"landmark_selector": selector})
    X = np.random.default_rng(2).normal(size=(500, 3))
    a = cls(n_landmarks=20, n_components=5, bandwidth="median", random_state=0).fit(X)
    b = fit(cls(n_landmarks=20, n_components=5, bandwidth="median", random_state=0), da.from_array(X, chunks=(128, 3)))
    assert selector.calls == 2
    np.testing.assert_array_equal(a.landmark_indices_, b.landmark_indices_)
    np.testing.assert_allclose(a.transform(X), b.transform(X), rtol=1e-10, atol=1e-12)


def test_a_selector_of_the_first_version_still_works_with_a_deprecation_warning():
    X = np.random.default_rng(1).normal(size=(600, 3))
    new = type("A", (Nystroem,), {"landmark_selector": FarthestPointSelector()})
    old = type("B", (Nystroem,), {"landmark_selector": LegacySelector()})
    a = new(n_landmarks=25, n_components=3, bandwidth="median", random_state=3).fit(X)
    with pytest.warns(DeprecationWarning, match="first version of the selector seam"):
        b = old(n_landmarks=25, n_components=3, bandwidth="median", random_state=3).fit(X)
    np.testing.assert_array_equal(a.landmark_indices_, b.landmark_indices_)
    np.testing.assert_array_equal(a.landmarks_, b.landmarks_)


@pytest.mark.parametrize("base, params", ESTIMATORS)
def test_landmarks_that_are_not_rows_fit_the_same_on_every_path(tmp_path, base, params):
    import kernelsketch as ks

    cls = type(f"PairMean{base.__name__}", (base,), {"landmark_selector": PairMeans()})
    X = np.random.default_rng(4).normal(size=(500, 3))
    a = cls(n_landmarks=20, bandwidth="median", random_state=1, **params).fit(X)
    assert a.landmark_indices_ is None
    # each landmark is the mean of two rows, not a row
    assert not (np.abs(X[:, None, :] - a.landmarks_[None]).sum(-1) < 1e-12).any()
    np.save(tmp_path / "X.npy", X)
    b = ks.fit_source(cls(n_landmarks=20, bandwidth="median", random_state=1, **params), tmp_path / "X.npy").estimator
    assert b.landmark_indices_ is None
    np.testing.assert_array_equal(a.landmarks_, b.landmarks_)
    np.testing.assert_allclose(a.transform(X), b.transform(X), rtol=1e-10, atol=1e-12)


def _legacy(bad):
    class Bad:
        def select(self, n_rows, n_landmarks, rng, *, kernel, replace, rows):
            return bad(n_rows, n_landmarks)

    return Bad()


def _current(bad):
    class Bad:
        def select(self, data, n_landmarks, rng, *, kernel=None, replace=False):
            return bad(data.n_rows, n_landmarks)

    return Bad()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize(
    "selector, message",
    [
        (_legacy(lambda n, m: np.arange(m - 1)), "must return"),
        (_legacy(lambda n, m: np.arange(m) + n), "must return"),
        (_legacy(lambda n, m: np.zeros(m, dtype=np.int64)), "repeated rows"),
        (_legacy(lambda n, m: np.linspace(0, n - 1, m)), "must return"),
        (_current(lambda n, m: np.arange(m)), r"must return \(landmarks, indices or None\)"),
        (_current(lambda n, m: (np.zeros((m - 1, 2)), None)), "must return 10 landmarks"),
        (_current(lambda n, m: (np.zeros(m), None)), "must return 10 landmarks"),
        (_current(lambda n, m: (np.zeros((m, 2)), np.arange(m) + n)), "row indices in"),
        (_current(lambda n, m: (np.zeros((m, 2)), np.zeros(m, dtype=np.int64))), "repeated rows"),
    ],
)
def test_a_selector_that_breaks_the_contract_is_refused(selector, message):
    cls = type("BadNystroem", (Nystroem,), {"landmark_selector": selector})
    with pytest.raises(ValueError, match=message):
        cls(n_landmarks=10).fit(np.random.default_rng(0).normal(size=(50, 2)))


def test_fit_from_landmarks_is_the_second_half_of_fit(rng):
    # fit = select + _fit_from_landmarks: given the same landmarks, the seam alone gives fit's model
    X = rng.normal(size=(200, 3))
    est = KernelJL(n_components=4, n_landmarks=30, bandwidth=1.1, random_state=5).fit(X)
    seam = KernelJL(n_components=4, n_landmarks=30, bandwidth=1.1, random_state=5)
    g = check_random_state(5)
    _, seeds = seam.draw_seeds(g)
    seam.kernel_ = est.kernel_
    seam.n_features_in_ = 3
    seam._fit_from_landmarks(X[est.landmark_indices_], est.landmark_indices_, seeds, len(X))
    np.testing.assert_array_equal(seam.projection_, est.projection_)
    np.testing.assert_array_equal(seam.transform(X), est.transform(X))
