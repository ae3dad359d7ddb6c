"""Nothing silently wrong (issue 27, items 9, 16, 17): what the command line and the library write
is what they say, or a clear error.

Each test runs the command line as a user would (``main([...])``) or the library call it makes.
"""

import warnings

import numpy as np
import pytest

import kernelsketch as ks
from kernelsketch.cli.main import main


def test_label_files_are_one_dimensional_as_the_library_returns_them(tmp_path):
    X = np.random.default_rng(0).normal(size=(400, 3))
    X[200:] += 6
    np.save(tmp_path / "X.npy", X)
    assert main(["cluster", str(tmp_path / "X.npy"), "-k", "2", "-o", str(tmp_path / "labels.npy"), "-q"]) == 0
    labels = np.load(tmp_path / "labels.npy")
    assert labels.shape == (400,)
    np.testing.assert_array_equal(labels, ks.cluster_file(X, 2).labels)
    # an embedding of one column stays a column: only 1-D blocks make a 1-D file
    res = ks.transform_source(ks.Nystroem(n_landmarks=50, n_components=1, random_state=0).fit(X), X, tmp_path / "Z.npy")
    assert np.load(res.output).shape == (400, 1)


@pytest.mark.parametrize("method", ["spectral", "kjl", "kmeans"])
def test_more_clusters_than_distinct_rows_is_an_error_not_empty_clusters(tmp_path, method, capsys):
    X = np.repeat(np.array([[0.0, 0.0], [1.0, 1.0], [5.0, 5.0]]), 20, axis=0)
    np.save(tmp_path / "X.npy", X)
    out = tmp_path / "labels.npy"
    rc = main(["cluster", str(tmp_path / "X.npy"), "-k", "5", "--method", method, "-o", str(out), "-q"])
    err = capsys.readouterr().err
    assert rc == 1
    assert "distinct" in err or "duplicate" in err, err
    assert not out.exists()


def test_empty_clusters_found_after_the_sample_are_a_warning():
    # 3 distinct rows in 30,000, k-means sampled on 2,000 rows: the up-front check cannot see it
    X = np.repeat(np.array([[0.0, 0.0], [1.0, 1.0], [5.0, 5.0]]), 10_000, axis=0)
    with pytest.warns(ks.out_of_core.EmptyClusterWarning, match="clusters are empty"):
        res = ks.cluster_file(X, 4, embedding=None, init_size=2000)
    assert (res.cluster_sizes == 0).sum() >= 1


def test_an_embedding_that_would_be_nan_is_never_written(tmp_path):
    X = np.random.default_rng(0).normal(size=(300, 3))
    est = ks.Nystroem(n_landmarks=40, random_state=0).fit(X)
    est.projection_ = np.full_like(est.projection_, np.nan)  # a damaged model
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="NaN or infinite"):
            ks.transform_source(est, X, tmp_path / "Z.npy")
    assert not (tmp_path / "Z.npy").exists()


def test_standardizing_a_column_near_1e160_gives_its_true_scale_not_zeros(tmp_path):
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    X[:, 2] = 1e160 * (1.0 + 0.1 * rng.normal(size=3000))
    np.save(tmp_path / "X.npy", X)
    engine, scaler = ks.standardize_source(tmp_path / "X.npy", block_rows=700)  # several blocks: merges too
    ref = StandardScaler().fit(X / [1, 1, 1e160])  # the same data in units where nothing overflows
    np.testing.assert_allclose(scaler.mean_, ref.mean_ * [1, 1, 1e160], rtol=1e-12)
    np.testing.assert_allclose(scaler.scale_, ref.scale_ * [1, 1, 1e160], rtol=1e-10)
    Z = ks.embed_file(engine, None, ks.RandomFourierFeatures(8, bandwidth=1.0, random_state=0)).transform.embedding
    assert np.all(np.isfinite(Z))  # the engine hands the estimator standardized, finite rows


def test_standardize_auto_decides_from_column_maxima_then_scales_exactly(tmp_path, monkeypatch):
    from sklearn.preprocessing import StandardScaler

    from kernelsketch.out_of_core import standardize as st

    rng = np.random.default_rng(1)
    same_unit = rng.normal(size=(2500, 4)) * [1.0, 2.0, -3.0, 0.5]
    mixed = same_unit * [1.0, 1.0, 1.0, 400.0]
    calls = []
    moments = st.column_moments
    monkeypatch.setattr(st, "column_moments", lambda X, s: calls.append(1) or moments(X, s))
    for X in (same_unit, mixed):
        np.save(tmp_path / "X.npy", X)
        calls.clear()
        engine, scaler = ks.standardize_source(tmp_path / "X.npy", when="auto", block_rows=600)
        spread = st.magnitude_spread(np.abs(X).max(axis=0))  # the decision, from the data in memory
        if spread <= st.UNIT_SPREAD:
            assert scaler is None and not calls  # one pass of maxima, no moments read
        else:
            assert calls  # the moments read only for data that are standardized, and exactly
            ref = StandardScaler().fit(X)
            np.testing.assert_allclose(scaler.mean_, ref.mean_, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(scaler.scale_, ref.scale_, rtol=1e-12)
    assert (
        st.magnitude_spread(np.abs(same_unit).max(axis=0))
        <= st.UNIT_SPREAD
        < st.magnitude_spread(np.abs(mixed).max(axis=0))
    )


@pytest.mark.parametrize("n_rows", [1, 2, 3, 4095, 8193, 20001])
def test_column_magnitudes_are_the_columns_largest_absolute_values(n_rows):
    """The pass that decides ``standardize="auto"`` folds each block by halves on several threads: the same
    values as ``np.abs(X).max(axis=0)`` for any row count (odd halves, one row), integer columns, and a NaN
    (which propagates, as numpy's maximum does)."""
    from kernelsketch.out_of_core import column_statistics as st

    rng = np.random.default_rng(n_rows)
    X = rng.standard_t(2, size=(n_rows, 7)).astype(np.float32) * np.float32(1e3)
    n, absmax = st.column_absmax(X, None)
    assert n == n_rows and absmax.dtype == np.float64
    np.testing.assert_array_equal(absmax, np.abs(X).max(axis=0).astype(np.float64))
    ints = rng.integers(-50, 40, size=(n_rows, 3))
    np.testing.assert_array_equal(st.column_absmax(ints, None)[1], np.abs(ints).max(axis=0))
    X[n_rows // 2, 2] = np.nan
    absmax = st.column_absmax(X, None)[1]
    assert np.isnan(absmax[2]) and not np.isnan(np.delete(absmax, 2)).any()
