"""Fused tiled GEMM + elementwise (+ projection) on threads, and the thread helpers under it."""

import multiprocessing
import os
import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from kernelsketch.kernels import get_kernel, pairwise_kernel, tiled_gemm
from kernelsketch.kernels.tiled_gemm import gemm_map, tile_rows
from kernelsketch.maps.landmarks import landmark_map
from kernelsketch.utils import threads

from .reference import naive_kernel


def _exp(T):
    np.exp(T, out=T)


@pytest.fixture
def small_tiles(monkeypatch):
    # 16-row tiles on a 37-column output: many tiles, a ragged last one
    monkeypatch.setattr(tiled_gemm, "tile_bytes", lambda: 16 * 37 * 8)
    monkeypatch.setattr(threads, "MIN_ELEMENTS_PER_THREAD", 64)


@pytest.mark.parametrize("n_threads", [1, 2, 3, 7])
@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 333])
def test_gemm_map_equals_direct(rng, small_tiles, n, n_threads):
    A = rng.normal(size=(n, 5)) * 0.3
    B = rng.normal(size=(5, 37)) * 0.3
    P = rng.normal(size=(37, 4))
    out = np.full((n, 37), np.nan)
    gemm_map(A, B, _exp, out=out, n_threads=n_threads)
    np.testing.assert_allclose(out, np.exp(A @ B), rtol=1e-13, atol=0)
    proj = np.full((n, 4), np.nan)
    gemm_map(A, B, _exp, project=P, project_out=proj, n_threads=n_threads)
    np.testing.assert_allclose(proj, np.exp(A @ B) @ P, rtol=1e-12, atol=1e-12)


def test_gemm_map_casts_into_other_dtypes(rng, small_tiles):
    # a float64 GEMM (float32 data too spread) writing float32 results
    A = rng.normal(size=(101, 3))
    B = rng.normal(size=(3, 37))
    out = np.empty((101, 37), dtype=np.float32)
    gemm_map(A, B, None, out=out, n_threads=2)
    np.testing.assert_allclose(out, (A @ B).astype(np.float32), rtol=1e-6)
    P = rng.normal(size=(37, 2))
    proj = np.empty((101, 2), dtype=np.float32)
    gemm_map(A, B, _exp, project=P, project_out=proj, n_threads=2)
    np.testing.assert_allclose(proj, np.exp(A @ B) @ P, rtol=2e-5)


def test_gemm_map_argument_errors(rng):
    A, B = np.ones((3, 2)), np.ones((2, 4))
    with pytest.raises(ValueError, match="exactly one"):
        gemm_map(A, B)
    with pytest.raises(ValueError, match="exactly one"):
        gemm_map(A, B, out=np.empty((3, 4)), project=np.ones((4, 1)), project_out=np.empty((3, 1)))


def test_worker_errors_propagate_and_pool_survives(rng, small_tiles):
    A = rng.normal(size=(400, 2))
    B = rng.normal(size=(2, 37))
    calls = []

    def boom(T):
        calls.append(threading.get_ident())
        if len(calls) == 5:
            raise FloatingPointError("tile failed")
        np.exp(T, out=T)

    with pytest.raises(FloatingPointError, match="tile failed"):
        gemm_map(A, B, boom, out=np.empty((400, 37)), n_threads=2)
    out = np.empty((400, 37))
    gemm_map(A, B, _exp, out=out, n_threads=2)  # the shared pool still works
    np.testing.assert_allclose(out, np.exp(A @ B), rtol=1e-13)


def test_tiles_really_run_on_several_threads(rng, small_tiles):
    A = rng.normal(size=(2000, 2))
    B = rng.normal(size=(2, 37))
    seen = set()
    barrier = threading.Barrier(2, timeout=10)

    def record(T):
        ident = threading.get_ident()
        if ident not in seen:
            seen.add(ident)
            barrier.wait()  # both workers must be alive at the same time
        np.exp(T, out=T)

    gemm_map(A, B, record, out=np.empty((2000, 37)), n_threads=2)
    assert len(seen) == 2


def test_blas_is_single_threaded_inside_tiles_and_restored(rng, small_tiles):
    A = rng.normal(size=(300, 2))
    B = rng.normal(size=(2, 37))
    inside = []
    before = threads.blas_num_threads()

    def probe(T):
        inside.append(threads.blas_num_threads())
        np.exp(T, out=T)

    gemm_map(A, B, probe, out=np.empty((300, 37)), n_threads=2)
    assert set(inside) == {1}
    assert threads.blas_num_threads() == before


def test_thread_count_follows_blas_limits():
    with threadpool_limits(1, user_api="blas"):
        assert threads.blas_num_threads() == 1
    assert 1 <= threads.blas_num_threads()


def test_concurrent_callers_get_their_own_results(rng, small_tiles):
    data = [(rng.normal(size=(250, 3)), rng.normal(size=(3, 37))) for _ in range(4)]
    results = [None] * 4

    def run(i):
        A, B = data[i]
        out = np.empty((250, 37))
        gemm_map(A, B, _exp, out=out, n_threads=2)
        results[i] = out

    ts = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=60)
    for (A, B), out in zip(data, results, strict=True):
        np.testing.assert_allclose(out, np.exp(A @ B), rtol=1e-13)


def _child_kernel_sum(queue):
    X = np.random.default_rng(1).normal(size=(3000, 4))
    queue.put(float(pairwise_kernel(X, X[:300], "gaussian", bandwidth=2.0).sum()))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork()")
def test_shared_pool_works_in_a_forked_child(small_tiles):
    X = np.random.default_rng(1).normal(size=(3000, 4))
    expected = float(pairwise_kernel(X, X[:300], "gaussian", bandwidth=2.0).sum())  # pool now exists
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_kernel_sum, args=(q,))
    p.start()
    p.join(timeout=60)
    alive = p.is_alive()
    if alive:
        p.kill()
    assert not alive, "a forked child hung on the parent's thread pool"
    assert q.get(timeout=5) == pytest.approx(expected, rel=1e-12)


def test_exp_inplace_equals_numpy(rng, small_tiles):
    a = -np.abs(rng.normal(size=(513, 40)))
    expected = np.exp(a)
    assert threads.exp_inplace(a) is a
    np.testing.assert_array_equal(a, expected)
    s = np.array(-1.0)
    threads.exp_inplace(s)
    assert s == np.exp(-1.0)


def test_tile_rows_respects_budget():
    assert tile_rows(1000, 8) * 1000 * 8 <= max(tiled_gemm.tile_bytes(), tiled_gemm.MIN_TILE_ROWS * 8000)
    assert tile_rows(10**7, 8) == tiled_gemm.MIN_TILE_ROWS


@pytest.mark.parametrize(
    "name, params",
    [
        ("gaussian", {"bandwidth": 1.5}),
        ("polynomial", {"degree": 2, "coef0": 0.5}),
        ("linear", {}),
        ("laplacian", {"bandwidth": 2.0}),  # no GEMM form: block-then-GEMM route
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_landmark_map_equals_block_times_projection(rng, small_tiles, name, params, dtype):
    X = rng.normal(size=(407, 3)).astype(dtype)
    L = rng.normal(size=(37, 3))
    P = rng.normal(size=(37, 5))
    kern = get_kernel(name, **params)
    Z = landmark_map(X, L, kern, P, offset=np.arange(5.0))
    assert Z.dtype == dtype
    expected = naive_kernel(X.astype(np.float64), L, name, **params) @ P + np.arange(5.0)
    tol = 1e-10 if dtype == np.float64 else 2e-4
    np.testing.assert_allclose(Z, expected, rtol=tol, atol=tol * np.abs(expected).max())


def test_landmark_map_tiny_bandwidth_takes_exact_route(rng, small_tiles):
    # Far from the origin with h tiny against the spread: the GEMM route's
    # cancellation would be huge, each chunk must fall back to cdist.
    X = 1e4 + rng.normal(size=(300, 2))
    L = X[:37] + 1e-9
    P = rng.normal(size=(37, 3))
    kern = get_kernel("gaussian", bandwidth=1e-3)
    Z = landmark_map(X, L, kern, P)
    expected = naive_kernel(X, L, "gaussian", bandwidth=1e-3) @ P
    np.testing.assert_allclose(Z, expected, rtol=1e-9, atol=1e-9)


def test_overlapping_pins_from_threads_restore_the_original_limit():
    # T1 pins, T2 pins, T1 leaves, T2 leaves: a naive save/restore per
    # context would leave BLAS pinned to 1 thread forever.  (BLAS raised to 2 threads first: ./dev runs the
    # suite's workers with one.)
    with threadpool_limits(2, user_api="blas"):
        if threads.blas_num_threads() < 2:
            pytest.skip("needs a BLAS that can run >= 2 threads to tell pinned from unpinned")
        _overlapping_pins()


def _overlapping_pins():
    original = threads.blas_num_threads()
    t1_in, t2_in, t1_out = threading.Event(), threading.Event(), threading.Event()

    def t1():
        with threads.single_threaded_blas():
            t1_in.set()
            t2_in.wait(10)
        t1_out.set()

    def t2():
        t1_in.wait(10)
        with threads.single_threaded_blas():
            t2_in.set()
            t1_out.wait(10)
            assert threads.blas_num_threads() == 1  # still pinned: T2 is inside

    a, b = threading.Thread(target=t1), threading.Thread(target=t2)
    a.start(), b.start()
    a.join(20), b.join(20)
    assert threads.blas_num_threads() == original


def test_a_busy_pool_does_not_block_the_caller(rng, small_tiles):
    # Another caller's work occupies the shared pool: our queued copy is
    # cancelled and the calling thread does every tile itself.
    pool = threads.shared_executor(1)
    release = threading.Event()
    blockers = [pool.submit(release.wait, 30) for _ in range(pool._max_workers)]
    try:
        A = rng.normal(size=(500, 3))
        B = rng.normal(size=(3, 37))
        done = []

        def call():
            out = np.empty((500, 37))
            gemm_map(A, B, _exp, out=out, n_threads=2)
            a = -np.abs(rng.normal(size=(600, 40)))
            expected = np.exp(a)
            threads.parallel_rows(lambda p: np.exp(p, out=p), a, n_threads=2)
            done.append((out, a, expected))

        t = threading.Thread(target=call)
        t.start()
        t.join(10)
        assert not t.is_alive(), "the caller waited on a pool busy with someone else's work"
        out, a, expected = done[0]
        np.testing.assert_allclose(out, np.exp(A @ B), rtol=1e-13)
        np.testing.assert_array_equal(a, expected)
    finally:
        release.set()
        for b in blockers:
            b.result(timeout=30)


def test_no_new_tiles_start_after_a_failure(rng, monkeypatch):
    monkeypatch.setattr(tiled_gemm, "tile_bytes", lambda: 16 * 37 * 8)  # 16-row tiles: 1,000 of them
    A = rng.normal(size=(16_000, 2))
    B = rng.normal(size=(2, 37))
    calls = []

    def fail_first(T):
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt  # e.g. Ctrl-C on the calling thread
        np.exp(T, out=T)

    with pytest.raises(KeyboardInterrupt):
        gemm_map(A, B, fail_first, out=np.empty((16_000, 37)), n_threads=2)
    assert len(calls) < 1000  # the other thread stopped claiming tiles


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 usable cores")
@pytest.mark.parametrize("name, params", [("laplacian", {"bandwidth": 2.0}), ("cauchy", {"bandwidth": 1.5})])
def test_kernels_without_gemm_form_split_rows_over_threads(rng, small_tiles, name, params):
    X = rng.normal(size=(301, 3))
    L = rng.normal(size=(37, 3))
    seen = set()
    kern = get_kernel(name, **params)
    original = type(kern).compute
    barrier = threading.Barrier(2, timeout=10)

    class Spy(type(kern)):
        def compute(self, Xc, prepared, out):
            ident = threading.get_ident()
            if ident not in seen:
                seen.add(ident)
                if self.parallel_compute:
                    barrier.wait()  # two threads must be computing at the same time
            return original(self, Xc, prepared, out)

    spy = Spy(**params)
    with threadpool_limits(2, user_api="blas"):
        K = pairwise_kernel(X, L, kernel=spy)
    np.testing.assert_allclose(K, naive_kernel(X, L, name, **params), rtol=1e-12, atol=1e-14)
    assert len(seen) == 2
    # a kernel that is not safe to run concurrently opts out
    seen.clear()
    spy.parallel_compute = False
    np.testing.assert_array_equal(pairwise_kernel(X, L, kernel=spy), K)
    assert seen == {threading.get_ident()}


def test_blas_limited_to_one_thread_means_tiles_on_the_caller_only(rng, small_tiles):
    A = rng.normal(size=(500, 2))
    B = rng.normal(size=(2, 37))
    seen = set()

    def record(T):
        seen.add(threading.get_ident())
        np.exp(T, out=T)

    out = np.empty((500, 37))
    with threadpool_limits(1, user_api="blas"):
        gemm_map(A, B, record, out=out)
    assert seen == {threading.get_ident()}
    np.testing.assert_allclose(out, np.exp(A @ B), rtol=1e-13)


def test_the_tile_size_is_configuration_and_does_not_change_results(rng):
    import kernelsketch as ks

    X, L = rng.normal(size=(3000, 5)), rng.normal(size=(300, 5))
    default = ks.pairwise_kernel(X, L, "gaussian", bandwidth=2.0)
    with ks.config_context(tile_kib=8):
        assert tile_rows(300, 8) == max(tiled_gemm.MIN_TILE_ROWS, 8 * 1024 // 2400)
        small = ks.pairwise_kernel(X, L, "gaussian", bandwidth=2.0)
    np.testing.assert_allclose(small, default, rtol=1e-12, atol=0)
    assert ks.get_config()["tile_kib"] == 1024
    with pytest.raises(ValueError, match="tile_kib"):
        ks.set_config(tile_kib=0)
    with pytest.raises(ValueError, match="cache_block_mib"):
        ks.set_config(cache_block_mib=-1.0)
