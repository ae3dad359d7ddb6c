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
