"""Missing-value codes read as their column's median (kernelsketch.replace_missing_codes, cluster_file's default)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.impute import SimpleImputer
from sklearn.metrics import adjusted_rand_score

import kernelsketch as ks
from kernelsketch.diagnostics import MissingValueCodeWarning, missing_value_codes
from kernelsketch.out_of_core import CODE_CHECK_ROWS, open_engine


def _pressure(n=1500, seed=0, code=0.0, every=15):
    """A blood pressure with a code every ``every``-th row, and two clean columns in other units."""
    rng = np.random.default_rng(seed)
    X = np.c_[np.round(rng.normal(72, 12, n)), rng.normal(0.0, 0.01, (n, 2))]
    X[::every, 0] = code
    return X


def _imputed(X, column, code):
    Xi = X.copy()
    Xi[:, [column]] = SimpleImputer(missing_values=code, strategy="median").fit_transform(X[:, [column]])
    return Xi


def test_the_engine_reads_each_code_as_simpleimputers_median_and_the_input_is_untouched():
    X = _pressure(code=-999.0)
    before = X.copy()
    with pytest.warns(MissingValueCodeWarning, match=r"column 0: 100 rows hold -999.*read as its column's median"):
        engine, codes = ks.replace_missing_codes(X)
    assert [(c["column"], c["value"], c["rows"], c["replaced"]) for c in codes] == [(0, -999.0, 100, True)]
    read = engine.gather(np.arange(X.shape[0]))[0]
    np.testing.assert_array_equal(read, _imputed(X, 0, -999.0))  # every row in the sample: exactly sklearn's
    blocks = engine.reduce(lambda B, _: B, np.concatenate, desc="read")
    np.testing.assert_array_equal(blocks, read)
    np.testing.assert_array_equal(X, before)  # a copy per block: the caller's array is never written


def test_warn_leaves_the_rows_as_they_are_none_does_not_look_and_sparse_is_not_checked():
    X = _pressure()
    with pytest.warns(MissingValueCodeWarning, match="replace the codes before clustering"):
        engine, codes = ks.replace_missing_codes(X, action="warn")
    assert codes[0]["replaced"] is False and codes[0]["replacement"] == np.median(X[X[:, 0] != 0, 0])
    np.testing.assert_array_equal(engine.gather(np.arange(10))[0], X[:10])
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingValueCodeWarning)
        assert ks.replace_missing_codes(X, action=None)[1] == []
        assert ks.replace_missing_codes(sp.csr_matrix(X))[1] == []  # implicit zeros are values
        assert ks.replace_missing_codes(np.random.default_rng(0).normal(size=(500, 3)))[1] == []  # clean
    for bad in ("median", True):
        with pytest.raises(ValueError, match="missing_codes must be 'impute', 'warn', 'off' or None"):
            ks.replace_missing_codes(X, action=bad)
    with pytest.raises(ValueError, match="'missing_codes' parameter of cluster_file"):
        ks.cluster_file(X, 2, missing_codes="drop")
    with warnings.catch_warnings():  # "off", the command line's word, is accepted from Python too (#54 item 5)
        warnings.simplefilter("error", MissingValueCodeWarning)
        assert ks.replace_missing_codes(X, action="off")[1] == []
        assert ks.cluster_file(X, 2, missing_codes="off", random_state=0).missing_codes == []


def test_a_large_source_is_checked_on_a_seeded_uniform_sample():
    n = 3 * CODE_CHECK_ROWS
    rng = np.random.default_rng(3)
    X = np.c_[np.round(rng.normal(72, 12, n)), rng.normal(size=n)]
    X[n - n // 4 :: 40, 0] = 999.0  # codes only in the last quarter: a head would miss them
    with pytest.warns(MissingValueCodeWarning):
        _, codes = ks.replace_missing_codes(X, random_state=7)
    with pytest.warns(MissingValueCodeWarning):
        _, again = ks.replace_missing_codes(X, random_state=7)
    assert codes == again and codes[0]["value"] == 999.0
    assert 0 < codes[0]["rows"] < (X[:, 0] == 999.0).sum()  # counted in the 5,000-row sample, not all rows


def test_a_text_file_gives_the_codes_and_rows_an_npy_file_gives(tmp_path):
    X = _pressure(n=900)
    np.save(tmp_path / "x.npy", X)
    np.savetxt(tmp_path / "x.csv", X, delimiter=",", header="pressure,a,b", comments="")
    with pytest.warns(MissingValueCodeWarning):
        e1, c1 = ks.replace_missing_codes(tmp_path / "x.npy")
    with pytest.warns(MissingValueCodeWarning):
        e2, c2 = ks.replace_missing_codes(tmp_path / "x.csv")
    assert [c2[0].pop("name")] == ["pressure"]  # (the text file's header names the column)
    assert c1 == c2 and e2.n_rows == 900  # the text file's one pass counted its rows
    np.testing.assert_allclose(e1.gather(np.arange(900))[0], e2.gather(np.arange(900))[0])


def test_local_preprocessing_composes_in_the_order_set():
    engine = open_engine(np.arange(6.0).reshape(3, 2))
    engine.set_preprocess(lambda X: X + 1)
    engine.set_preprocess(lambda X: X * 10)
    np.testing.assert_array_equal(engine.gather(np.arange(3))[0], (np.arange(6.0).reshape(3, 2) + 1) * 10)


@pytest.mark.parametrize("embedding", ["spectral", None])
def test_cluster_file_clusters_the_imputed_rows(embedding):
    """Imputation when asked equals clustering the SimpleImputer-imputed data."""
    X = _pressure()
    with pytest.warns(MissingValueCodeWarning, match="read as its column's median"):
        res = ks.cluster_file(X, 2, embedding=embedding, random_state=0, missing_codes="impute")
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingValueCodeWarning)
        ref = ks.cluster_file(_imputed(X, 0, 0.0), 2, embedding=embedding, random_state=0, missing_codes=None)
    np.testing.assert_array_equal(res.labels, ref.labels)
    assert res.to_dict()["missing_value_codes"] == [
        {"column": 0, "value": 0.0, "rows": 100, "replacement": 72.0, "replaced": True}
    ]
    if embedding == "spectral":
        assert res.scaler is not None and res.scaler.mean_[0] == pytest.approx(_imputed(X, 0, 0.0)[:, 0].mean())


def _zero_inflated(n=3000, seed=0):
    """Customers: 30% spent nothing (genuine zeros), the rest 10-40; a category column coded 1-5 and 99 ("other")."""
    rng = np.random.default_rng(seed)
    spent = np.where(rng.random(n) < 0.3, 0.0, np.round(rng.uniform(10, 40, n)))
    category = np.where(rng.random(n) < 0.1, 99.0, rng.integers(1, 6, n).astype(np.float64))
    return np.column_stack([spent, category, rng.normal(size=n)])


@pytest.mark.parametrize("embedding", ["spectral", None])
def test_by_default_values_that_look_like_codes_are_named_and_left_as_given(embedding):
    """A column of genuine zeros and a category code 99 look like missing-value codes: the default warns,
    says how to impute, and clusters exactly the rows it was given."""
    X = _zero_inflated()
    before = X.copy()
    with pytest.warns(MissingValueCodeWarning, match=r"--missing-codes impute") as record:
        res = ks.cluster_file(X, 3, embedding=embedding, random_state=0)
    assert "column 0" in str(record[0].message)
    assert res.missing_codes and not any(c["replaced"] for c in res.missing_codes)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingValueCodeWarning)
        untouched = ks.cluster_file(X, 3, embedding=embedding, random_state=0, missing_codes=None)
    np.testing.assert_array_equal(res.labels, untouched.labels)
    np.testing.assert_array_equal(X, before)


@pytest.mark.data
def test_diabetes_codes_kept_by_default_and_imputed_when_asked_beat_raw_kmeans():
    """Pima diabetes' 0 = "not measured" (5 columns): kept (the default), its 35 blood-pressure-0 rows are the
    small cluster; imputed when asked, the ARI passes raw k-means'."""
    from sklearn.cluster import KMeans

    from kernelsketch.datasets import load_dataset
    from kernelsketch.datasets._testing import require_shared_data

    require_shared_data("diabetes")
    X, y = load_dataset("diabetes")
    X = np.asarray(X, dtype=np.float64)
    with pytest.warns(MissingValueCodeWarning, match=r"column 2: 35 rows hold 0"):
        kept = ks.cluster_file(X, 2, random_state=0).labels
    small = np.argmin(np.bincount(kept))
    assert set(np.flatnonzero(kept == small)) == set(np.flatnonzero(X[:, 2] == 0))
    with pytest.warns(MissingValueCodeWarning, match="read as its column's median"):
        res = ks.cluster_file(X, 2, random_state=0, missing_codes="impute")
    assert {c["column"] for c in res.missing_codes} == {1, 2, 3, 4, 5} and min(res.cluster_sizes) > 100
    raw = adjusted_rand_score(y, KMeans(2, n_init=10, random_state=0).fit_predict(X))
    assert adjusted_rand_score(y, res.labels) > raw > adjusted_rand_score(y, kept)


def test_the_cli_warns_by_default_imputes_when_asked_and_off_turns_it_off(tmp_path):
    np.save(tmp_path / "x.npy", _pressure())
    cmd = [sys.executable, "-m", "kernelsketch.cli", "cluster", str(tmp_path / "x.npy"), "-k", "2"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "MissingValueCodeWarning" in done.stderr and "--missing-codes impute" in done.stderr
    assert "read as their column's median: column 0" not in done.stdout + done.stderr
    imputed = subprocess.run([*cmd, "--missing-codes", "impute"], capture_output=True, text=True, check=False)
    assert imputed.returncode == 0, imputed.stderr
    assert "read as their column's median: column 0: 0 -> 72" in imputed.stdout + imputed.stderr
    off = subprocess.run([*cmd, "--missing-codes", "off"], capture_output=True, text=True, check=False)
    assert off.returncode == 0 and "MissingValueCodeWarning" not in off.stderr
    bad = subprocess.run([*cmd, "--missing-codes", "drop"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "--missing-codes" in bad.stderr


@pytest.mark.distributed
def test_dask_imputes_the_same_codes_and_gives_the_same_labels(tmp_path):
    pytest.importorskip("distributed")
    from kernelsketch.distributed import connect

    X = _pressure(n=6000, every=25)
    np.save(tmp_path / "x.npy", X)
    with pytest.warns(MissingValueCodeWarning):
        local = ks.cluster_file(tmp_path / "x.npy", 3, random_state=1, missing_codes="impute")
    with connect(n_workers=2) as client, pytest.warns(MissingValueCodeWarning):
        on_dask = ks.cluster_file(
            tmp_path / "x.npy", 3, random_state=1, client=client, chunk_rows=1000, missing_codes="impute"
        )
    assert on_dask.missing_codes == local.missing_codes
    assert adjusted_rand_score(local.labels, on_dask.labels) >= 0.999


@pytest.mark.distributed
def test_dask_reads_an_integer_columns_code_as_the_same_fractional_median_as_local():
    """A median between two integers (74.5) is kept as such on Dask, not cast back to the column's int64."""
    pytest.importorskip("dask")
    import dask.array as da

    rng = np.random.default_rng(0)
    col = np.concatenate([np.zeros(100), np.repeat(np.arange(60, 90), 60)]).astype(np.int64)
    X = np.column_stack([rng.permutation(col), rng.integers(0, 50, col.size)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingValueCodeWarning)
        local, codes = ks.replace_missing_codes(X, action="impute")
        on_dask, dask_codes = ks.replace_missing_codes(da.from_array(X, chunks=500), action="impute")
    assert codes[0]["replacement"] == dask_codes[0]["replacement"] == 74.5
    idx = np.flatnonzero(X[:, 0] == 0)
    a, b = local.gather(idx)[0], on_dask.gather(idx)[0]
    assert (a[:, 0] == 74.5).all() and (b[:, 0] == 74.5).all()
    np.testing.assert_array_equal(a, b)


def test_a_real_zero_at_the_edge_of_a_continuous_column_is_not_a_code():
    """#54 item 6: statlog's column 6 (a standard deviation) holds 0 in 49 rows next to readings from 0.0185 up
    (IQR 1.43): a spike, but inside the readings' own scale, so not reported; an insulin-like 0 far below its
    readings in half the rows still is."""
    rng = np.random.default_rng(0)
    sd = np.concatenate([np.zeros(49), 0.0185 + rng.gamma(0.7, 1.6, size=2261)])
    assert missing_value_codes(sd[:, None]) == []
    insulin = np.concatenate([np.zeros(370), np.round(14 + rng.gamma(2.0, 60.0, size=400))])
    assert [(c["value"], c["rows"]) for c in missing_value_codes(insulin[:, None])] == [(0.0, 370)]


def test_the_warning_names_the_column_by_its_header(tmp_path):
    X = _pressure()
    pd = pytest.importorskip("pandas")
    names = ["pressure"] + [f"c{j}" for j in range(1, X.shape[1])]
    pd.DataFrame(X, columns=names).to_csv(tmp_path / "p.csv", index=False)
    with pytest.warns(MissingValueCodeWarning, match="column 'pressure': "):
        ks.cluster_file(str(tmp_path / "p.csv"), 2, random_state=0)
