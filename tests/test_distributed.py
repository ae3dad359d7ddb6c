"""kernelsketch.distributed on dask arrays and a real 2-process LocalCluster.

One module-scoped cluster (2 worker processes, 1 thread each, loopback,
dashboard on a free port) is started and stopped here; while it is up it is dask's default
scheduler, so every ``.compute()`` below runs on the worker processes.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import threading
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from kernelsketch.cluster import NystroemKernelKMeans  # noqa: E402
from kernelsketch.decomposition import RFKPCA, RNCA, KernelPCA, StreamingKPCA, SubsampleKPCA  # noqa: E402
from kernelsketch.distributed import (  # noqa: E402
    fit,
    gather_rows,
    maybe_dask_transform,
    read_shards,
    transform,
    tree_reduce,
)
from kernelsketch.maps import KernelJL, Nystroem, RandomFourierFeatures  # noqa: E402
from kernelsketch.sketches import FrequentDirections  # noqa: E402

pytestmark = pytest.mark.distributed


@pytest.fixture(scope="module")
def client():
    import cloudpickle
    import dask

    # helpers defined in this module run on the workers: ship them by value
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with (
        # without the active memory manager: its ReduceReplicas policy drops broadcast copies every 2 s
        # (dask/distributed#8657), and a test here checks where the broadcast state is
        dask.config.set({"distributed.scheduler.active-memory-manager.start": False}),
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
            memory_limit="2GiB",
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def _data(n=600, d=4, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 3, (3, d))
    return (centers[rng.integers(0, 3, n)] + rng.normal(0, 0.5, (n, d))).astype(dtype)


def _fitted(name, X):
    params = dict(random_state=0)
    est = {
        "nystroem": lambda: Nystroem(n_landmarks=40, n_components=10, bandwidth=3.0, **params),
        "kjl": lambda: KernelJL(n_components=8, n_landmarks=50, bandwidth=3.0, **params),
        "subsample-kpca": lambda: SubsampleKPCA(n_components=5, n_landmarks=50, bandwidth=3.0, **params),
        "rff": lambda: RandomFourierFeatures(64, bandwidth=3.0, **params),
        "rf-kpca": lambda: RFKPCA(4, n_random_features=64, bandwidth=3.0, **params),
        "rnca": lambda: RNCA(4, n_random_features=64, bandwidth=3.0, **params),
        "skpca": lambda: StreamingKPCA(4, n_random_features=64, sketch_size=8, bandwidth=3.0, **params),
        "fd": lambda: FrequentDirections(sketch_size=3),
        "kpca": lambda: KernelPCA(n_components=4, bandwidth=3.0),
        "nkkm": lambda: NystroemKernelKMeans(n_clusters=3, n_landmarks=40, n_init=2, bandwidth=3.0, **params),
    }[name]()
    return est.fit(X)


ALL = ["nystroem", "kjl", "subsample-kpca", "rff", "rf-kpca", "rnca", "skpca", "fd", "kpca", "nkkm"]


# -- transform: identical to the in-memory map ---------------------------------
@pytest.mark.parametrize("name", ALL)
def test_transform_on_cluster_equals_in_memory(client, name):
    X = _data()
    est = _fitted(name, X[:300])
    Xd = da.from_array(X, chunks=(130, 4))  # uneven last chunk
    Z = transform(est, Xd)
    assert Z.chunks[0] == Xd.chunks[0]
    np.testing.assert_allclose(Z.compute(), est.transform(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["nystroem", "kjl", "rff", "fd"])
def test_transform_keeps_float32(client, name):
    X = _data(dtype=np.float32)
    est = _fitted(name, X)
    Z = transform(est, da.from_array(X, chunks=(200, 4)))
    assert Z.dtype == np.float32
    out = Z.compute()
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, est.transform(X), rtol=1e-5, atol=1e-5)


def test_fitted_state_is_one_key_in_the_graph():
    """The estimator is one graph key that all chunk tasks share, not a copy per chunk."""
    X = _data(n=2000, d=20)
    est = Nystroem(n_landmarks=400, n_components=200, bandwidth=5.0, random_state=0).fit(X)
    n_chunks = 40
    Xd = da.ones((4000, 20), chunks=(100, 20))
    Z = transform(est, Xd)
    graph = dict(Z.__dask_graph__())
    state = len(pickle.dumps(est))
    holders = [k for k, v in graph.items() if "fitted" in str(k)]
    assert len(holders) == 1
    # 40 input tasks + 40 map tasks + the estimator
    assert len(graph) == 2 * n_chunks + 1
    transform_tasks = [k for k in graph if isinstance(k, tuple) and k[0] == Z.name]
    assert len(transform_tasks) == n_chunks
    for k in transform_tasks:
        assert holders[0] in graph[k].dependencies
    # the whole graph weighs one copy of the state plus a little per task
    size = len(pickle.dumps(graph))
    assert state > 1_000_000
    assert size < state + 2000 * 2 * n_chunks, (size, state)


def test_scattered_state_reaches_both_workers_once(client):
    X = _data()
    est = _fitted("nystroem", X)
    Z = transform(est, da.ones((600, 4), chunks=(100, 4)), client=client)
    graph = dict(Z.__dask_graph__())
    assert len(pickle.dumps(graph)) < len(pickle.dumps(est))  # a future, not the state
    futures = {
        d for k in graph if isinstance(k, tuple) and k[0] == Z.name for d in graph[k].dependencies if "fitted" in str(d)
    }
    assert len(futures) == 1
    futures = list(futures)
    assert len(client.who_has()[futures[0]]) == 2
    np.testing.assert_allclose(Z.compute(), est.transform(np.ones((600, 4))), rtol=1e-12, atol=1e-12)
    Z = transform(est, da.from_array(X, chunks=(100, 4)), client=client)
    np.testing.assert_allclose(Z.compute(), est.transform(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ALL)
def test_estimator_transform_accepts_a_dask_array(client, name):
    """est.transform(dask_array) itself returns a dask array, equal to the in-memory map."""
    X = _data()
    est = _fitted(name, X[:300])
    Z = est.transform(da.from_array(X, chunks=(130, 4)))
    assert isinstance(Z, da.Array)
    np.testing.assert_allclose(Z.compute(), est.transform(X), rtol=1e-12, atol=1e-12)
    if name == "nkkm":
        labels = est.predict(da.from_array(X, chunks=(130, 4)))
        assert isinstance(labels, da.Array)
        np.testing.assert_array_equal(labels.compute(), est.predict(X))


def test_maybe_dask_transform_hook(client):
    X = _data()
    est = _fitted("rff", X)
    assert maybe_dask_transform(est, X) is None
    Z = maybe_dask_transform(est, da.from_array(X, chunks=(250, 4)))
    assert isinstance(Z, da.Array)
    np.testing.assert_allclose(Z.compute(), est.transform(X), rtol=1e-12, atol=1e-12)
    labels = maybe_dask_transform(_fitted("nkkm", X), da.from_array(X, chunks=(250, 4)), method="predict")
    assert labels.ndim == 1 and labels.compute().shape == (600,)


def test_transform_errors_are_raised_on_the_client():
    X = _data()
    with pytest.raises(ValueError, match="features"):
        transform(_fitted("nystroem", X), da.zeros((10, 3), chunks=5))
    with pytest.raises(TypeError, match="dask array"):
        transform(_fitted("nystroem", X), X)
    with pytest.raises(ValueError, match="2-D"):
        transform(_fitted("nystroem", X), da.zeros(10, chunks=5))


# -- fit: the same results as in memory ---------------------------------------------
@pytest.mark.parametrize("bandwidth", [3.0, "percentile"])
@pytest.mark.parametrize("cls", [Nystroem, SubsampleKPCA])
def test_landmark_fit_identical_to_in_memory(client, cls, bandwidth):
    X = _data(n=700)
    kw = dict(n_components=6, n_landmarks=60, bandwidth=bandwidth, random_state=3)
    ref = cls(**kw).fit(X)
    est = fit(cls(**kw), da.from_array(X, chunks=(150, 4)))
    assert est.get_params()["bandwidth"] == bandwidth and est.landmarks is None
    assert est.kernel_ == ref.kernel_
    np.testing.assert_array_equal(est.landmark_indices_, ref.landmark_indices_)
    np.testing.assert_array_equal(est.landmarks_, ref.landmarks_)
    np.testing.assert_array_equal(est.projection_, ref.projection_)
    np.testing.assert_array_equal(est.transform(X), ref.transform(X))


def test_kernel_jl_fit_identical_to_in_memory(client):
    X = _data(n=700)
    kw = dict(n_components=8, n_landmarks=60, bandwidth="median", random_state=5)
    ref = KernelJL(**kw).fit(X)
    est = fit(KernelJL(**kw), da.from_array(X, chunks=(150, 4)))
    np.testing.assert_array_equal(est.landmark_indices_, ref.landmark_indices_)
    assert est.kernel_ == ref.kernel_
    # the projection is the KernelJL sketch of those landmarks: scale_ * V_hat, V_hat = K_c Z^T / (n sqrt(n d))
    n, d = 60, 8
    from kernelsketch.kernels import pairwise_kernel

    G = pairwise_kernel(est.landmarks_, kernel=est.kernel_)
    H = np.eye(n) - 1.0 / n
    P = H @ G @ H @ est.random_matrix_.T / (n * np.sqrt(n * d))
    np.testing.assert_allclose(est.projection_, est.scale_ * (P - P.mean(axis=0)), atol=1e-12 * est.scale_)
    assert est.scale_ == ref.scale_
    # and the Gaussian matrix has its own seed stream: the whole fit is identical
    np.testing.assert_array_equal(est.random_matrix_, ref.random_matrix_)
    np.testing.assert_array_equal(est.transform(X), ref.transform(X))


def test_kernel_kmeans_fit_identical_to_in_memory(client):
    X = _data(n=500)
    kw = dict(n_clusters=3, n_landmarks=40, n_init=2, bandwidth="percentile", random_state=1)
    ref = NystroemKernelKMeans(**kw).fit(X)
    est = fit(NystroemKernelKMeans(**kw), da.from_array(X, chunks=(120, 4)))
    np.testing.assert_array_equal(est.nystroem_.landmarks_, ref.nystroem_.landmarks_)
    np.testing.assert_array_equal(est.cluster_centers_, ref.cluster_centers_)
    assert isinstance(est.labels_, da.Array)
    np.testing.assert_array_equal(est.labels_.compute(), ref.labels_)


def test_random_fourier_features_fit_identical(client):
    X = _data(n=400)
    kw = dict(n_random_features=32, bandwidth="median", random_state=2)
    ref = RandomFourierFeatures(**kw).fit(X)
    est = fit(RandomFourierFeatures(**kw), da.from_array(X, chunks=(100, 4)))
    assert est.kernel_ == ref.kernel_
    np.testing.assert_array_equal(est.random_weights_, ref.random_weights_)


@pytest.mark.parametrize("cls", [RNCA, RFKPCA])
@pytest.mark.parametrize("chunks", [(100, 4), (37, 4), (700, 4)])
def test_scatter_tree_reduction_equals_one_pass(client, chunks, cls):
    X = _data(n=700)
    kw = dict(n_components=4, n_random_features=48, bandwidth="percentile", random_state=4)
    ref = cls(**kw).fit(X)
    est = fit(cls(**kw), da.from_array(X, chunks=chunks), split_every=3)
    assert est.n_samples_seen_ == 700 and est.get_params() == cls(**kw).get_params()
    np.testing.assert_allclose(est.mean_, ref.mean_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(est.explained_variance_, ref.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(est.transform(X), ref.transform(X), rtol=1e-8, atol=1e-10)


def _fd_bound_check(est, A, k):
    B = est.get_sketch()
    E = A.T @ A - B.T @ B
    w = np.linalg.eigvalsh(E)
    tol = 1e-9 * np.linalg.norm(A, "fro") ** 2
    assert w.min() >= -tol  # B^T B never over-estimates
    assert w.max() <= est.error_bound_ + tol
    s = np.linalg.svd(A, compute_uv=False)
    assert est.error_bound_ <= np.sum(s[k:] ** 2) / (est.sketch_size - k) + tol
    return B


@pytest.mark.parametrize("seed", range(3))
def test_frequent_directions_merged_sketch_keeps_the_guarantee(client, seed):
    rng = np.random.default_rng(seed)
    A = (rng.standard_normal((900, 6)) * [5, 3, 2, 1, 1, 1]) @ rng.standard_normal((6, 30))
    A += 0.1 * rng.standard_normal(A.shape)
    ref = FrequentDirections(sketch_size=8).fit(A)
    est = fit(FrequentDirections(sketch_size=8), da.from_array(A, chunks=(70, 30)), split_every=4)
    assert est.n_samples_seen_ == 900
    np.testing.assert_allclose(est.squared_frobenius_, np.sum(A * A), rtol=1e-10)
    for k in (0, 2, 5):
        B = _fd_bound_check(est, A, k)
    B_ref = ref.get_sketch()
    # both sketches are below A^T A by at most their bounds, so they are that close to each other
    gap = np.linalg.norm(B.T @ B - B_ref.T @ B_ref, 2)
    assert gap <= max(est.error_bound_, ref.error_bound_) * (1 + 1e-9)


def test_streaming_kpca_merged_sketch_within_guarantee(client):
    X = _data(n=800)
    kw = dict(n_components=4, n_random_features=64, sketch_size=10, bandwidth="percentile", random_state=6)
    ref = StreamingKPCA(**kw).fit(X)
    est = fit(StreamingKPCA(**kw), da.from_array(X, chunks=(90, 4)), split_every=2)
    assert est.kernel_ == ref.kernel_ and est.n_samples_seen_ == 800
    Z = ref.feature_map_.transform(X)
    np.testing.assert_array_equal(est.feature_map_.transform(X), Z)  # same random features
    B = est.sketch_.get_sketch()
    gap = np.linalg.eigvalsh(Z.T @ Z - B.T @ B)
    assert gap.min() >= -1e-9 and gap.max() <= est.error_bound_ + 1e-9
    assert est.error_bound_ <= np.sum(Z * Z) / 10 + 1e-9


@pytest.mark.parametrize("heuristic", ["median", "percentile", "mean_sq"])
@pytest.mark.parametrize(
    "make",
    [
        lambda h: Nystroem(n_landmarks=30, bandwidth=h, random_state=0),
        lambda h: RNCA(3, n_random_features=32, bandwidth=h, random_state=0),
        lambda h: RandomFourierFeatures(16, bandwidth=h, random_state=0),
    ],
)
def test_heuristic_bandwidth_equals_the_in_memory_one(client, heuristic, make):
    # 3000 rows: 4.5M pairs, so the percentile heuristics sample 100,000 of them;
    # the Dask fit gathers exactly those rows and resolves the same value
    X = _data(n=3000, d=3, seed=9)
    ref = make(heuristic).fit(X)
    est = fit(make(heuristic), da.from_array(X, chunks=(500, 3)))
    assert est.kernel_.bandwidth == pytest.approx(ref.kernel_.bandwidth, rel=1e-12)


def test_fit_with_unknown_chunk_sizes(client):
    X = _data(n=500)
    Xd = da.from_array(X, chunks=(100, 4))
    Xd = Xd[Xd[:, 0] > -np.inf]  # boolean mask: row chunk sizes become unknown
    assert np.isnan(Xd.shape[0])
    est = fit(Nystroem(n_landmarks=30, bandwidth=3.0, random_state=0), Xd)
    ref = Nystroem(n_landmarks=30, bandwidth=3.0, random_state=0).fit(X)
    np.testing.assert_array_equal(est.landmarks_, ref.landmarks_)


def test_fit_refuses_what_it_cannot_do():
    Xd = da.zeros((10, 2), chunks=5)
    with pytest.raises(TypeError, match="SubsampleKPCA"):
        fit(KernelPCA(), Xd)
    with pytest.raises(ValueError, match="fit_rows"):
        fit(Nystroem(), Xd, fit_rows=0)


def test_tree_reduce_and_gather_rows_no_client():
    X = np.arange(60.0).reshape(20, 3)
    Xd = da.from_array(X, chunks=(3, 3))
    total = tree_reduce(Xd, lambda b: b.sum(axis=0), merge=lambda parts: sum(parts), split_every=2)
    np.testing.assert_array_equal(total.compute().item(), X.sum(axis=0))
    (rows,) = gather_rows(Xd, np.array([19, 0, 7, 7]))
    np.testing.assert_array_equal(rows, X[[19, 0, 7, 7]])


# -- shards and the CLI ------------------------------------------------------------
def test_read_shards_npy_and_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    X = _data(n=90)
    (tmp_path / "npy").mkdir()
    (tmp_path / "pq").mkdir()
    for i, part in enumerate(np.array_split(X, 3)):
        np.save(tmp_path / "npy" / f"part-{i}.npy", part)
        table = pa.table({f"f{j}": part[:, j] for j in range(4)} | {"label": np.arange(len(part))})
        pq.write_table(table, tmp_path / "pq" / f"part-{i}.parquet")
    a = read_shards(tmp_path / "npy")
    assert a.numblocks == (3, 1)
    np.testing.assert_array_equal(a.compute(), X)
    b = read_shards(tmp_path / "pq", label_column="label")
    np.testing.assert_array_equal(b.compute(), X)
    np.save(tmp_path / "npy" / "part-9.npy", np.zeros((2, 5)))
    with pytest.raises(ValueError, match=r"part-9.npy: 5 features"):
        read_shards(tmp_path / "npy")
    with pytest.raises(FileNotFoundError, match="neither"):
        read_shards(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"no .npy or .parquet"):
        read_shards(tmp_path / "empty")


def test_parquet_row_groups_are_the_chunks_each_read_once(tmp_path, monkeypatch):
    # issue 28: a large Parquet file spreads over the workers by row groups; no file is read twice
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from kernelsketch.io.binary import ParquetSource

    X = _data(n=1000)
    table = pa.table({f"f{j}": X[:, j] for j in range(4)} | {"label": np.arange(1000) % 7})
    pq.write_table(table, tmp_path / "x.parquet", row_group_size=150)  # 6 groups of 150, one of 100
    read = []
    original = ParquetSource.read_row_groups

    def spy(self, first, stop):
        read.append((first, stop))
        return original(self, first, stop)

    monkeypatch.setattr(ParquetSource, "read_row_groups", spy)
    A, y = read_shards(tmp_path / "x.parquet", label_column="label", chunk_rows=300, return_labels=True)
    assert A.chunks[0] == (300, 300, 300, 100)  # whole row groups, about chunk_rows each
    import dask

    import kernelsketch as ks

    with dask.config.set(scheduler="synchronous"):
        Xc, yc = dask.compute(A, y)
    np.testing.assert_array_equal(Xc, X)
    np.testing.assert_array_equal(yc.astype(int), np.arange(1000) % 7)
    assert sorted(read) == [(0, 2), (2, 4), (4, 6), (6, 7)]  # each group read by one chunk, once
    # the engine's results on these chunks are the in-memory ones
    local = ks.cluster_file(X, 3, random_state=0)
    on_dask = ks.cluster_file(
        read_shards(tmp_path / "x.parquet", columns=[0, 1, 2, 3], chunk_rows=300), 3, random_state=0
    )
    np.testing.assert_array_equal(local.labels, on_dask.labels)


def test_cli_embed_on_the_cluster(client, tmp_path):
    from kernelsketch.cli.main import main

    X = _data(n=400)
    shards = tmp_path / "shards"
    shards.mkdir()
    for i, part in enumerate(np.array_split(X, 4)):
        np.save(shards / f"part-{i}.npy", part)
    out, model = tmp_path / "z.npy", tmp_path / "m.npz"
    code = main(
        [
            "embed",
            str(shards),
            "--method",
            "nystroem",
            "-d",
            "5",
            "-n",
            "30",
            "--bandwidth",
            "3",
            "--seed",
            "0",
            "-o",
            str(out),
            "--save",
            str(model),
            "--scheduler",
            client.scheduler.address,
            "-q",
        ]
    )
    assert code == 0
    ref = Nystroem(n_landmarks=30, n_components=5, bandwidth=3.0, random_state=0).fit(X)
    np.testing.assert_allclose(np.load(out), ref.transform(X), rtol=1e-12, atol=1e-12)
    out2 = tmp_path / "z2.npy"
    code = main(["transform", str(model), str(shards), "-o", str(out2), "--scheduler", client.scheduler.address, "-q"])
    assert code == 0
    np.testing.assert_array_equal(np.load(out2), np.load(out))
    # both flags at once is a usage error (exit 2), and nothing is written
    code = main(
        [
            "embed",
            str(shards),
            "--method",
            "rff",
            "-o",
            str(tmp_path / "z3.npy"),
            "--scheduler",
            client.scheduler.address,
            "--workers",
            "2",
            "-q",
        ]
    )
    assert code == 2 and not (tmp_path / "z3.npy").exists()


# -- failures: a worker killed mid-job ---------------------------------------------
def _slow_block(block):
    time.sleep(0.15)
    return block


@pytest.mark.slow
def test_worker_killed_mid_job_still_gives_the_right_result(client):
    """SIGKILL one worker process while a tree-merge fit runs: Dask reruns its tasks; the result is exact."""
    X = _data(n=1200)
    kw = dict(n_components=4, n_random_features=32, bandwidth=3.0, random_state=0)
    ref = RNCA(**kw).fit(X)
    Xd = da.from_array(X, chunks=(50, 4)).map_blocks(_slow_block, dtype=X.dtype)  # 24 chunks, ~3.6 s of work
    pids = list(client.run(os.getpid).values())
    killer = threading.Timer(1.0, os.kill, args=(pids[0], signal.SIGKILL))
    killer.start()
    try:
        est = fit(RNCA(**kw), Xd, split_every=3)
    finally:
        killer.join()
    np.testing.assert_allclose(est.explained_variance_, ref.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(est.transform(X), ref.transform(X), rtol=1e-8, atol=1e-10)
    client.wait_for_workers(2, timeout=60)
    assert pids[0] not in client.run(os.getpid).values()  # the nanny started a new process


def test_a_landmark_target_chooses_the_same_count_on_dask(client):
    import kernelsketch as ks

    X = _data(3000, d=4)

    def grid(choice):
        return [(g["n_landmarks"], g["relative_frobenius"]) for g in choice.grid]

    local = ks.choose_landmarks(Nystroem(n_components=10, random_state=0), X, target=0.02)
    remote = ks.choose_landmarks(
        Nystroem(n_components=10, random_state=0), da.from_array(X, chunks=700), target=0.02, client=client
    )
    assert len(local.grid) >= 2 and remote.n_landmarks == local.n_landmarks
    np.testing.assert_allclose(np.array(grid(remote)), np.array(grid(local)), rtol=1e-10)


# -- in-memory data in a graph: sent to the workers once, not once a pass ------------------------
def test_numpy_data_in_the_graph_is_sent_once_and_the_labels_are_the_local_ones(client):
    """``da.from_array`` of an ndarray holds every chunk in its graph: each pass used to send it again
    ("Sending large graph of size 76 MiB", five times for one cluster call); the engine persists it once."""
    import warnings

    import dask
    from sklearn.metrics import adjusted_rand_score

    import kernelsketch as ks
    from kernelsketch.distributed._dask import in_memory_bytes
    from kernelsketch.distributed.engine import DaskEngine

    X = _data(n=40_000, d=5)  # 1.6 MB: above the 1 MB warning threshold set below
    Xd = da.from_array(X, chunks=(8_000, 5))
    assert in_memory_bytes(Xd) == X.nbytes
    engine = DaskEngine(Xd, client=client)
    assert engine.stats["bytes_persisted"] == X.nbytes and in_memory_bytes(engine.X) == 0
    with (
        dask.config.set({"distributed.admin.large-graph-warning-threshold": "1MB"}),
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always")
        on_dask = ks.cluster_file(Xd, 3, client=client, random_state=0)
    sent = [w for w in caught if "Sending large graph" in str(w.message)]
    assert len(sent) <= 1, [str(w.message).splitlines()[0] for w in sent]  # the persist itself, at most
    local = ks.cluster_file(X, 3, random_state=0)
    assert adjusted_rand_score(local.labels, on_dask.labels) >= 0.999
    # a dask array that reads its data lazily carries none in its graph and is left as it is
    lazy = da.ones((1000, 3), chunks=(250, 3))
    assert in_memory_bytes(lazy) == 0 and DaskEngine(lazy, client=client).stats["bytes_persisted"] == 0


def _first_value(X, _state):
    return [float(X[0, 0])]


def test_dask_reduce_folds_in_chunk_order_holding_one_running_result(client):
    """``DaskEngine.reduce`` is the local engine's left fold: ``merge([running, part])`` in chunk order,
    never a list of every chunk's result on the client (a ``Z^T Z`` per chunk would not fit at scale)."""
    from kernelsketch.distributed.engine import DaskEngine
    from kernelsketch.out_of_core import open_engine

    X = np.arange(60.0).reshape(30, 2)
    seen = []

    def merge(parts):
        seen.append(len(parts))
        return [v for p in parts for v in p]

    for c in (client, None):
        seen.clear()
        engine = DaskEngine(da.from_array(X, chunks=(4, 2)), client=c, window=3)
        out = engine.reduce(_first_value, merge)
        assert out == [float(X[i, 0]) for i in range(0, 30, 4)]  # every chunk once, in chunk order
        assert max(seen) <= 2 and len(seen) == 8  # 7 folds of (running, part), then merge([running])
    local = open_engine(X, block_rows=4).reduce(_first_value, merge)
    assert local == out


def _plus_row_sums(X, shift):
    return X.sum(axis=1, keepdims=True) + shift


def test_map_gives_a_source_of_each_blocks_result_on_every_engine(client):
    """``rows.map(fn, keep=...)``: a source over the same rows whose blocks are ``fn(block)``, the same on the
    in-memory rows, the local engine and Dask; kept, Dask holds them on the workers until ``release`` and the local
    engine reads back what its first pass wrote (``fn`` runs once a block)."""
    from kernelsketch.distributed.engine import DaskEngine
    from kernelsketch.out_of_core import open_engine
    from kernelsketch.utils.row_source import ArrayRows

    X = np.arange(60.0).reshape(30, 2)
    want = X.sum(axis=1) + 1.0
    dask_engine = DaskEngine(da.from_array(X, chunks=(7, 2)), client=client)
    for engine in (ArrayRows(X, block_rows=7), open_engine(X, block_rows=7), dask_engine):
        for keep in (False, True):
            mapped = engine.map(_plus_row_sums, 1.0, keep=keep)
            for _ in range(2):  # (kept: the second pass reads what the first kept)
                blocks = []
                mapped.foreach(_identity, lambda out, y, blocks=blocks: blocks.append(out))
                np.testing.assert_array_equal(np.vstack(blocks).ravel(), want)
                assert mapped.reduce(_identity, lambda parts: np.vstack(parts)).ravel().tolist() == want.tolist()
            mapped.release()
    calls = []

    def counted(X, shift):
        calls.append(X.shape[0])
        return _plus_row_sums(X, shift)

    kept = open_engine(X, block_rows=7).map(counted, 1.0, keep=True)
    for _ in range(3):
        assert kept.reduce(_identity, lambda parts: np.vstack(parts)).ravel().tolist() == want.tolist()
    assert sum(calls) == 30  # computed by the first pass only
    kept.release()
    derived = dask_engine.map(_plus_row_sums, 0.0, keep=True)
    futures = distributed.futures_of(derived._kept)
    distributed.wait(futures)
    assert futures and all(f.status == "finished" for f in futures)  # computed once, held on the workers
    derived.release()
    assert derived._kept is None and all(f.status == "cancelled" for f in futures)
    assert not DaskEngine(da.from_array(X, chunks=(7, 2))).can_keep(0)  # no client: nothing to keep on
    assert dask_engine.can_keep(2**20) and not dask_engine.can_keep(2**40)  # a quarter of 2 x 2 GiB


def _identity(X, _state):
    return X


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dask_keeps_each_chunks_graph_on_the_workers_and_searches_each_row_once(monkeypatch, dtype):
    """keep_graph on Dask: the fit pass's graph of each chunk stays on the workers and the assignment pass embeds
    it (one search per row, not two), with the labels of the two-search run and of the local engine."""
    from sklearn.datasets import make_blobs

    import kernelsketch as ks
    from kernelsketch.distributed.engine import DaskEngine
    from kernelsketch.maps.landmark_graph import LandmarkGraph

    X, _ = make_blobs(12000, centers=4, n_features=3, random_state=1)
    X = X.astype(dtype)
    searched = {"rows": 0}
    graph = LandmarkGraph.graph

    def counting(self, rows, **kw):
        searched["rows"] += rows.shape[0]
        return graph(self, rows, **kw)

    monkeypatch.setattr(LandmarkGraph, "graph", counting)
    released = []
    release = DaskEngine.release
    monkeypatch.setattr(DaskEngine, "release", lambda self: (released.append(self._kept is not None), release(self)))
    options = dict(init_size=2000, random_state=0, missing_codes=None)
    local = ks.cluster_file(X, 4, **options).labels
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0") as c:
        runs = {}
        for keep in (True, False):
            searched["rows"] = 0
            runs[keep] = (
                ks.cluster_file(da.from_array(X, chunks=(3000, 3)), 4, client=c, keep_graph=keep, **options),
                searched["rows"],
            )
    (kept, n_kept), (again, n_again) = runs[True], runs[False]
    np.testing.assert_array_equal(kept.labels, again.labels)
    np.testing.assert_array_equal(kept.labels, local)
    assert n_kept == 12000 + 2000 and n_again == 2 * 12000 + 2000  # the fit pass, k-means' sample, (assignment)
    assert released == [True]  # the kept graphs were dropped when the run ended


def test_each_chunk_goes_to_the_workers_with_its_own_tasks_only(tmp_path):
    """A pass submits its chunks a window at a time: each chunk's delayed carries only the tasks of that chunk (not
    the whole array's graph, which ``to_delayed`` gives every chunk and which was pickled again with each one), and
    the chunks are still the file's rows in order."""
    from kernelsketch.distributed.engine import DaskEngine

    X = _data(n=5000, d=3, seed=1)
    np.save(tmp_path / "X.npy", X)
    engine = DaskEngine.open(tmp_path / "X.npy", chunk_rows=500)
    blocks = engine._blocks()
    whole = len(engine.X.to_delayed().ravel()[0].__dask_graph__())
    sizes = [len(b.__dask_graph__()) for b in blocks]
    assert len(blocks) == 10 and whole >= 2 * len(blocks) and max(sizes) * len(blocks) <= whole
    np.testing.assert_array_equal(np.concatenate(da.compute(*blocks)), X)
    assert engine._blocks()[0] is blocks[0]  # (culled once per array)


def test_bytes_to_client_counts_the_arrays_without_pickling_them_again():
    """The engine's ``bytes_to_client`` adds each result's array bytes (what pickling it would cost, to within its
    small header), through tuples, lists, dicts and CSR; other objects by their pickle."""
    import pickle

    import scipy.sparse as sp

    from kernelsketch.distributed.engine import _payload_bytes

    G, s = np.random.default_rng(0).random((300, 300)), np.ones(300)
    part = (G, s, 7)
    assert _payload_bytes(part) >= G.nbytes + s.nbytes
    assert abs(_payload_bytes(part) - len(pickle.dumps(part, protocol=5))) <= 0.01 * G.nbytes
    Z = sp.random(200, 300, density=0.01, format="csr", random_state=0)
    assert _payload_bytes([Z, {"a": s}]) == Z.data.nbytes + Z.indices.nbytes + Z.indptr.nbytes + s.nbytes
    labels = np.array(["a", "bb"] * 50, dtype=object)  # object arrays: by their pickle (the strings, not pointers)
    assert _payload_bytes(labels) == len(pickle.dumps(labels, protocol=pickle.HIGHEST_PROTOCOL))


def _row_sums(X, _state):
    return X.sum(axis=1)


def test_a_shard_chunk_is_read_and_worked_on_in_one_task_with_its_labels(tmp_path):
    """A pass over shard files runs one task a chunk (read, preprocessed, ``fn``): each chunk's result comes with
    its own labels, in row order, and ``bytes_to_client`` counts ``fn``'s output, not the labels."""
    pa = pytest.importorskip("pyarrow")
    import dask
    import pyarrow.parquet as pq

    from kernelsketch.distributed.engine import DaskEngine

    X = _data(n=300)
    labels = np.arange(300) % 7
    pq.write_table(
        pa.table({f"f{j}": X[:, j] for j in range(4)} | {"label": labels}), tmp_path / "x.parquet", row_group_size=40
    )
    with dask.config.set(scheduler="synchronous"):
        engine = DaskEngine.open(tmp_path / "x.parquet", label_column="label", chunk_rows=80)
        engine.set_preprocess(_plus_one)
        outs, ys = [], []
        tasks = engine.stats["tasks"]
        engine.foreach(_row_sums, lambda out, y: (outs.append(out), ys.append(y)))
    assert engine.stats["tasks"] - tasks == engine.X.numblocks[0] > 1  # (one task a chunk)
    np.testing.assert_allclose(np.concatenate(outs), (X + 1.0).sum(axis=1))
    np.testing.assert_array_equal(np.concatenate(ys).astype(int), labels)
    assert engine.stats["bytes_to_client"] == sum(o.nbytes for o in outs)


def _absmax_and_pieces(X, _state):
    from kernelsketch.out_of_core.column_statistics import column_absmax

    return (*column_absmax(X, None), [X.shape[0]])


def _merge_absmax_and_pieces(parts):
    from kernelsketch.out_of_core.column_statistics import merge_absmax

    n, absmax = merge_absmax([p[:2] for p in parts])
    return n, absmax, [rows for p in parts for rows in p[2]]


def test_a_reduce_pass_folds_a_npy_chunk_in_pieces_in_its_task(tmp_path, monkeypatch):
    """A ``.npy`` chunk larger than ``REDUCE_PIECE_BYTES`` is read and passed to a reduce pass's ``fn`` in pieces
    within its one task, folded left there with the pass's merge: the column extremes of every row, the pieces in
    row order."""
    import dask

    from kernelsketch.distributed import engine as dask_engine
    from kernelsketch.distributed.engine import DaskEngine

    X = _data(n=1000, d=4, seed=5)
    np.save(tmp_path / "X.npy", X)
    monkeypatch.setattr(dask_engine, "REDUCE_PIECE_BYTES", 32 * 4 * 8)  # (32 rows of 4 float64 a piece)
    with dask.config.set(scheduler="synchronous"):
        engine = DaskEngine.open(tmp_path / "X.npy", chunk_rows=300)
        engine.set_preprocess(_plus_one)
        tasks = engine.stats["tasks"]
        n, absmax, pieces = engine.reduce(_absmax_and_pieces, _merge_absmax_and_pieces)
    assert engine.stats["tasks"] - tasks == engine.X.numblocks[0] == 4  # (one task a chunk)
    assert n == sum(pieces) == 1000
    assert pieces[:10] == [32] * 9 + [300 - 9 * 32]  # (the first chunk's pieces, in order)
    np.testing.assert_array_equal(absmax, np.abs(X + 1.0).max(axis=0))


def test_a_local_cluster_started_on_a_thread_serves_connect_and_the_default_clustering_never_imports_sklearn_there(
    tmp_path,
):
    """``--workers N`` starts its cluster first thing (LocalClusterStart), and connect(start=...) uses it: its
    workers import the default clustering's block functions as they start (the preload), not on the pass's first
    task, and a whole default ``cluster_file`` run (standardize's pass, the statistics' sample, the seeding sample,
    the assignment) sends them only plain arrays and sklearn-free functions: scikit-learn (a heavy import)
    is never imported on a worker.  The cluster is stopped when the block ends."""
    import kernelsketch as ks
    from kernelsketch.distributed.cluster import LocalClusterStart, connect
    from kernelsketch.maps import LandmarkSpectralEmbedding

    def modules():
        import sys

        names = ("kernelsketch.out_of_core.assignment", "kernelsketch.maps.landmark_graph", "sklearn")
        return tuple(m in sys.modules for m in names)

    X = _data(n=6000, d=3, seed=2).astype(np.float32)
    np.save(tmp_path / "X.npy", X)
    start = LocalClusterStart(2, memory_limit="1GiB")
    with pytest.raises(ValueError, match="start"):
        with connect(n_workers=2, start=start):
            pass
    with connect(start=start) as client:
        assert list(client.run(modules).values()) == [(True, True, False)] * 2
        options = dict(
            embedding=LandmarkSpectralEmbedding(statistics_rows=2000),  # (the statistics of a sample's pieces)
            standardize="auto",
            init_size=1000,
            random_state=0,
            missing_codes=None,
        )
        on_dask = ks.cluster_file(tmp_path / "X.npy", 3, client=client, **options)
        assert list(client.run(modules).values()) == [(True, True, False)] * 2
    np.testing.assert_array_equal(on_dask.labels, ks.cluster_file(tmp_path / "X.npy", 3, **options).labels)
    assert start._cluster is None  # closed by connect
    with pytest.raises(ValueError, match="was closed"):
        with connect(start=start):
            pass
    with pytest.raises(ValueError, match="n_workers must be an int >= 1"):
        LocalClusterStart(0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; fork servers are POSIX-only")
def test_a_local_clusters_workers_are_forked_from_a_server_started_with_their_environment(tmp_path):
    """LocalClusterStart forks its workers from a fork server that imported their modules as it started, with one
    BLAS thread a process (the environment distributed's nannies give a spawned worker; the libraries read it as
    they load, in the server): the workers' parent is that server, their OpenBLAS has one thread, and each
    reports its own peak memory, which the process that started them cannot see."""
    code = (
        "import os, threadpoolctl\n"
        "from kernelsketch.distributed.cluster import LocalClusterStart, connect, start_worker_forkserver\n"
        "from kernelsketch.distributed.engine import DaskEngine\n"
        "import numpy as np\n"
        "def seen():\n"
        "    parent = open(f'/proc/{os.getppid()}/cmdline', 'rb').read().replace(b'\\0', b' ').decode()\n"
        "    blas = [p['num_threads'] for p in threadpoolctl.threadpool_info() if p['user_api'] == 'blas']\n"
        "    return ('forkserver' in parent, os.getppid() != MAIN, tuple(sorted(set(blas))))\n"
        "MAIN = os.getpid()\n"
        "start = LocalClusterStart(2, memory_limit='1GiB')\n"
        "assert start_worker_forkserver()\n"  # (the one LocalClusterStart started, already running)
        "with connect(start=start) as client:\n"
        "    print('SEEN', sorted(set(client.run(seen).values())))\n"
        "    engine = DaskEngine.open(da_path, client=client)\n"
        "    print('PEAK', engine.worker_peak_mib() > 50)\n"
    )
    np.save(tmp_path / "X.npy", np.zeros((100, 3)))
    code = f"da_path = {str(tmp_path / 'X.npy')!r}\n" + code
    out = __import__("subprocess").run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "SEEN [(True, True, (1,))]" in out.stdout and "PEAK True" in out.stdout, out.stdout + out.stderr[-1000:]


def _shifted(X, shift):
    return X + shift


def _plus_one(X):
    return X + 1.0


def test_rows_by_index_from_shard_files_read_only_those_rows(tmp_path, monkeypatch):
    """An engine over shard files gathers rows by index from the files alone (one task reads only its rows of each
    chunk that holds one, through the row-wise steps set since), never a whole chunk; ``gather_mapped`` runs its
    function on those rows; the rows and labels are ``X[idx]``'s, for ``.npy`` and Parquet shards and for any dask
    array."""
    pa = pytest.importorskip("pyarrow")
    import dask
    import pyarrow.parquet as pq

    from kernelsketch.distributed.engine import DaskEngine
    from kernelsketch.io.binary import NpySource
    from kernelsketch.utils.row_source import ArrayRows, gather_mapped

    X = _data(n=300)
    (tmp_path / "npy").mkdir()
    for i, part in enumerate(np.array_split(X, 2)):
        np.save(tmp_path / "npy" / f"part-{i}.npy", part)
    labels = np.arange(300) % 5
    pq.write_table(
        pa.table({f"f{j}": X[:, j] for j in range(4)} | {"label": labels}), tmp_path / "x.parquet", row_group_size=40
    )
    idx = np.array([0, 3, 149, 150, 151, 299])
    whole, taken = [], []
    monkeypatch.setattr(NpySource, "read_range", lambda self, a, b: whole.append((a, b)))
    take = NpySource.take
    monkeypatch.setattr(NpySource, "take", lambda self, rows: (taken.append(len(rows)), take(self, rows))[1])
    with dask.config.set(scheduler="synchronous"):
        engine = DaskEngine.open(tmp_path / "npy", chunk_rows=50)
        assert engine.X.numblocks == (6, 1)
        tasks = engine.stats["tasks"]
        rows, y = engine.gather(idx)
        np.testing.assert_array_equal(rows, X[idx])
        assert y is None and whole == [] and sorted(taken) == [1, 1, 2, 2]  # 4 chunks hold some: only those rows
        assert engine.stats["tasks"] == tasks + 1  # (in one task)
        engine.set_preprocess(_plus_one)
        np.testing.assert_array_equal(engine.gather(idx)[0], X[idx] + 1.0)
        (out, y) = gather_mapped(engine, idx, _shifted, 10.0)
        np.testing.assert_array_equal(out, (X[idx] + 1.0) + 10.0)
        assert whole == []
        pq_engine = DaskEngine.open(tmp_path / "x.parquet", label_column="label", chunk_rows=80)
        rows, y = pq_engine.gather(idx)
        np.testing.assert_array_equal(rows, X[idx])
        np.testing.assert_array_equal(np.asarray(y).astype(int), labels[idx])
    # (no files: dask's take; outside the synchronous scheduler, as the engine persists in-memory data on a default
    # client when the module's client fixture made one)
    arr_engine = DaskEngine(da.from_array(X, chunks=(70, 4)))
    np.testing.assert_array_equal(arr_engine.gather(idx)[0], X[idx])
    np.testing.assert_array_equal(gather_mapped(arr_engine, idx, _shifted, 1.0)[0], X[idx] + 1.0)
    np.testing.assert_array_equal(gather_mapped(ArrayRows(X), idx, _shifted, 1.0)[0], X[idx] + 1.0)  # (here)


@pytest.mark.parametrize("split_rows", [None, 100])
def test_the_seeding_sample_is_embedded_on_a_worker_with_the_local_labels(client, monkeypatch, split_rows):
    """On Dask the clusterer's seeding sample is embedded by a worker (where the rows are and the search's kernels
    are loaded), not by this process, which embeds it when it runs locally: the same labels.  A sample of at least
    twice ``SPLIT_ROWS`` rows is cut into one piece a worker (the embedding maps each row on its own): the same
    labels again."""
    import kernelsketch as ks
    from kernelsketch.distributed import engine as dask_engine
    from kernelsketch.maps.landmark_graph import LandmarkGraph

    pieces = []
    mapped = dask_engine.DaskEngine._mapped
    monkeypatch.setattr(
        dask_engine.DaskEngine,
        "_mapped",
        lambda self, ps, *a: (pieces.append([len(p) for p in ps]), mapped(self, ps, *a))[1],
    )
    if split_rows is not None:
        monkeypatch.setattr(dask_engine, "SPLIT_ROWS", split_rows)

    X = _data(n=3000, d=3, seed=4)
    calls = []
    original = LandmarkGraph.embed_rows
    monkeypatch.setattr(LandmarkGraph, "embed_rows", lambda self, R: (calls.append(len(R)), original(self, R))[1])
    local = ks.cluster_file(X, 3, init_size=1000, random_state=0, missing_codes=None)
    assert calls == [1000]
    calls.clear()
    on_dask = ks.cluster_file(
        da.from_array(X, chunks=(700, 3)), 3, init_size=1000, random_state=0, client=client, missing_codes=None
    )
    assert calls == []  # (the workers are other processes: the spy is not there)
    np.testing.assert_array_equal(on_dask.labels, local.labels)
    assert [1000] in pieces if split_rows is None else ([500, 500] in pieces and [1000] not in pieces)


class _MarksTeardown:
    def __init__(self, path):
        self.path = path

    def __del__(self):
        _write_mark(self.path, "module teardown ran")


def _write_mark(path, text):
    with open(path, "w") as f:
        f.write(text)


def _set_marks(teardown_path, handler_path):
    """In a worker: a file written by module teardown, and one by an exit handler registered before the preload's
    (weak-reference finalizers, as logging's flush or a coverage tool's save)."""
    import weakref

    import kernelsketch

    kernelsketch._teardown_mark = _MarksTeardown(teardown_path)
    kernelsketch._handler_mark = holder = _MarksTeardown(os.devnull)
    weakref.finalize(holder, _write_mark, handler_path, "exit handler ran")


def test_a_local_clusters_workers_end_without_module_teardown_after_a_normal_close(tmp_path):
    """A worker of connect's local cluster, once closed normally, runs every exit handler and ends its process
    without the teardown of every module (which held the close up by 0.5-0.7 s); before a normal close it would not."""
    import cloudpickle

    from kernelsketch.distributed.cluster import connect
    from kernelsketch.utils import process_exit

    assert process_exit._code is None
    assert process_exit._exit_now() is None  # (not asked for: the ordinary ending, here in pytest)
    here = sys.modules[__name__]
    registered = __name__ in cloudpickle.list_registry_pickle_by_value()  # (by the client fixture, if it ran)
    if not registered:
        cloudpickle.register_pickle_by_value(here)  # (the marks' code, to the workers)
    with connect(n_workers=2, memory_limit="1GiB") as c:
        workers = sorted(c.scheduler_info()["workers"])
        for w, worker in enumerate(workers):
            c.run(_set_marks, str(tmp_path / f"teardown{w}"), str(tmp_path / f"handler{w}"), workers=[worker])
        dirs = list(c.run(lambda dask_worker: dask_worker.local_directory).values())
    if not registered:
        cloudpickle.unregister_pickle_by_value(here)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["handler0", "handler1"]  # handlers ran; no teardown
    assert not any(os.path.exists(d) for d in dirs)  # the workers' scratch directories were still removed


def test_a_statistics_sample_is_summed_on_the_workers_with_the_local_numbers(client, monkeypatch):
    """More rows than ``statistics_rows``: the sample's pieces are gathered and their statistics computed on the
    workers side by side (:func:`~kernelsketch.utils.row_source.gather_mapped_pieces`); the same statistics and
    labels as locally."""
    import kernelsketch as ks
    from kernelsketch.maps import LandmarkSpectralEmbedding, landmark_spectral

    monkeypatch.setattr(landmark_spectral, "_SAMPLE_PIECE_ROWS", 700)  # (4 pieces of the 2,500 rows)
    monkeypatch.setattr(landmark_spectral, "_SAMPLE_STATISTICS_BYTES", 3 * 8 * 1000 * 1000)  # (batches of 3)

    X = _data(n=6000, d=3, seed=5)
    emb = LandmarkSpectralEmbedding(statistics_rows=2500)
    local = ks.cluster_file(X, 3, embedding=emb, init_size=1000, random_state=0, missing_codes=None)
    on_dask = ks.cluster_file(
        da.from_array(X, chunks=(700, 3)),
        3,
        embedding=emb,
        init_size=1000,
        random_state=0,
        client=client,
        missing_codes=None,
    )
    assert local.statistics_rows == on_dask.statistics_rows == 2500
    a, b = local.clusterer.embedding_, on_dask.clusterer.embedding_
    np.testing.assert_array_equal(a.graph_gram_.toarray(), b.graph_gram_.toarray())
    np.testing.assert_array_equal(a.landmark_degrees_, b.landmark_degrees_)
    np.testing.assert_array_equal(on_dask.labels, local.labels)
