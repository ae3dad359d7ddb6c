"""One recipe over one row source (#64): the in-memory fit and the drivers run the same ``fit_rows``, and a run reads
its file no more often than its passes need."""

from __future__ import annotations

import numpy as np
import pytest

import kernelsketch as ks
from kernelsketch.cluster import LandmarkSpectralClustering
from kernelsketch.maps import LandmarkSpectralEmbedding
from kernelsketch.utils.row_source import ArrayRows


def _blobs(n, d=4, k=3, seed=0, scale=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(0, 4, (k, d))[rng.integers(0, k, n)] + rng.normal(0, 1, (n, d))
    if scale is not None:
        X = X * np.asarray(scale)
    return X


def test_fit_and_the_drivers_run_the_one_fit_rows(tmp_path, monkeypatch):
    seen = []
    for cls in (LandmarkSpectralClustering, LandmarkSpectralEmbedding):
        real = cls.fit_rows

        def spy(self, rows, *, keep_graph=False, real=real, cls=cls):
            seen.append((cls.__name__, type(rows).__name__, keep_graph))
            return real(self, rows, keep_graph=keep_graph)

        monkeypatch.setattr(cls, "fit_rows", spy)
    X = _blobs(1500)
    np.save(tmp_path / "X.npy", X)
    mem = LandmarkSpectralClustering(3, n_landmarks=200, random_state=0).fit(X)
    assert seen == [("LandmarkSpectralClustering", "ArrayRows", True), ("LandmarkSpectralEmbedding", "ArrayRows", True)]
    seen.clear()
    emb = LandmarkSpectralEmbedding(n_landmarks=200)
    run = ks.cluster_file(tmp_path / "X.npy", 3, embedding=emb, random_state=0, init_size=500)
    assert [s[0] for s in seen] == ["LandmarkSpectralClustering", "LandmarkSpectralEmbedding"]
    assert all(s[1] == "_Counted" for s in seen)  # (the engine, its gathered rows counted for FitResult.fit_rows)
    # the same method on another source: the same model and labels
    again = ks.cluster_file(X, 3, embedding=emb, random_state=0)
    np.testing.assert_array_equal(again.labels, mem.labels_)
    assert run.clusterer.embedding_.landmarks_.shape == mem.embedding_.landmarks_.shape


@pytest.mark.parametrize("scale", [None, [1.0, 1.0, 1000.0, 1000.0]])
def test_a_file_is_read_at_most_twice(tmp_path, monkeypatch, scale):
    """No label column: a pass for the scaling (maxima, and with them the moments when the inspection sample's
    magnitudes already differ) and the fit pass; the assignment reads the kept graph, not the file."""
    X = _blobs(6000, scale=scale).astype(np.float32)
    path = tmp_path / "X.npy"
    np.save(path, X)
    passes = []
    cls = type(ks.io.open_matrix(path))
    original = cls.iter_blocks

    def counting(self, *a, **k):
        passes.append(1)
        return original(self, *a, **k)

    monkeypatch.setattr(cls, "iter_blocks", counting)
    res = ks.cluster_file(path, 3, init_size=1000, block_rows=1000, random_state=0)
    assert (res.scaler is not None) == (scale is not None)
    assert len(passes) == 2


def test_the_in_memory_rows_fold_as_an_engine_does():
    X = _blobs(1000)
    rows = ArrayRows(X, block_rows=300)
    assert rows.reduce(lambda B, _: B.shape[0], sum) == 1000
    kept = rows.map(lambda B, _: B.sum(axis=1), keep=True)
    first = kept.reduce(lambda s, _: s, lambda parts: np.concatenate(parts))
    second = kept.reduce(lambda s, _: s, lambda parts: np.concatenate(parts))
    np.testing.assert_array_equal(first, X.sum(axis=1))
    np.testing.assert_array_equal(second, first)
    kept.release()


@pytest.mark.parametrize(
    "y",
    [
        np.array(["b", "a", "ccc", "a", "b", "dd"] * 50),
        np.arange(300) % 7,
        np.array([None, "x", 3, "x", None, 3.5] * 50, dtype=object),
    ],
    ids=["strings", "integers", "mixed"],
)
def test_kept_blocks_give_back_the_labels_without_reading_the_rows_again(y, tmp_path):
    X = _blobs(300)
    for rows in (ArrayRows(X, y, block_rows=70), ks.out_of_core.open_engine(X, y=y, block_rows=70)):
        kept = rows.map(lambda B, _: B.sum(axis=1), keep=True)
        kept.reduce(lambda s, _: s.shape[0], sum)  # (the first pass keeps the blocks and their labels)
        passes = rows.stats["passes"]
        back = []
        kept.foreach(lambda s, _: s, lambda s, labels, back=back: back.append(labels))
        assert rows.stats["passes"] == passes + 1  # (one pass of the kept blocks, none of the rows)
        assert np.concatenate(back).tolist() == y.tolist()
        kept.release()
