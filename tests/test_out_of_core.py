"""The out-of-core driver: the same fit, embedding and clusters from a file, an array and a Dask cluster."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score, rand_score

import kernelsketch as ks
from kernelsketch.io.source import ArraySource
from kernelsketch.maps.landmarks import AUTO_MAX_LANDMARKS, auto_n_landmarks
from kernelsketch.out_of_core import PairCounts, open_engine

from .subprocesses import INTERRUPTIBLE


def _blobs(n=6000, k=5, d=6, seed=0, std=1.0):
    X, y = make_blobs(n_samples=n, centers=k, n_features=d, cluster_std=std, random_state=seed)
    return X, y


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    X, y = _blobs()
    folder = tmp_path_factory.mktemp("ooc")
    np.save(folder / "X.npy", X)
    np.save(folder / "Xy.npy", np.column_stack([X, y]))
    with open(folder / "X.csv", "w") as f:
        f.write(",".join(f"f{j}" for j in range(X.shape[1])) + ",label\n")
        for row, c in zip(X, y, strict=True):
            f.write(",".join(repr(float(v)) for v in row) + f",{c}\n")
    return folder, X, y


# -- n_landmarks="auto" --------------------------------------------------------------
def test_auto_landmarks_is_the_papers_rule_with_a_cap():
    assert [auto_n_landmarks(N) for N in (50, 199, 20_000, 20_867, 100_000)] == [50, 199, 200, 208, 1000]
    assert auto_n_landmarks(409_600) == 4096 == AUTO_MAX_LANDMARKS
    assert auto_n_landmarks(20_000_000) == AUTO_MAX_LANDMARKS


def test_auto_landmarks_resolved_from_the_whole_file_not_the_fit_sample(files, tmp_path):
    # 60,000 rows with a 2,000-row fit sample: n = 600 (from N), not 200 (from the sample)
    X = np.random.default_rng(1).normal(size=(60_000, 3))
    np.save(tmp_path / "big.npy", X)
    res = ks.fit_source(ks.KernelJL(n_components=5, random_state=0), tmp_path / "big.npy", fit_rows=2000)
    assert res.n_landmarks == 600 == res.estimator.landmarks_.shape[0]
    ref = ks.KernelJL(n_components=5, random_state=0).fit(X)
    np.testing.assert_array_equal(res.estimator.landmark_indices_, ref.landmark_indices_)


# -- fitting: identical to the in-memory fit -------------------------------------------
ESTIMATORS = {
    "kjl": lambda: ks.KernelJL(n_components=8, random_state=0),
    "nystroem": lambda: ks.Nystroem(n_landmarks=80, n_components=10, random_state=0),
    "subsample-kpca": lambda: ks.SubsampleKPCA(5, n_landmarks=100, random_state=0),
    "rff": lambda: ks.RandomFourierFeatures(32, random_state=0),
    "rnca": lambda: ks.RNCA(4, n_random_features=32, random_state=0),
    "rf-kpca": lambda: ks.RFKPCA(4, n_random_features=32, bandwidth="median", random_state=0),
    "kjl-mean-sq": lambda: ks.KernelJL(n_components=8, bandwidth="mean_sq", random_state=0),
}


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_fit_from_a_file_equals_the_in_memory_fit(files, name):
    folder, X, y = files
    ref = ESTIMATORS[name]().fit(X)
    res = ks.fit_source(ESTIMATORS[name](), folder / "X.npy")
    assert res.n_rows == X.shape[0]
    # 6,000 rows: the percentile heuristic samples 100,000 of 18M pairs; the file fit reads exactly those
    assert res.estimator.kernel_.bandwidth == pytest.approx(ref.kernel_.bandwidth, rel=1e-12)
    np.testing.assert_allclose(res.estimator.transform(X[:500]), ref.transform(X[:500]), rtol=1e-9, atol=1e-10)


def test_csv_fit_with_unknown_row_count(files):
    folder, X, y = files
    # a text file is counted while it is sampled: with fit_rows >= N the sample is the file, so the fit is exact
    res = ks.fit_source(
        ks.KernelJL(n_components=8, random_state=0), folder / "X.csv", label_column="label", fit_rows=10_000
    )
    ref = ks.KernelJL(n_components=8, random_state=0).fit(X)
    assert res.n_rows == 6000 and res.n_landmarks == 200
    np.testing.assert_allclose(res.estimator.transform(X[:300]), ref.transform(X[:300]), rtol=1e-9, atol=1e-10)
    # with a smaller sample: landmarks drawn from a uniform sample, n still from N
    res = ks.fit_source(
        ks.Nystroem(n_landmarks="auto", random_state=0), folder / "X.csv", label_column="label", fit_rows=1000
    )
    assert res.n_rows == 6000 and res.fit_rows == 1000 and res.n_landmarks == 200


def test_kernel_pca_and_pipelines_fit_on_a_sample(files):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    folder, X, y = files
    pipe = make_pipeline(StandardScaler(), ks.KernelPCA(n_components=3, bandwidth=2.0))
    res = ks.fit_source(pipe, folder / "X.npy", fit_rows=500, random_state=0)
    assert res.strategy == "sample" and res.fit_rows == 500
    from kernelsketch.maps.landmarks import sample_row_indices
    from kernelsketch.utils.validation import derive_seed

    idx = sample_row_indices(6000, 500, derive_seed(0))
    ref = make_pipeline(StandardScaler(), ks.KernelPCA(n_components=3, bandwidth=2.0)).fit(X[idx])
    np.testing.assert_allclose(np.abs(pipe.transform(X[:50])), np.abs(ref.transform(X[:50])), rtol=1e-8, atol=1e-10)


def test_streaming_bandwidth_comes_from_all_rows_not_the_first_block(tmp_path):
    # rows sorted by class: the first block alone would give a much smaller bandwidth
    X, y = _blobs(n=8000, k=4, d=3, seed=4, std=0.3)
    X = X[np.argsort(y, kind="stable")]
    np.save(tmp_path / "sorted.npy", X)
    res = ks.fit_source(ks.RNCA(3, n_random_features=16, random_state=0), tmp_path / "sorted.npy", block_rows=500)
    ref = ks.RNCA(3, n_random_features=16, random_state=0).fit(X)
    first = ks.RNCA(3, n_random_features=16, random_state=0).partial_fit(X[:500])
    assert res.estimator.kernel_.bandwidth == pytest.approx(ref.kernel_.bandwidth, rel=1e-12)
    assert first.kernel_.bandwidth < 0.5 * ref.kernel_.bandwidth
    np.testing.assert_allclose(res.estimator.explained_variance_, ref.explained_variance_, rtol=1e-8)


# -- transform: sinks ------------------------------------------------------------------
@pytest.mark.parametrize("suffix", ["npy", "csv", "parquet"])
def test_embed_file_to_every_format(files, tmp_path, suffix):
    folder, X, y = files
    out = tmp_path / f"Z.{suffix}"
    res = ks.embed_file(folder / "X.npy", out, ks.KernelJL(n_components=6, random_state=0), block_rows=1000)
    Z = ks.io.read_matrix(out)[0]
    ref = ks.KernelJL(n_components=6, random_state=0).fit(X).transform(X)
    np.testing.assert_allclose(Z, ref, rtol=1e-6 if suffix == "csv" else 1e-12, atol=1e-9)
    assert res.transform.n_rows == 6000 and res.transform.output == out
    with pytest.raises(FileExistsError, match="exists"):
        ks.embed_file(folder / "X.npy", out, ks.KernelJL(n_components=6, random_state=0))


def test_transform_source_sinks(files):
    folder, X, y = files
    est = ks.Nystroem(n_landmarks=50, random_state=0).fit(X)
    blocks = []
    ks.transform_source(est, folder / "X.npy", blocks.append, block_rows=700)
    assert [b.shape[0] for b in blocks] == [700] * 8 + [400]
    np.testing.assert_allclose(np.concatenate(blocks), est.transform(X), rtol=1e-9, atol=1e-12)
    res = ks.transform_source(est, X)
    np.testing.assert_allclose(res.embedding, est.transform(X), rtol=1e-9, atol=1e-12)
    with pytest.raises(TypeError, match="output must be"):
        ks.transform_source(est, X, 3)


def test_never_overwrites_the_input(files):
    folder, X, y = files
    before = (folder / "X.npy").read_bytes()
    with pytest.raises(ValueError, match="input"):
        ks.embed_file(folder / "X.npy", folder / "X.npy", ks.KernelJL(n_components=3), force=True)
    assert (folder / "X.npy").read_bytes() == before


# -- clustering --------------------------------------------------------------------------
def test_pair_counts_equal_sklearn():
    rng = np.random.default_rng(0)
    y = rng.choice(["a", "b", "c"], 500)
    lab = rng.integers(0, 4, 500)
    pc = PairCounts()
    for s in np.array_split(np.arange(500), 7):
        pc.add(y[s], lab[s])
    assert pc.rand_index() == pytest.approx(rand_score(y, lab), rel=1e-12)
    assert pc.adjusted_rand_index() == pytest.approx(adjusted_rand_score(y, lab), rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=60))
def test_pair_counts_property(pairs):
    y, lab = (np.array(v) for v in zip(*pairs, strict=True))
    pc = PairCounts()
    pc.add(y, lab)
    assert pc.rand_index() == pytest.approx(rand_score(y, lab), abs=1e-12)
    assert pc.adjusted_rand_index() == pytest.approx(adjusted_rand_score(y, lab), abs=1e-12)


def test_cluster_in_memory_data_equals_kmeans_on_the_embedding():
    X, y = _blobs(n=4000, k=6, d=8, seed=3)
    res = ks.cluster_file(ArraySource(X, y), 6, embedding="kjl", random_state=0)
    Z = ks.KernelJL(n_components=60, random_state=0).fit_transform(X)
    ref = KMeans(6, n_init=10, random_state=0).fit(Z)
    assert adjusted_rand_score(ref.labels_, res.labels) >= 0.99
    assert res.rand_index == pytest.approx(rand_score(y, res.labels), rel=1e-12)
    assert res.inertia == pytest.approx(ref.inertia_, rel=1e-3)
    assert res.fit.n_landmarks == 200 and res.sample_rows == 4000


def test_cluster_a_file_larger_than_the_sample(files, tmp_path):
    # N > init_size: seeding on a sample, labels streamed block by block; one Lloyd pass
    folder, X, y = files
    out = tmp_path / "labels.npy"
    res = ks.cluster_file(
        folder / "Xy.npy", 5, output=out, label_column=6, init_size=1500, lloyd_passes=2, block_rows=512, random_state=0
    )
    labels = np.load(out).ravel()
    assert labels.shape == (6000,) and res.labels is None and res.output == out
    kjl = ks.KernelJL(n_components=50, random_state=0).fit(X)
    ref = KMeans(5, n_init=10, random_state=0).fit(kjl.transform(X))
    assert adjusted_rand_score(ref.labels_, labels) >= 0.99
    assert adjusted_rand_score(y, labels) >= 0.99 and res.adjusted_rand_index == pytest.approx(
        adjusted_rand_score(y, labels), rel=1e-12
    )
    assert res.cluster_sizes.sum() == 6000 and res.passes >= 1 and res.center_shift < 1e-3


def test_cluster_every_embedding_and_raw_features(files):
    folder, X, y = files
    for embedding in (
        None,
        ks.SubsampleKPCA(5, n_landmarks=100, random_state=0),
        ks.Nystroem(n_landmarks="auto", n_components=50, random_state=0),
        ks.RNCA(10, n_random_features=64, random_state=0),
    ):
        res = ks.cluster_file(folder / "X.npy", 5, embedding=embedding, init_size=2000, random_state=0)
        assert adjusted_rand_score(y, res.labels) >= 0.95, type(embedding).__name__


@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(n_clusters=1), r"'n_clusters' parameter of cluster_file must be an int in the range \[2, inf\)"),
        (dict(n_clusters=7000, label_column="label"), "n_clusters=7000 must be <= n_samples=6000"),
        (dict(n_clusters=7000, embedding="kjl", label_column="label"), "n_clusters=7000 must be <= n_samples=6000"),
        (dict(n_clusters=2, label_column="nope"), "no label column named 'nope'"),
        (dict(n_clusters=2, lloyd_passes=-1), "lloyd_passes"),
    ],
)
def test_cluster_bad_input(files, tmp_path, bad, match):
    folder, X, y = files
    out = tmp_path / "l.npy"
    with pytest.raises((ValueError, TypeError), match=match):
        ks.cluster_file(folder / "X.csv", output=out, **bad)
    assert not out.exists() and not any(p.name.endswith(".part") for p in tmp_path.iterdir())


def test_nan_late_in_the_file_leaves_no_output(tmp_path):
    X, _ = _blobs(n=3000)
    X[2900, 1] = np.nan
    np.save(tmp_path / "late_nan.npy", X)
    out = tmp_path / "labels.csv"
    out.write_text("previous\n")
    with pytest.raises(ValueError, match="row index 2900, column 2"):
        ks.cluster_file(
            tmp_path / "late_nan.npy", 3, embedding=None, output=out, force=True, init_size=500, block_rows=256
        )
    assert out.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.csv", "late_nan.npy"]


def test_empty_file(tmp_path):
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match=r"empty|no data"):
        ks.cluster_file(tmp_path / "empty.csv", 2)


def test_sigint_during_assignment_leaves_the_previous_output(tmp_path):
    X, _ = _blobs(n=400_000, d=4)
    np.save(tmp_path / "X.npy", X)
    out = tmp_path / "labels.npy"
    np.save(out, np.array([42]))
    script = textwrap.dedent(f"""
        import os, signal, threading, kernelsketch as ks
        from kernelsketch.out_of_core import drivers as out_of_core
        real = out_of_core.assign_block
        def slow(X, state):
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C arrives during the assignment pass
            return real(X, state)
        out_of_core.assign_block = slow
        try:
            ks.cluster_file({str(tmp_path / "X.npy")!r}, 3, embedding=None, output={str(out)!r}, force=True,
                            init_size=1000, block_rows=10000)
        except KeyboardInterrupt:
            print("interrupted")
    """)
    r = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"},
        **INTERRUPTIBLE,
    )
    assert "interrupted" in r.stdout, r.stderr
    assert np.load(out).tolist() == [42]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["X.npy", "labels.npy"]


def test_engine_for_arrays_refuses_column_options():
    with pytest.raises(TypeError, match="columns"):
        open_engine(np.zeros((3, 2)), label_column=0)


# -- the same job on Dask ----------------------------------------------------------------
@pytest.mark.distributed
def test_dask_cluster_equals_local(tmp_path):
    pytest.importorskip("distributed")
    from kernelsketch.distributed import connect

    X, y = _blobs(n=20_000, k=6, d=5, seed=5, std=1.5)
    np.save(tmp_path / "X.npy", np.column_stack([X, y]))
    kwargs = dict(label_column=5, init_size=4000, lloyd_passes=1, random_state=3)
    local = ks.cluster_file(tmp_path / "X.npy", 6, **kwargs)
    with connect(n_workers=2) as client:
        engine = open_engine(tmp_path / "X.npy", client=client, label_column=5, chunk_rows=3000)
        assert engine.X.numblocks[0] == 7  # one file, spread over the workers
        on_dask = ks.cluster_file(engine, 6, **{k: v for k, v in kwargs.items() if k != "label_column"})
        emb = ks.embed_file(
            tmp_path / "X.npy", None, ks.KernelJL(n_components=10, random_state=0), client=client, label_column=5
        )
    assert on_dask.fit.n_landmarks == local.fit.n_landmarks == 1000  # the spectral default's landmarks
    assert on_dask.fit.bandwidth is None and local.fit.bandwidth is None  # its local bandwidth
    assert adjusted_rand_score(local.labels, on_dask.labels) >= 0.999
    assert on_dask.rand_index == pytest.approx(local.rand_index, abs=1e-4)
    ref = ks.KernelJL(n_components=10, random_state=0).fit(X)
    np.testing.assert_allclose(emb.transform.embedding, ref.transform(X), rtol=1e-9, atol=1e-12)
    # what comes back is per-chunk statistics (the spectral fit's sparse m x m sums, 7 chunks), never blocks of rows
    assert engine.stats["tasks"] > 0 and engine.stats["bytes_to_client"] < 8e6


def test_the_driver_fits_by_the_declared_strategy(tmp_path):
    # issue 20: fit_source and Dask read each class's _fit_strategy, not a list of types
    from kernelsketch.out_of_core import fit_strategy

    declared = {name: fit_strategy(getattr(ks, name)()) for name in ks.estimators.estimator_locations()}
    assert declared == {
        "FrequentDirections": "sketch",
        "KernelJL": "landmarks",
        "KernelPCA": "sample",
        "LandmarkSpectralClustering": "embedding_then_sample",
        "LandmarkSpectralEmbedding": "landmarks_then_pass",
        "Nystroem": "landmarks",
        "NystroemKernelKMeans": "landmarks_then_sample",
        "MissingValueCodeImputer": "sample",
        "RFKPCA": "sketch",
        "RNCA": "sketch",
        "RandomFourierFeatures": "random_features",
        "StreamingKMeans": "sample",
        "StreamingKPCA": "sketch",
        "SubsampleKPCA": "landmarks",
    }
    X = np.random.default_rng(0).normal(size=(3000, 3))
    np.save(tmp_path / "X.npy", X)
    OnASample = type("OnASample", (ks.KernelJL,), {"_fit_strategy": "sample"})
    res = ks.fit_source(OnASample(n_components=4, n_landmarks=50, random_state=0), tmp_path / "X.npy", fit_rows=500)
    assert res.strategy == "sample" and res.fit_rows == 500
    Wrong = type("Wrong", (ks.KernelJL,), {"_fit_strategy": "telepathy"})
    with pytest.raises(ValueError, match="telepathy"):
        ks.fit_source(Wrong(n_components=4), tmp_path / "X.npy")


def test_the_engine_protocol_lists_everything_the_library_asks_of_an_engine():
    """Every ``engine.<name>`` (and ``getattr(engine, "<name>")``) in the library outside the engines
    themselves is declared by the Protocol, and both engines have it: the contract is what the code uses."""
    import re
    from pathlib import Path

    import kernelsketch
    from kernelsketch.out_of_core import Engine, LocalEngine

    da = pytest.importorskip("dask.array")
    from kernelsketch.distributed.engine import DaskEngine

    root = Path(kernelsketch.__file__).parent
    engines = {root / "out_of_core" / "engine.py", root / "distributed" / "engine.py"}
    used = set()
    for path in root.rglob("*.py"):
        if path in engines:
            continue
        text = path.read_text()
        used |= set(re.findall(r"(?<![\w.])engine\.([A-Za-z_]\w*)", text))  # (not distributed.engine.X)
        used |= set(re.findall(r"getattr\(engine, [\"']([A-Za-z_]\w*)[\"']", text))
    declared = set(Engine.__annotations__) | {n for n in vars(Engine) if not n.startswith("_")}
    assert {"reduce", "gather", "reservoir", "foreach", "n_rows"} <= used  # the scan sees the driver's calls
    assert used <= declared, f"asked of an engine but not in the Protocol: {sorted(used - declared)}"
    for engine in (open_engine(np.zeros((10, 3))), DaskEngine(da.zeros((10, 3), chunks=5))):
        missing = [n for n in used if not hasattr(engine, n)]
        assert not missing, (type(engine).__name__, missing)
    assert isinstance(open_engine(np.zeros((4, 2))), LocalEngine)


def test_both_engines_satisfy_the_engine_protocol():
    """The driver's contract (out_of_core.engine.Engine): the local engine and the Dask engine both answer it."""
    import inspect

    from kernelsketch.out_of_core import Engine, LocalEngine

    local = open_engine(np.zeros((10, 3)))
    assert isinstance(local, LocalEngine) and isinstance(local, Engine)
    assert not isinstance(object(), Engine)
    da = pytest.importorskip("dask.array")
    from kernelsketch.distributed.engine import DaskEngine

    dask_engine = DaskEngine(da.zeros((10, 3), chunks=5))
    assert isinstance(dask_engine, Engine)
    names = ("gather", "reservoir", "reduce", "stream_fit", "foreach", "set_preprocess", "describe")
    for name in (*names, "map", "release", "can_keep"):
        protocol = list(inspect.signature(getattr(Engine, name)).parameters)
        for engine in (LocalEngine, DaskEngine):
            mine = list(inspect.signature(getattr(engine, name)).parameters)
            assert mine[: len(protocol)] == protocol, (engine, name)
    # the Dask engine's reservoir: a seeded uniform sample of the rows, the same for a seed
    X = np.arange(40.0).reshape(20, 2)
    engine = DaskEngine(da.from_array(X, chunks=(7, 2)))
    a, _ = engine.reservoir(5, [1, 2])
    b, _ = engine.reservoir(5, [1, 2])
    np.testing.assert_array_equal(a, b)
    assert a.shape == (5, 2) and len({tuple(r) for r in a}) == 5 and all(tuple(r) in {tuple(x) for x in X} for r in a)


def test_every_clustering_path_seeds_k_means_through_one_step(tmp_path, monkeypatch):
    """ "Embed, then k-means on a sample" exists once (``StreamingKMeans.seed_on_sample``): the in-memory
    fit, ``fit_source`` of the clusterer and ``cluster_file`` (array and file) each call it once, with the
    same sample, so they give the same labels for a seed."""
    from kernelsketch.cluster import LandmarkSpectralClustering
    from kernelsketch.cluster.streaming_kmeans import StreamingKMeans

    rng = np.random.default_rng(5)
    X = np.concatenate([rng.normal(c, 0.3, size=(400, 3)) for c in (0.0, 3.0, 6.0)])
    np.save(tmp_path / "X.npy", X)
    calls = []
    original = StreamingKMeans.seed_on_sample

    def spy(self, n_rows, embedded_rows, rng):
        idx, sample = original(self, n_rows, embedded_rows, rng)
        calls.append((n_rows, idx.copy()))
        return idx, sample

    monkeypatch.setattr(StreamingKMeans, "seed_on_sample", spy)
    params = dict(n_landmarks=100, random_state=0)
    labels = [LandmarkSpectralClustering(3, **params).fit(X).labels_]
    fitted = ks.fit_source(LandmarkSpectralClustering(3, **params), tmp_path / "X.npy").estimator
    labels.append(fitted.predict(X))
    emb = ks.LandmarkSpectralEmbedding(n_components=3, **params)
    for data in (X, tmp_path / "X.npy"):
        labels.append(ks.cluster_file(data, 3, embedding=emb, standardize=False, random_state=0).labels)
    assert len(calls) == 4 and all(n == X.shape[0] for n, _ in calls)
    for _n, idx in calls[1:]:
        np.testing.assert_array_equal(idx, calls[0][1])  # the same seeding sample on every path
    for other in labels[1:]:
        np.testing.assert_array_equal(other, labels[0])


def test_a_pass_reads_the_next_block_while_the_current_one_is_worked_on():
    """A local engine's pass takes each block from its source on a thread while the block before is worked on
    (:func:`~kernelsketch.utils.threads.iter_prefetched`): the same blocks in order, the source's error raised at its
    block, and a pass stopped early waits for the block being read and closes the source's reader."""
    import threading

    from kernelsketch.utils.threads import iter_prefetched

    produced = [threading.Event() for _ in range(4)]
    closed = []

    def source(fail_at=None):
        try:
            for i in range(4):
                if i == fail_at:
                    raise ValueError(f"block {i}: value nan is not finite")
                produced[i].set()
                yield i, threading.get_ident()
        finally:
            closed.append(True)

    seen = []
    for i, reader in iter_prefetched(source()):
        if i + 1 < len(produced):  # (taken one after the other, this wait would time out)
            assert produced[i + 1].wait(5), f"block {i + 1} was not read while block {i} was worked on"
        assert reader != threading.get_ident()
        seen.append(i)
    assert seen == [0, 1, 2, 3] and closed == [True]

    seen.clear()
    with pytest.raises(ValueError, match="block 2: value nan"):
        for i, _ in iter_prefetched(source(fail_at=2)):
            seen.append(i)
    assert seen == [0, 1]

    closed.clear()
    blocks = iter_prefetched(source())
    assert next(blocks)[0] == 0
    blocks.close()  # (a caller that stopped after its first block: the reader is closed, nothing left running)
    assert closed == [True]
    assert not any(t.name.startswith("kernelsketch-read") for t in threading.enumerate())
