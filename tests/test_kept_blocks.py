"""Kept blocks (``rows.map(fn, keep=True)``): one nearest-landmark search per row, the fit pass's graph read back
by the later passes.

The kept graph must give exactly what a second search gives (the same labels, bit for bit), be read
in the order it was written, and leave nothing behind, also when the run fails.
"""

from __future__ import annotations

import glob
import os
import tempfile

import numpy as np
import pytest

import kernelsketch as ks
from kernelsketch.out_of_core.spilled_blocks import SpilledBlocks


def _blobs(n, d=5, k=4, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 4, (k, d))
    return (centers[rng.integers(0, k, n)] + rng.normal(0, 1, (n, d))).astype(dtype)


def _leftovers():
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "kernelsketch-graph-*")))


def test_blocks_come_back_in_the_order_they_were_written():
    rng = np.random.default_rng(0)
    blocks = [(rng.integers(0, 50, (n, 3)), rng.random((n, 3)), n % 2 == 0) for n in (5, 1, 7)]
    with SpilledBlocks() as store:
        for block in blocks:
            store.append(block)
        with pytest.raises(RuntimeError, match="after the pass"):
            next(store.blocks())
        with pytest.raises(ValueError, match="first block's arrays"):
            store.append((np.zeros((2, 4), np.int64), np.zeros((2, 3)), True))
        store.finish()
        assert store.rows == 13 and store.nbytes == 13 * 3 * (2 + 8)  # (indices below 50: int16 on disk)
        got = list(store.blocks())
        with pytest.raises(RuntimeError, match="one pass only"):
            store.append(blocks[0])
        folder = store.folder
    for want, back in zip(blocks, got, strict=True):
        np.testing.assert_array_equal(back[0], want[0])
        assert back[0].dtype == want[0].dtype  # (read back in the dtype given)
        np.testing.assert_array_equal(back[1], want[1])
        assert back[2] == want[2]
    assert not os.path.exists(folder)


@pytest.mark.parametrize("background", [True, False])
def test_integers_that_fit_are_stored_small_and_read_back_exactly(monkeypatch, background):
    monkeypatch.setattr(SpilledBlocks, "background", background)
    rng = np.random.default_rng(1)
    blocks = [(rng.integers(0, 32768, (n, 4)).astype(np.int32), rng.random((n, 4))) for n in (300, 2)]
    blocks[0][0][0, 0] = 32767  # the largest index int16 holds
    blocks.append((np.full((1, 4), 40000, np.int32), np.ones((1, 4))))  # one that does not fit: kept as int32
    with SpilledBlocks() as store:
        for block in blocks:
            store.append(block)
        store.finish()
        assert store.nbytes == 302 * 4 * (2 + 8) + 4 * (4 + 8)
        for (ind, w), (gi, gw) in zip(blocks, store.blocks(), strict=True):
            assert gi.dtype == np.int32
            np.testing.assert_array_equal(gi, ind)
            np.testing.assert_array_equal(gw, w)


def test_a_failed_background_write_is_raised_and_nothing_is_left(monkeypatch):
    def fail(self, arrays):
        raise OSError("No space left on device")

    monkeypatch.setattr(SpilledBlocks, "_write", fail)
    before = _leftovers()
    store = SpilledBlocks()
    with pytest.raises(OSError, match="No space left"), store:
        store.append((np.zeros((3, 2), np.int32), np.ones((3, 2))))  # written on the writer thread
        store.append((np.zeros((3, 2), np.int32), np.ones((3, 2))))  # the first write's failure surfaces here
        store.finish()
    assert _leftovers() == before


def test_ctrl_c_while_closing_still_removes_the_folder(monkeypatch):
    store = SpilledBlocks()
    store.append((np.zeros((3, 2), np.int32), np.ones((3, 2))))

    def interrupted(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(SpilledBlocks, "_wait", interrupted)  # Ctrl-C while a write is awaited
    with pytest.raises(KeyboardInterrupt):
        store.close()
    assert not os.path.exists(store.folder)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("lloyd_passes", [0, 1])
def test_the_kept_graph_gives_the_labels_of_a_second_search(tmp_path, dtype, lloyd_passes):
    X = _blobs(6000, dtype=dtype)
    np.save(tmp_path / "X.npy", X)
    before = _leftovers()
    kw = dict(init_size=1000, lloyd_passes=lloyd_passes, block_rows=700, random_state=0)
    searched = ks.cluster_file(tmp_path / "X.npy", 4, keep_graph=False, **kw)
    kept = ks.cluster_file(tmp_path / "X.npy", 4, keep_graph=True, **kw)
    np.testing.assert_array_equal(kept.labels, searched.labels)
    assert kept.inertia == searched.inertia and kept.passes == searched.passes
    np.testing.assert_array_equal(kept.kmeans.cluster_centers_, searched.kmeans.cluster_centers_)
    assert _leftovers() == before  # the temporary folder is gone


def test_the_assignment_pass_does_not_search_again(tmp_path, monkeypatch):
    from kernelsketch.kernels import search as searchers

    X = _blobs(5000)
    calls = []

    def counting(real):
        def search(Q, L, r, *args, **kw):
            calls.append(Q.shape[0])
            return real(Q, L, r, *args, **kw)

        return search

    for name in ("nearest", "approximate_nearest"):  # (search="auto": the approximate one for these 2 columns)
        monkeypatch.setattr(searchers, name, counting(getattr(searchers, name)))
    ks.cluster_file(X, 4, init_size=800, block_rows=1000, keep_graph=True, random_state=0)
    with_cache = sum(calls)
    calls.clear()
    ks.cluster_file(X, 4, init_size=800, block_rows=1000, keep_graph=False, random_state=0)
    # without: every row is searched twice (fit and assignment) plus the k-means sample; with: once plus the sample
    assert sum(calls) - with_cache == 5000
    assert with_cache == 5000 + 800


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_a_failed_or_interrupted_run_removes_the_kept_graph(tmp_path, monkeypatch, error):
    from kernelsketch.maps.landmark_graph import LandmarkGraph

    X = _blobs(3000)
    before = _leftovers()
    seen = []

    def boom(*args, **kwargs):
        seen.append(_leftovers() - before)  # the kept graph exists while the assignment pass runs
        raise error("disk on fire")

    monkeypatch.setattr(LandmarkGraph, "assign_graph", boom)
    with pytest.raises(error, match="disk on fire"):  # (Ctrl-C is a KeyboardInterrupt in the main thread)
        ks.cluster_file(X, 3, init_size=500, keep_graph=True, random_state=0)
    assert seen and len(seen[0]) == 1
    assert _leftovers() == before


@pytest.mark.parametrize("labelled", [False, True])
def test_the_assignment_pass_does_not_read_the_file_again_labelled_or_not(tmp_path, monkeypatch, labelled):
    X = _blobs(5000, dtype=np.float32)
    y = (X[:, 0] > 0).astype(int)
    if labelled:
        path = tmp_path / "X.csv"
        np.savetxt(path, np.column_stack([X, y]), delimiter=",", header="a,b,c,d,e,label", comments="")
        kw = dict(label_column="label")
    else:
        path = tmp_path / "X.npy"
        np.save(path, X)
        kw = {}
    passes = []
    cls = type(ks.io.open_matrix(path, **kw))
    original = cls.iter_blocks

    def counting(self, *a, **k):
        passes.append(1)
        return original(self, *a, **k)

    monkeypatch.setattr(cls, "iter_blocks", counting)
    common = dict(init_size=800, block_rows=700, random_state=0, standardize=False, **kw)
    kept = ks.cluster_file(path, 4, keep_graph=True, **common)
    reads_kept = len(passes)
    passes.clear()
    searched = ks.cluster_file(path, 4, keep_graph=False, **common)
    np.testing.assert_array_equal(kept.labels, searched.labels)  # the same labels either way
    assert kept.labels.dtype == searched.labels.dtype
    # the assignment pass reads the kept graph alone, the labels kept beside it: one pass of the file fewer
    assert reads_kept == len(passes) - 1
    if labelled:
        assert kept.adjusted_rand_index == searched.adjusted_rand_index is not None


def test_keep_graph_is_refused_where_it_cannot_serve():
    X = _blobs(300)
    with pytest.raises(ValueError, match="'keep_graph' parameter of cluster_file"):
        ks.cluster_file(X, 3, keep_graph="yes")
    with pytest.raises(ValueError, match="keeps the spectral embedding's graph"):
        ks.cluster_file(X, 3, embedding="kjl", keep_graph=True)
    with pytest.raises(ValueError, match="keep_graph keeps the graph"):
        ks.fit_source(ks.KernelJL(n_components=4, random_state=0), X, keep_graph=True)


def test_a_killed_runs_kept_graph_folder_is_removed_by_the_next_run(tmp_path):
    # issue 53 item 11: after SIGKILL the kernelsketch-graph-* folder stayed in TMPDIR forever
    import subprocess
    import sys

    code = (
        "import os, signal, numpy as np\n"
        "from kernelsketch.out_of_core.spilled_blocks import SpilledBlocks\n"
        f"c = SpilledBlocks(dir={str(tmp_path)!r})\n"
        "c.append((np.zeros((3, 2), np.int32), np.ones((3, 2))))\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=False)
    left = [p for p in tmp_path.iterdir() if p.name.startswith("kernelsketch-graph-")]
    assert len(left) == 1  # what the killed run left
    unrelated = tmp_path / "kernelsketch-graph-notapid"
    unrelated.mkdir()
    with SpilledBlocks(dir=tmp_path) as cache:
        live = [p for p in tmp_path.iterdir() if p.name.startswith("kernelsketch-graph-")]
        assert not left[0].exists() and unrelated.exists()  # the dead run's folder gone, nothing else touched
        assert [p.name for p in live if p != unrelated] == [os.path.basename(cache.folder)]
