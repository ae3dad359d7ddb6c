"""Quick runs of the Kernel JL paper's reproductions: outputs, table shapes, and the robust claims."""

import csv
import json

import numpy as np
import pytest

from kernelsketch.datasets import DatasetNotFoundError, load_dataset
from kernelsketch.experiments import get_reproduction
from kernelsketch.experiments import kernel_jl as kjl


def _read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _check_outputs(out, tables, figures):
    for t in tables:
        assert (out / f"{t}.csv").is_file() and (out / f"{t}.md").is_file()
    for f in figures:
        assert (out / f"{f}.png").stat().st_size > 1000
    meta = json.loads((out / "params.json").read_text())
    assert meta["params"]["quick"] is True and meta["params"]["seed"] == 0


def _iot_available():
    try:
        load_dataset("iot")
    except DatasetNotFoundError:
        return False
    return True


@pytest.fixture(scope="module")
def fig1(tmp_path_factory):
    out = tmp_path_factory.mktemp("kjl-figure1")
    return out, kjl.figure1(out, quick=True, progress=False)


@pytest.fixture(scope="module")
def tab2(tmp_path_factory):
    out = tmp_path_factory.mktemp("kjl-table2")
    return out, kjl.table2(out, quick=True, progress=False)


def test_registry_points_here():
    for name, func in [
        ("kjl-figure1", kjl.figure1),
        ("kjl-table2", kjl.table2),
        ("kjl-figure2", kjl.figure2),
        ("kjl-theorem1", kjl.theorem1),
    ]:
        assert get_reproduction(name) is func


@pytest.mark.slow
def test_figure1_quick(fig1, capsys):
    out, result = fig1
    _check_outputs(out, ["figure1"], ["figure1"])
    rows = _read_csv(out / "figure1.csv")
    assert len(rows) == 8  # 2 datasets x (raw, K-JL, subsample KPCA, exact KPCA)
    acc = {(r["dataset"], r["representation"].split(" (")[0]): r for r in rows}
    for ds in ("Cluster in Cluster", "Crescent Full Moon"):
        raw = float(acc[(ds, "raw data")]["linear_accuracy_mean"])
        assert raw < 0.8  # nested groups: not linearly separable
        assert float(acc[(ds, "subsample KPCA")]["linear_accuracy_min"]) > 0.95
        assert float(acc[(ds, "exact KPCA")]["linear_accuracy_min"]) > 0.95
        # K-JL is a random 2-D view of the centred feature space: far better than raw in typical
        # draws (not in every one: the full run has a worst draw of .59 on Cluster in Cluster)
        assert float(acc[(ds, "K-JL")]["linear_accuracy_median"]) > raw + 0.2
        assert float(acc[(ds, "K-JL")]["linear_accuracy_mean"]) > raw + 0.1
    assert float(acc[("Cluster in Cluster", "K-JL")]["linear_accuracy_median"]) > 0.95
    assert "linear_accuracy_mean" in result["tables"]["figure1"][0]


@pytest.mark.slow
def test_table2_quick(tab2):
    out, result = tab2
    _check_outputs(out, ["table2", "table2_layout"], [])
    rows = _read_csv(out / "table2.csv")
    present = ["Avila Bible", "Bank Notes"] + (["IoT"] if _iot_available() else [])
    assert sorted({r["dataset"] for r in rows}) == sorted(present)
    assert len(rows) == (4 + len(kjl.READINGS)) * len(present)
    assert set(rows[0]) >= {
        "method",
        "rand_mean",
        "rand_std",
        "paper_rand_mean",
        "diff",
        "welch_p",
        "consistent_5pct",
        "time_mean_s",
        "paper_time_s",
    }
    layout = _read_csv(out / "table2_layout.csv")
    assert [r["dataset"] for r in layout] == ["Avila Bible", "IoT", "Bank Notes"]
    assert list(layout[0]) == ["dataset", "k-means", "K-k-means", "KPCA", "K-JL"]
    by = {(r["dataset"], r["method"]): r for r in rows}
    # k-means rows have no mapping time, like the paper's NA
    assert by[("Avila Bible", "k-means")]["time_mean_s"] == "NA"
    assert float(by[("Avila Bible", "K-JL")]["time_mean_s"]) > 0
    # Bank Notes (full data even in quick mode): k-means (nearly deterministic there) is consistent with the
    # paper's 30 runs by Welch's test; 3 runs of the unstable kernel methods are too few to test (the full
    # run's 30 are in docs/results/kernel_jl.md)
    assert by[("Bank Notes", "k-means")]["consistent_5pct"] == "True", by[("Bank Notes", "k-means")]
    for m in (*kjl.METHODS, *kjl.READINGS):
        assert 0.0 <= float(by[("Bank Notes", m)]["welch_p"]) <= 1.0
    # Avila: the kernel embeddings cluster the scribes better than k-means on the raw features
    km = float(by[("Avila Bible", "k-means")]["rand_mean"])
    for m in ("K-k-means", "KPCA"):
        assert float(by[("Avila Bible", m)]["rand_mean"]) > km + 0.005
    for r in rows:
        assert 0.4 < float(r["rand_mean"]) < 0.9
    if not _iot_available():
        assert any("IoT" in n and "not available" in n for n in result["notes"])


def test_welch_test_against_the_papers_summary():
    rng = np.random.default_rng(0)
    same = rng.normal(0.70, 0.01, 30)
    assert kjl._welch_p(same, 0.70, 0.01, 30) > 0.05
    assert kjl._welch_p(same + 0.02, 0.70, 0.01, 30) < 1e-6  # 2 standard deviations off with 30 runs each
    from scipy.stats import ttest_ind

    other = rng.normal(0.71, 0.02, 30)
    assert kjl._welch_p(same, other.mean(), other.std(ddof=1), 30) == pytest.approx(
        ttest_ind(same, other, equal_var=False).pvalue, rel=1e-10
    )


def test_subsample_kpca_paper_map_is_the_literal_formula():
    from kernelsketch.decomposition import SubsampleKPCA
    from kernelsketch.kernels import pairwise_kernel

    X = np.random.default_rng(0).normal(size=(300, 3))
    paper = SubsampleKPCA(n_components=4, n_landmarks=50, scaling="paper", bandwidth=2.0, random_state=0).fit(X)
    kpca = SubsampleKPCA(n_components=4, n_landmarks=50, bandwidth=2.0, random_state=0).fit(X)
    K = pairwise_kernel(X, paper.landmarks_, bandwidth=2.0)
    literal = K @ paper.eigenvectors_  # sum_j alpha_j K(x, x_j), unit-norm alpha
    Z = paper.transform(X)
    # equal up to one constant per coordinate (the centring), which k-means ignores
    np.testing.assert_allclose(Z - Z.mean(axis=0), literal - literal.mean(axis=0), atol=1e-10)
    np.testing.assert_allclose(Z, kpca.transform(X) * np.sqrt(kpca.eigenvalues_), atol=1e-10)


def test_table2_missing_dataset_is_reported_not_raised(tmp_path):
    if _iot_available():
        pytest.skip("the IoT files are present")
    result = kjl.table2(tmp_path, quick=True, datasets=("iot",), progress=False)
    assert result["tables"]["table2"] == []
    assert "not available" in (tmp_path / "table2_layout.md").read_text()


def test_kkmeans_labels_come_from_the_same_map_that_is_timed():
    # _cluster_once scores NystroemKernelKMeans but times a separately fitted Nystroem map: they must agree
    from kernelsketch.cluster import NystroemKernelKMeans

    X, y, k = kjl._load_clustering_set("banknote", True)
    idx = np.arange(0, X.shape[0], 7)
    h = kjl._subsample_bandwidth(X, idx)
    est = NystroemKernelKMeans(
        n_clusters=k, n_components=20, landmarks=X[idx], bandwidth=h, n_init=1, random_state=0
    ).fit(X)
    E = kjl._make_map("K-k-means", 20, X[idx], h, 1).fit(X).transform(X)
    np.testing.assert_allclose(np.abs(est.transform(X)), np.abs(E), rtol=1e-8, atol=1e-10)


def test_subsample_bandwidth_is_the_exact_percentile():
    from scipy.spatial.distance import pdist

    X = np.random.default_rng(0).normal(size=(50, 3))
    idx = np.arange(10, 40)
    assert kjl._subsample_bandwidth(X, idx) == pytest.approx(np.percentile(pdist(X[10:40]), 25))


def test_slope_fit():
    x = np.array([10.0, 100.0, 1000.0])
    assert kjl._slope(x, 3 * x**-0.5) == pytest.approx(-0.5)


@pytest.mark.slow
def test_figure2_quick(tmp_path):
    result = kjl.figure2(tmp_path, quick=True, progress=False)
    _check_outputs(tmp_path, ["figure2"], ["figure2"])
    rows = _read_csv(tmp_path / "figure2.csv")
    p = result["params"]
    assert len(rows) == 1 + 3 * (len(p["d_values"]) + len(p["n_values"]))
    assert rows[0]["method"] == "k-means"
    assert {r["method"] for r in rows[1:]} == {"K-k-means", "KPCA", "K-JL"}
    assert all(r["vary"] in ("d", "n") for r in rows[1:])
    assert all(0.4 < float(r["rand_mean"]) < 0.9 for r in rows)


@pytest.mark.slow
def test_theorem1_quick(tmp_path):
    result = kjl.theorem1(tmp_path, quick=True, progress=False)
    _check_outputs(tmp_path, ["theorem1", "theorem1_slopes"], ["theorem1"])
    slopes = {(r["vary"], r["quantity"]): float(r["fitted_slope"]) for r in _read_csv(tmp_path / "theorem1_slopes.csv")}
    assert -0.8 <= slopes[("d", "sup_error_vs_Sigma_n")] <= -0.2  # Theorem 1: d^{-1/2}
    assert -1.0 <= slopes[("n", "sampling_error_d_inf")] <= -0.2  # Theorem 1: n^{-1/2}
    rows = result["tables"]["theorem1"]
    assert len(rows) == len(result["params"]["d_values"]) + 2 * len(result["params"]["n_values"])
    assert all(np.isfinite(r["error_mean"]) and r["error_mean"] > 0 for r in rows)
