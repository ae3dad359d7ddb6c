"""Regressions from the hostile-input sweep (issue: a hang on a finite input, float32 accuracy, BOMs, ...)."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from scipy.spatial.distance import cdist

import kernelsketch as ks
from kernelsketch.io import read_matrix

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"}

STREAMS = {
    "fd": lambda: ks.FrequentDirections(sketch_size=4),
    "nystroem": lambda: ks.Nystroem(n_landmarks=40, bandwidth=1.0, random_state=0),
    "skpca": lambda: ks.StreamingKPCA(2, n_random_features=16, sketch_size=4, bandwidth=1.0, random_state=0),
    "rnca": lambda: ks.RNCA(2, n_random_features=16, bandwidth=1.0, random_state=0),
    "rfkpca": lambda: ks.RFKPCA(2, n_random_features=16, bandwidth=1.0, random_state=0),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", sorted(STREAMS))
def test_a_value_beyond_the_streams_dtype_never_enters_it(name):
    # the reported hang: a float32 stream, then a finite float64 row above float32's range
    est = STREAMS[name]()
    est.partial_fit(np.random.default_rng(0).normal(size=(30, 4)).astype(np.float32))
    try:
        est.partial_fit(np.array([[1e39, 0.0, 0.0, 0.0]]))
    except ValueError as exc:
        assert "beyond the range of float32" in str(exc)
    Z = est.transform(np.zeros((2, 4)))  # never hangs, never NaN
    assert np.all(np.isfinite(Z))


@pytest.mark.timeout(60)
def test_the_reported_frequent_directions_hang_is_a_clear_error():
    fd = ks.FrequentDirections(sketch_size=4)
    fd.partial_fit(np.random.default_rng(0).normal(size=(30, 4)).astype(np.float32))
    with pytest.raises(ValueError, match=r"magnitude 1e\+39, beyond the range of float32"):
        fd.partial_fit(np.array([[1e39, 0.0, 0.0, 0.0]]))
    assert fd.n_samples_seen_ == 30
    assert np.all(np.isfinite(fd.transform(np.zeros((2, 4)))))


def test_no_lapack_call_sees_a_non_finite_matrix():
    from kernelsketch.sketches.frequent_directions import _shrink_rows
    from kernelsketch.utils.eigen import top_eigenpairs

    B = np.ones((6, 3))
    B[2, 1] = np.inf
    with pytest.raises(ValueError, match="non-finite"):
        _shrink_rows(B, 2, False)
    A = np.eye(4)
    A[0, 1] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        top_eigenpairs(A, 2, "dense", np.random.default_rng(0))


@pytest.mark.parametrize(
    "offset, scale, h",
    [
        (0.0, 5000.0, 20.0),  # the reported case: uniform(0, 5000), h = 20
        (1e4, 1.0, 0.5),
        (1e5, 10.0, 5.0),
        (-3e4, 100.0, 50.0),
        (0.0, 1e3, 30.0),
        (250.0, 1.0, 0.05),
    ],
)
def test_float32_gaussian_blocks_accurate_with_offsets_and_scales(offset, scale, h):
    rng = np.random.default_rng(0)
    X = (offset + scale * rng.uniform(size=(1200, 2))).astype(np.float32)
    K = ks.pairwise_kernel(X, X[:300], kernel="gaussian", bandwidth=h)
    X64 = X.astype(np.float64)  # the reference: the same float32 inputs, in float64
    ref = np.exp(-cdist(X64, X64[:300], "sqeuclidean") / h**2)
    assert K.dtype == np.float32
    # the documented guarantee: 2e-6 (the float32 GEMM route's bound), plus float32 rounding of the output
    assert np.abs(K - ref).max() <= 2e-6


def test_utf8_bom_and_missing_marker_in_the_first_row(tmp_path):
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf1,2,3\n4,5,6\n7,8,9\n1,1,1\n2,2,2\n")
    X, _ = read_matrix(tmp_path / "bom.csv")
    assert X.shape == (5, 3) and X[0].tolist() == [1, 2, 3]
    (tmp_path / "bomh.csv").write_bytes(b"\xef\xbb\xbfa,b,c\n1,2,3\n4,5,6\n")
    assert ks.io.open_matrix(tmp_path / "bomh.csv").feature_names == ["a", "b", "c"]
    with gzip.open(tmp_path / "bom.csv.gz", "wb") as f:
        f.write(b"\xef\xbb\xbf1,2\n3,4\n")
    assert read_matrix(tmp_path / "bom.csv.gz")[0].tolist() == [[1, 2], [3, 4]]
    (tmp_path / "na.csv").write_text("NA,2,3\n1,2,3\n4,5,6\n")
    with pytest.raises(ValueError, match="line 1, column 1: non-numeric value 'NA'"):
        read_matrix(tmp_path / "na.csv")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "kernelsketch.cli",
            "embed",
            str(tmp_path / "bom.csv"),
            "-o",
            str(tmp_path / "e.npy"),
            "--method",
            "rff",
            "-d",
            "4",
            "--bandwidth",
            "1",
        ],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert np.load(tmp_path / "e.npy").shape == (5, 4)


def test_a_gigantic_line_is_refused_without_reading_it(tmp_path):
    from kernelsketch.io.delimited import MAX_LINE_CHARS

    with gzip.open(tmp_path / "long.csv.gz", "wt") as f:
        f.write("1," * (MAX_LINE_CHARS // 2 + 10) + "1\n2,3\n")
    assert (tmp_path / "long.csv.gz").stat().st_size < 100_000
    with pytest.raises(ValueError, match="line 1 is longer than"):
        read_matrix(tmp_path / "long.csv.gz")


@pytest.mark.parametrize(
    "make",
    [
        lambda L: ks.KernelPCA(3, bandwidth=2.0),
        lambda L: ks.Nystroem(landmarks=L, bandwidth=2.0),
        lambda L: ks.KernelJL(n_components=3, landmarks=L, bandwidth=2.0, random_state=0),
        lambda L: ks.SubsampleKPCA(3, landmarks=L, bandwidth=2.0),
        lambda L: ks.Nystroem(n_landmarks=100, bandwidth=2.0, random_state=0),
    ],
)
def test_fitted_state_does_not_alias_the_callers_arrays(make):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    L = X[:30]
    est = make(L).fit(X)
    Xt = rng.normal(size=(5, 3))
    before = est.transform(Xt)
    X[:] = 0.0  # the caller reuses its buffer (L is a view of it)
    np.testing.assert_array_equal(est.transform(Xt), before)


@pytest.mark.parametrize("h", [1e-200, 1e200, 1e-160])
def test_bandwidths_whose_inverse_square_leaves_float64_are_refused(h):
    X = np.random.default_rng(0).normal(size=(50, 2))
    with pytest.raises(ValueError, match="out of range: 1/h\\^2"):
        ks.KernelJL(n_components=2, bandwidth=h).fit(X)
    with pytest.raises(ValueError, match="out of range"):
        ks.RandomFourierFeatures(8, bandwidth=h).fit(X)


def test_working_memory_must_be_finite():
    with pytest.raises(ValueError, match="finite"):
        ks.set_config(working_memory=float("inf"))
    with pytest.raises(ValueError, match="finite"):
        with ks.config_context(working_memory=float("nan")):
            pass


def test_first_access_from_many_threads_at_once():
    # a fresh interpreter: every lazily imported name is first touched by several threads at the same time
    script = textwrap.dedent("""
        import threading, kernelsketch as ks
        names = [n for n in ks.__all__ if not n.startswith("_")] * 3
        errors, barrier = [], threading.Barrier(len(names))
        def get(n):
            barrier.wait()
            try:
                getattr(ks, n)
            except Exception as exc:
                errors.append(f"{n}: {exc!r}")
        threads = [threading.Thread(target=get, args=(n,)) for n in names]
        [t.start() for t in threads]; [t.join() for t in threads]
        print(errors)
    """)
    for _ in range(3):
        r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=ENV, timeout=120)
        assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr


@pytest.mark.slow
def test_sighup_removes_the_temporary_output(tmp_path):
    X = np.random.default_rng(0).normal(size=(400_000, 4))
    np.save(tmp_path / "X.npy", X)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kernelsketch.cli",
            "embed",
            str(tmp_path / "X.npy"),
            "-o",
            str(tmp_path / "Z.npy"),
            "--method",
            "kjl",
            "-d",
            "50",
            "-n",
            "3000",
            "-q",
        ],
        env=ENV,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 120
    while time.time() < deadline and not any(p.name.endswith(".part") for p in tmp_path.iterdir()):
        time.sleep(0.05)
    assert proc.poll() is None
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGHUP and "interrupted" in err  # (129: 128 + the signal, as a shell says)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["X.npy"]


# -- degenerate eigenspaces: a basis fixed by the subspace, not by the solver ------------------------


def _polygon_data():
    """Three concentric regular 16-gons: a block-circulant Gram whose top eigenvalue is double."""
    t = np.arange(16) * 2 * np.pi / 16
    return np.concatenate([np.c_[r * np.cos(t), r * np.sin(t)] for r in (1.0, 2.0, 3.0)])


def test_canonical_basis_ignores_rotations_within_an_eigenspace():
    from kernelsketch.utils.eigen import canonical_eigenvectors

    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.normal(size=(30, 6)))
    w = np.array([5.0, 5.0, 5.0, 2.0, 1.0, 1.0])
    ref = canonical_eigenvectors(w, Q.copy())
    np.testing.assert_allclose(ref.T @ ref, np.eye(6), atol=1e-12)
    # the same eigenspaces (projectors) as before
    for a, b in ((0, 3), (3, 4), (4, 6)):
        np.testing.assert_allclose(ref[:, a:b] @ ref[:, a:b].T, Q[:, a:b] @ Q[:, a:b].T, atol=1e-12)
    for seed in range(5):
        R3, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(3, 3)))
        R2, _ = np.linalg.qr(np.random.default_rng(seed + 10).normal(size=(2, 2)))
        V = Q.copy()
        V[:, 0:3] = V[:, 0:3] @ R3
        V[:, 3] *= -1
        V[:, 4:6] = V[:, 4:6] @ R2
        np.testing.assert_allclose(canonical_eigenvectors(w, V), ref, atol=1e-12)


def test_degenerate_kernel_pca_components_agree_across_solvers():
    X = _polygon_data()
    Y = np.random.default_rng(1).normal(size=(20, 2))
    outs = []
    for solver in ("dense", "arpack", "randomized"):
        est = ks.KernelPCA(n_components=3, bandwidth=1.5, eigen_solver=solver, random_state=0).fit(X)
        assert abs(est.eigenvalues_[0] - est.eigenvalues_[1]) < 1e-9 * est.eigenvalues_[0]
        outs.append(est.transform(Y))
    for other in outs[1:]:
        np.testing.assert_allclose(other, outs[0], atol=1e-7)


# -- an N x N matrix that cannot fit: refused before allocating, in the library's words -----------


def test_kernel_pca_refuses_a_gram_larger_than_the_machine_before_allocating():
    X = np.random.default_rng(0).normal(size=(200_000, 2))
    with pytest.raises(MemoryError, match=r"200000 x 200000 Gram matrix and needs 298.0 GiB.*eigen_solver='operator'"):
        ks.KernelPCA(n_components=2, eigen_solver="dense", bandwidth=1.0).fit(X)
    with pytest.raises(MemoryError, match=r"200000 x 200000 kernel matrix needs 298.0 GiB.*kernel_blocks"):
        ks.kernels.pairwise_kernel(X, bandwidth=1.0)


def test_allocation_check_follows_the_machines_memory(monkeypatch):
    from kernelsketch.utils import chunking

    X = np.random.default_rng(0).normal(size=(600, 2))
    monkeypatch.setattr(chunking, "physical_memory_bytes", lambda: 1_000_000)  # a 1 MB machine
    with pytest.raises(MemoryError, match="600 x 600 Gram matrix"):
        ks.KernelPCA(n_components=2, eigen_solver="arpack", bandwidth=1.0).fit(X)
    # the operator solver never forms the Gram: it runs
    Z = ks.KernelPCA(n_components=2, eigen_solver="operator", bandwidth=1.0, random_state=0).fit_transform(X)
    assert Z.shape == (600, 2)
    monkeypatch.setattr(chunking, "physical_memory_bytes", lambda: None)  # an OS that does not say: no check
    assert ks.KernelPCA(n_components=2, eigen_solver="dense", bandwidth=1.0).fit(X).eigenvalues_.shape == (2,)
