"""A property-based fuzzer over every estimator's fit / partial_fit / merge / transform.

Blocks of mixed dtypes across calls (float16/32/64, ints, bools), extreme
magnitudes, subnormals, duplicate rows, single rows and columns.  Every call
either returns a finite result or raises a ValueError/TypeError with a
message; nothing hangs (each example has a deadline, the test a timeout) and
no numpy overflow / invalid-value warning is emitted on the way to a result
(warnings of that kind are turned into errors here).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kernelsketch as ks
from kernelsketch.cluster import StreamingKMeans

DTYPES = [np.float16, np.float32, np.float64, np.int32, np.int64, np.bool_]

# small sizes: every estimator must cope with blocks of 1..12 rows
FIT = {
    "kpca": lambda: ks.KernelPCA(2, bandwidth="median"),
    "subsample-kpca": lambda: ks.SubsampleKPCA(2, n_landmarks=3, random_state=0),
    "kjl": lambda: ks.KernelJL(n_components=3, n_landmarks=3, random_state=0),
    "nystroem": lambda: ks.Nystroem(n_landmarks=3, random_state=0),
    "nkkm": lambda: ks.NystroemKernelKMeans(2, n_landmarks=3, n_init=1, random_state=0),
    "rff": lambda: ks.RandomFourierFeatures(8, random_state=0),
    "kmeans": lambda: StreamingKMeans(2, random_state=0),
}
STREAM = {
    "fd": lambda: ks.FrequentDirections(sketch_size=3),
    "rnca": lambda: ks.RNCA(2, n_random_features=8, bandwidth=1.5, random_state=0),
    "rfkpca": lambda: ks.RFKPCA(2, n_random_features=8, bandwidth=1.5, random_state=0),
    "skpca": lambda: ks.StreamingKPCA(2, n_random_features=8, sketch_size=3, bandwidth=1.5, random_state=0),
    "nystroem-stream": lambda: ks.Nystroem(n_landmarks=3, bandwidth=1.5, random_state=0),
    "kmeans-stream": lambda: StreamingKMeans(2, random_state=0),
}
MERGEABLE = ("fd", "rnca", "rfkpca", "skpca")


@st.composite
def blocks(draw, max_blocks=3):
    d = draw(st.integers(1, 4))
    out = []
    for _ in range(draw(st.integers(1, max_blocks))):
        n = draw(st.integers(1, 12))
        kind = draw(st.sampled_from(["normal", "huge", "tiny", "subnormal", "duplicates", "mixed"]))
        rng = np.random.default_rng(draw(st.integers(0, 2**16)))
        X = rng.normal(size=(n, d))
        if kind == "huge":
            X *= 10.0 ** draw(st.integers(30, 300))
        elif kind == "tiny":
            X *= 10.0 ** -draw(st.integers(30, 300))
        elif kind == "subnormal":
            X *= 1e-310
        elif kind == "duplicates":
            X[:] = X[0]
        elif kind == "mixed":
            X[rng.random(size=X.shape) < 0.3] *= 1e200
        dtype = draw(st.sampled_from(DTYPES))
        with np.errstate(all="ignore"):
            X = (X > 0) if dtype is np.bool_ else X.astype(dtype)
        out.append(X)
    return out


def _call(fn):
    """Run ``fn``; a result must be finite, an error must be a ValueError/TypeError with a message."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*(overflow|invalid value|divide by zero).*", category=RuntimeWarning)
        try:
            out = fn()
        except (ValueError, TypeError) as exc:
            assert str(exc), f"{type(exc).__name__} without a message"
            return None
    if isinstance(out, np.ndarray) and out.dtype.kind == "f":
        assert np.all(np.isfinite(out)), "non-finite output"
    return out


FUZZ = settings(
    max_examples=25,
    deadline=10_000,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.timeout(300)
@pytest.mark.filterwarnings("ignore:.*requested eigenvalues.*:RuntimeWarning")  # duplicates: documented drop
@pytest.mark.parametrize("name", sorted(FIT))
@FUZZ
@given(data=blocks())
def test_fit_then_transform(name, data):
    est = FIT[name]()
    if _call(lambda: est.fit(data[0])) is None:
        return
    for X in data[1:] + data[:1]:
        _call(lambda X=X: est.transform(X) if hasattr(est, "transform") else est.predict(X))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(STREAM))
@FUZZ
@given(data=blocks(max_blocks=4))
def test_partial_fit_stream_then_transform(name, data):
    est = STREAM[name]()
    fed = False
    for X in data:
        fed = _call(lambda X=X: est.partial_fit(X)) is not None or fed
    if fed:
        for X in data:
            _call(lambda X=X: est.transform(X))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", MERGEABLE)
@FUZZ
@given(a=blocks(max_blocks=2), b=blocks(max_blocks=2))
def test_merge(name, a, b):
    left, right = STREAM[name](), STREAM[name]()
    okl = all(_call(lambda X=X: left.partial_fit(X)) is not None for X in a)
    okr = all(_call(lambda X=X: right.partial_fit(X)) is not None for X in b)
    if okl and okr and _call(lambda: left.merge(right)) is not None:
        for X in a + b:
            _call(lambda X=X: left.transform(X))
