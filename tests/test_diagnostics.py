"""diagnose: its numbers against exact computations on small data, its report, its command."""

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg

import kernelsketch as ks
from kernelsketch.cli.main import main
from kernelsketch.kernels import pairwise_kernel


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(0)
    return np.concatenate([rng.normal(size=(300, 3)), rng.normal(4.0, 1.0, size=(300, 3))])


@pytest.fixture(scope="module")
def result(X):
    return ks.diagnose(X, bandwidth=2.0, n_landmarks=60, sample_size=400, random_state=0)


def test_spectrum_and_captured_trace_are_the_exact_ones(X, result):
    from kernelsketch.maps.landmarks import sample_row_indices

    S = X[sample_row_indices(X.shape[0], 400, [0, 0xD1A6])]
    K = pairwise_kernel(S, bandwidth=2.0)
    H = np.eye(400) - 1.0 / 400
    lam = scipy.linalg.eigh(H @ K @ H, eigvals_only=True)[::-1]
    np.testing.assert_allclose(result.eigenvalues, lam[:200] / 400, atol=1e-12)
    np.testing.assert_allclose(result.eigengaps, -np.diff(lam[:201]) / 400, atol=1e-12)
    pos = np.clip(lam, 0, None)
    for r, frac in result.captured_trace.items():
        assert frac == pytest.approx(pos[:r].sum() / pos.sum(), rel=1e-10)
    assert result.effective_dimension == pytest.approx(pos.sum() ** 2 / (pos**2).sum(), rel=1e-10)
    # the recommended rank: the smallest r whose eigenvalues hold 95 % of the centred trace (target 0.05)
    frac = np.cumsum(pos) / pos.sum()
    r = result.recommendation["n_components"]
    assert frac[r - 1] >= 0.95 and (r == 1 or frac[r - 2] < 0.95)
    assert result.sample_size == 400 and result.n_rows == 600 and result.bandwidth == 2.0


def test_gram_errors_are_the_direct_ones(X, result):
    from kernelsketch.maps.landmarks import sample_row_indices

    S = X[sample_row_indices(X.shape[0], 400, [0, 0xD1A6])]
    K = pairwise_kernel(S, bandwidth=2.0)
    Y = ks.Nystroem(n_landmarks=60, bandwidth=2.0, random_state=0).fit_transform(S)
    row = next(e for e in result.errors if e["method"] == "Nystroem")
    assert row["relative_frobenius"] == pytest.approx(np.linalg.norm(K - Y @ Y.T) / np.linalg.norm(K), rel=1e-9)
    assert row["relative_spectral"] == pytest.approx(np.linalg.norm(K - Y @ Y.T, 2) / np.linalg.norm(K, 2), rel=1e-9)
    assert {e["method"] for e in result.errors} == {
        "Nystroem",
        "SubsampleKPCA (centred)",
        "RandomFourierFeatures",
        "StreamingKPCA",
    }
    for e in result.errors:
        assert 0.0 <= e["relative_frobenius"] < 1.0


def test_recommendation_is_the_first_size_reaching_the_target(X, result):
    grid = result.recommendation["grid"]
    assert [g["n_landmarks"] for g in grid] == sorted(g["n_landmarks"] for g in grid)
    hit = result.recommendation["n_landmarks"]
    # 50 landmarks miss the 0.05 target here, 100 reach it: the first size that does is the answer
    assert hit == next(g for g in grid if g["relative_frobenius"] <= 0.05)["n_landmarks"] == 100
    assert grid[0]["relative_frobenius"] > 0.05
    strict = ks.diagnose(X, bandwidth=0.05, n_landmarks=20, sample_size=200, target=1e-6, random_state=0)
    assert strict.recommendation["n_landmarks"] is None and "No size" in strict.recommendation["text"]
    assert strict.recommendation["grid"][-1]["n_landmarks"] == 100  # it tried up to half the sample


def test_a_file_gives_the_same_diagnosis_reading_only_the_sample(X, result, tmp_path):
    np.save(tmp_path / "X.npy", X)
    from_file = ks.diagnose(tmp_path / "X.npy", bandwidth=2.0, n_landmarks=60, sample_size=400, random_state=0)
    np.testing.assert_array_equal(from_file.eigenvalues, result.eigenvalues)
    assert from_file.errors[0]["relative_frobenius"] == result.errors[0]["relative_frobenius"]


def test_report_files_and_json(result, tmp_path):
    paths = result.write_report(tmp_path / "rep")
    names = sorted(p.name for p in paths)
    assert names == ["errors.png", "report.json", "report.md", "spectrum.png", "sweep.png"]
    for p in paths:
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000
    doc = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert doc["captured_trace"]["10"] == pytest.approx(result.captured_trace[10])
    md = (tmp_path / "rep" / "report.md").read_text()
    assert f"{result.captured_trace[10]:.3f}" in md and result.recommendation["text"] in md
    with pytest.raises(FileExistsError):
        result.write_report(tmp_path / "rep")


def test_diagnose_command(tmp_path, capsys):
    X, y = ks.load_dataset("banknote")
    np.save(tmp_path / "bank.npy", X)
    assert (
        main(
            [
                "--json",
                "diagnose",
                str(tmp_path / "bank.npy"),
                "-o",
                str(tmp_path / "rep"),
                "--sample-size",
                "300",
                "-n",
                "50",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "diagnose" and doc["sample_size"] == 300 and len(doc["errors"]) == 4
    assert (tmp_path / "rep" / "report.md").is_file()
    assert main(["diagnose", str(tmp_path / "bank.npy"), "--target", "2"]) == 2


def test_nystroem_warns_when_it_captures_little_and_says_what_to_run():
    import warnings

    X = np.random.default_rng(0).normal(size=(2000, 5))
    with pytest.warns(ks.ApproximationWarning, match=r"captures only \d+% .*kernelsketch.diagnose"):
        ks.Nystroem(n_landmarks=50, bandwidth=0.3, random_state=0).fit(X)  # a narrow kernel, few landmarks
    with warnings.catch_warnings():
        warnings.simplefilter("error", ks.ApproximationWarning)
        ks.Nystroem(n_landmarks=200, bandwidth=4.0, random_state=0).fit(X)  # a wide one captures most of it
    # the figure in the warning is the trace error measured directly
    ny = ks.Nystroem(n_landmarks=50, bandwidth=0.3, random_state=0)
    with pytest.warns(ks.ApproximationWarning) as rec:
        ny.fit(X)
    rows = np.unique(np.linspace(0, 1999, 256).astype(int))
    captured = 1 - ny.trace_error(X[rows]) / len(rows)
    assert f"{captured:.0%}" in str(rec[0].message)


# -- the clustering question (issue #26, item 6) ------------------------------------------------
@pytest.fixture(scope="module")
def blobs():
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(900, centers=[[0, 0], [6, 0], [0, 6]], cluster_std=0.6, random_state=1)
    return X


def test_clustering_advice_finds_the_separated_groups(blobs):
    from kernelsketch.diagnostics import clustering_advice

    advice = clustering_advice(blobs, 3, random_state=0)
    gaps = {row["k"]: row["eigengap"] for row in advice["k_ranking"]}
    assert advice["k_ranking"][0]["k"] == 3
    assert gaps[3] > 2 * max(gaps[2], gaps[4])
    # #54 item 3: the largest gap is reported, but the advice keeps the default n_neighbors (the pool's verdict)
    largest = next(g for g in advice["graphs"] if g["n_neighbors"] == advice["largest_gap_n_neighbors"])
    assert largest["eigengap"] == max(g["eigengap"] for g in advice["graphs"])
    assert advice["n_neighbors"] == 10 and "No clear choice of n_neighbors" in advice["text"]
    assert "--n-neighbors" not in advice["text"]
    assert not advice["standardize"]


def test_clustering_advice_scores_the_graph_cluster_would_build(blobs):
    from sklearn.preprocessing import StandardScaler

    from kernelsketch.diagnostics import clustering_advice
    from kernelsketch.maps import LandmarkSpectralEmbedding

    noise = np.random.default_rng(0).normal(size=(blobs.shape[0], 8))
    X = np.c_[blobs, noise] * np.repeat([1.0, 1000.0], 5)  # columns in two units: "auto" z-scores them
    advice = clustering_advice(X, 3, random_state=0, neighbor_grid=(10,))
    assert advice["standardize"] and advice["magnitude_spread"] > 10
    emb = LandmarkSpectralEmbedding(n_components=3, n_landmarks=900, n_neighbors=10, random_state=0)
    lam = emb.fit(StandardScaler().fit_transform(X)).eigenvalues_
    np.testing.assert_allclose(advice["graphs"][0]["eigenvalues"], lam, rtol=1e-12)
    assert advice["graphs"][0]["eigengap"] == pytest.approx(ks.metrics.relative_eigengap(lam, 3))


def test_diagnose_with_clusters_reports_and_plots_the_eigengap(blobs, tmp_path, capsys):
    np.save(tmp_path / "b.npy", blobs)
    rc = main(["diagnose", str(tmp_path / "b.npy"), "-k", "3", "--sample-size", "400", "-o", str(tmp_path / "r")])
    assert rc == 0
    said = capsys.readouterr()
    # the clustering answer comes first, and the Gram half says whose kernel it describes
    assert said.out.index("`kernelsketch cluster -k 3`") < said.out.index("captured trace of the centred Gram")
    assert "not cluster's default graph" in said.out
    report = (tmp_path / "r" / "report.md").read_text()
    assert report.index("## Clustering into k = 3") < report.index("## Spectrum of the centred Gram")
    assert "(the default)" in report and "`cluster`'s default does not use it" in report
    assert (tmp_path / "r" / "eigengap.png").stat().st_size > 1000
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    assert data["clustering"]["k_ranking"][0]["k"] == 3
    with pytest.raises(ValueError, match="n_clusters must be an int >= 2"):
        ks.diagnose(blobs, n_clusters=1)


def test_missing_value_codes_finds_a_cut_off_zero_and_a_spike_not_counts_categories_or_pixels():
    from kernelsketch.diagnostics import missing_value_codes

    rng = np.random.default_rng(0)
    n = 600
    pressure = np.round(rng.normal(72, 12, n))  # readings 35..110: a 0 is 3 spreads below the rest
    pressure[:30] = 0
    insulin = np.round(rng.lognormal(4.8, 0.5, n)) + 15  # >= 16, wide: a 0 in half the rows is a spike
    insulin[rng.random(n) < 0.45] = 0
    pregnancies = rng.poisson(3.5, n).astype(float)  # 0 is a count like any other
    flag = (rng.random(n) < 0.3).astype(float)  # a 0/1 column
    pixel = np.where(rng.random(n) < 0.3, rng.integers(1, 256, n), 0).astype(float)  # blank is most rows
    # mostly blank, ink piled at 250..254 and saturated at 255 in a few rows: 255 is one step above the rest,
    # beyond their interquartile range (the blanks make it < 1) but on the values' own grid, so a reading
    saturated = rng.permutation(np.r_[np.zeros(442), 1.0, rng.integers(240, 255, n - 453), np.full(10, 255.0)])
    X = np.c_[pressure, insulin, pregnancies, flag, pixel, saturated]
    rest = saturated[saturated < 255]
    assert 255 - rest.max() == 1 and 1 > np.subtract(*np.percentile(rest, [75, 25])) > 0  # the IQR test alone flags it
    codes = {c["column"]: c for c in missing_value_codes(X)}
    assert set(codes) == {0, 1}
    assert codes[0]["value"] == 0 and codes[0]["rows"] == 30 and not codes[0]["spike"]
    assert codes[0]["gap"] == pressure[30:].min()
    assert codes[1]["spike"] and codes[1]["rows"] == int((insulin == 0).sum())
    # the same codes at the top end (a 999 sentinel) are found the same way
    top = missing_value_codes(np.where(pressure == 0, 999.0, pressure)[:, None])
    assert [(c["value"], c["rows"]) for c in top] == [(999.0, 30)]
    with pytest.raises(ValueError, match="2-D"):
        missing_value_codes(pressure)


@pytest.mark.data
def test_clustering_advice_names_the_diabetes_codes_that_take_a_cluster():
    """diabetes' blood pressure 0 (35 rows) is the cluster spectral clustering splits off; the advice says so."""
    from kernelsketch.datasets import load_dataset
    from kernelsketch.datasets._testing import require_shared_data
    from kernelsketch.diagnostics import MissingValueCodeWarning, clustering_advice

    require_shared_data("diabetes")
    X, _ = load_dataset("diabetes")
    X = np.asarray(X, dtype=np.float64)
    advice = clustering_advice(X, 2, random_state=0, neighbor_grid=(10,))
    found = {c["column"]: c["rows"] for c in advice["missing_value_codes"]}
    # UCI's Pima columns: 1 glucose, 2 blood pressure, 3 skin thickness, 4 insulin, 5 BMI (0 = not measured)
    assert found == {j: int((X[:, j] == 0).sum()) for j in (1, 2, 3, 4, 5)}
    assert found[2] == 35 and "Missing-value codes?" in advice["text"] and "SimpleImputer" in advice["text"]
    with pytest.warns(MissingValueCodeWarning, match=r"column 2: 35 rows hold 0, 24 beyond every other value"):
        labels = ks.cluster_file(X, 2, random_state=0, missing_codes="warn").labels
    small = np.argmin(np.bincount(labels))
    assert set(np.flatnonzero(labels == small)) == set(np.flatnonzero(X[:, 2] == 0))


def test_cluster_file_warns_of_codes_in_any_units_and_not_on_clean_data():
    import warnings

    from kernelsketch.diagnostics import MissingValueCodeWarning

    rng = np.random.default_rng(1)
    X = np.c_[np.round(rng.normal(72, 12, 800)), rng.normal(0.0, 0.001, 800)]  # two units: standardized
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingValueCodeWarning)
        ks.cluster_file(X, 2, random_state=0)  # clean: silent
    X[::20, 0] = -999.0
    with pytest.warns(MissingValueCodeWarning, match=r"column 0: 40 rows hold -999"):
        ks.cluster_file(X, 2, random_state=0)


def test_the_cli_prints_a_library_warning_as_its_own_line(tmp_path):
    import subprocess
    import sys

    rng = np.random.default_rng(1)
    X = np.c_[np.round(rng.normal(72, 12, 800)), rng.normal(0.0, 1.0, 800)]
    X[::20, 0] = 0.0
    np.save(tmp_path / "x.npy", X)
    cmd = [sys.executable, "-m", "kernelsketch.cli", "cluster", str(tmp_path / "x.npy"), "-k", "2"]
    done = subprocess.run([*cmd, "-o", str(tmp_path / "labels.npy")], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert "kernelsketch: warning (MissingValueCodeWarning): columns hold what look like missing-value codes" in err
    assert "column 0: 40 rows hold 0" in err and "sys.exit" not in err


def test_the_code_check_spans_the_whole_file_not_its_head():
    from kernelsketch.diagnostics import MissingValueCodeWarning

    rng = np.random.default_rng(2)
    X = np.c_[np.round(rng.normal(72, 12, 20_000)), rng.normal(size=20_000)]
    X[15_000::50, 0] = -999.0  # codes only in the last quarter of the rows
    with pytest.warns(MissingValueCodeWarning, match="column 0: .* rows hold -999"):
        ks.cluster_file(X, 2, embedding=None, random_state=0)


@pytest.mark.data
@pytest.mark.parametrize("name", ["mnist", "avila", "banknote"])
def test_no_codes_are_found_in_measurements_without_them(name):
    """MNIST's saturated 255 and blank 0, Avila's scaled readings, Bank Notes' wavelet statistics: no false alarm."""
    from kernelsketch.datasets import load_dataset
    from kernelsketch.datasets._testing import require_shared_data
    from kernelsketch.diagnostics import missing_value_codes

    require_shared_data(name)
    X = np.asarray(load_dataset(name)[0], dtype=np.float64)
    for step in (1, 7, 14):  # the whole set and the strided samples cluster_file checks
        assert missing_value_codes(X[::step]) == [], step


# -- issue 39, item 14: figures whose text does not collide ----------------------------------------------------
def _overlap(a, b):
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_diagnose_figures_print_no_label_over_another(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import kernelsketch as ks

    X, _ = ks.load_dataset("banknote")
    report = ks.diagnose(X, n_clusters=2, sample_size=600, random_state=0)
    fig = report._plot_eigengap()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    left, right = fig.axes[:2]
    ylabel = right.yaxis.label.get_window_extent(renderer)
    for t in left.get_xticklabels() + left.get_yticklabels():
        if t.get_text():
            assert not _overlap(t.get_window_extent(renderer), ylabel), t.get_text()
    assert not _overlap(left.get_tightbbox(renderer), right.get_tightbbox(renderer))
    assert not _overlap(right.get_tightbbox(renderer), fig.axes[2].get_tightbbox(renderer))  # the stability panel
    fig = report._plot_sweep()
    fig.canvas.draw()
    ax = fig.axes[0]
    labels = [t for t in ax.get_xticklabels(minor=True) + ax.get_xticklabels() if t.get_text() and t.get_visible()]
    boxes = [t.get_window_extent(renderer) for t in labels]
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            assert not _overlap(boxes[i], boxes[j]), (labels[i].get_text(), labels[j].get_text())


# -- choosing k by stability (issue #39 item 14, issue #37 item 6) -------------------------------------------
def test_diagnose_k_ranks_k_by_stability_and_says_how_far_to_trust_it():
    """Bank Notes with -k 2: the relative eigengap alone suggested 5 groups; now every k is scored by the
    stability of its clustering over random halvings, the asked k's score is reported, and a different k is
    suggested only when it is more stable by more than the spread, with the criterion's measured record."""
    from kernelsketch.cluster.stability import clustering_stability
    from kernelsketch.diagnostics import STABILITY_RECORD, clustering_advice

    X, _ = ks.load_dataset("banknote")
    X = np.asarray(X, dtype=np.float64)[np.sort(np.random.default_rng(0).choice(1372, 1000, replace=False))]
    advice = clustering_advice(X, 2, random_state=0)
    assert advice["k_criterion"] == "stability"
    rows = {r["k"]: r for r in advice["k_ranking"]}
    assert sorted(rows) == list(range(2, 11))
    Xs = (X - X.mean(0)) / X.std(0) if advice["standardize"] else X
    again = clustering_stability(Xs, range(2, 11), n_pairs=5, random_state=0)
    assert [r["k"] for r in advice["k_ranking"]] == [r["k"] for r in again.ranking()]
    assert rows[2]["stability"] == pytest.approx(again.mean_ari[0], abs=1e-12)
    assert f"k = 2 gives {rows[2]['stability']:.2f} ± {rows[2]['spread']:.2f}" in advice["text"]
    top = advice["k_ranking"][0]
    if top["k"] != 2 and top["stability"] - rows[2]["stability"] > rows[2]["spread"]:
        assert STABILITY_RECORD in advice["text"] and f"k = {top['k']} the most stable" in advice["text"]
    else:
        assert "the data may hold" not in advice["text"]


def test_the_stated_record_of_each_k_criterion_is_the_committed_benchmarks():
    import csv
    from pathlib import Path

    from kernelsketch.diagnostics import EIGENGAP_RECORD, STABILITY_RECORD

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "choose-k.csv"
    rows = list(csv.DictReader(open(path)))

    def hits(half, crit):
        sub = [r for r in rows if r["half"] == half and r["criterion"] == crit]
        return sum(int(r["within_1"]) for r in sub), len(sub)

    t, nt = hits("tuning", "stability")
    c, nc = hits("confirmation", "stability")
    assert f"within 1 of the true k on {t} of {nt} tuning and {c} of {nc} confirmation samples" in STABILITY_RECORD
    t, nt = hits("tuning", "eigengap")
    c, nc = hits("confirmation", "eigengap")
    assert f"within 1 of the true k on {t} of {nt} tuning and {c} of {nc} confirmation samples" in EIGENGAP_RECORD


def test_cli_diagnose_k_on_bank_notes_reports_the_stability_of_every_k(tmp_path, capsys):
    """The command of issue #39 item 14: `diagnose banknote.csv --sample-size 1000 -k 2`."""
    X, y = ks.load_dataset("banknote")
    np.savetxt(tmp_path / "banknote.csv", np.c_[X, y], delimiter=",", fmt="%.6g")
    out = tmp_path / "report"
    argv = ["diagnose", str(tmp_path / "banknote.csv"), "--no-header", "--label-column", "4"]
    rc = main([*argv, "--sample-size", "1000", "-k", "2", "-o", str(out)])
    assert rc == 0, capsys.readouterr().err
    data = json.loads((out / "report.json").read_text())["clustering"]
    assert data["k_criterion"] == "stability" and sorted(r["k"] for r in data["k_ranking"]) == list(range(2, 11))
    asked = next(r for r in data["k_ranking"] if r["k"] == 2)
    report = (out / "report.md").read_text()
    assert "| k | stability: ARI between two halves' clusterings |" in report
    assert f"| 2 (asked) | {asked['stability']:.3f} | {asked['spread']:.3f} |" in report
    assert f"k = 2 gives {asked['stability']:.2f} ± {asked['spread']:.2f}" in data["text"]


def test_diagnose_on_sparse_input_describes_what_cluster_does(tmp_path):
    # issue 53 item 6: on a libsvm file diagnose said cluster would z-score the columns and named a missing-value
    # code; cluster does neither for sparse data
    rng = np.random.default_rng(0)
    lines = []
    for i in range(400):
        a, b = (1, 1000) if i % 2 else (5, 9000)
        lines.append(f"{i % 2} 1:{a + rng.normal():.4f} 2:{b + 100 * rng.normal():.2f}" + (" 3:-999" if i < 40 else ""))
    path = tmp_path / "x.libsvm"
    path.write_text("\n".join(lines) + "\n")
    c = ks.diagnose(str(path), n_clusters=2, sample_size=300, n_landmarks=50).clustering
    assert c["standardize"] is False and c["missing_value_codes"] == []
    assert "sparse input: the columns are left unscaled" in c["text"] and "z-scored first" not in c["text"]


def test_the_n_neighbors_record_is_the_pool_benchmarks():
    """The advice's figures (choosing n_neighbors by the largest gap against the fixed default) are the pool's."""
    import pandas as pd

    from kernelsketch.diagnostics import POOL_RECORD

    d = pd.read_csv(Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "cluster-pool.csv")
    per_set = d.groupby(["group", "set", "method"]).ari.mean().unstack("method")
    assert len(per_set) == POOL_RECORD["sets"]
    assert round(per_set["D5 r by eigengap"].mean(), 3) == POOL_RECORD["by_eigengap"]
    assert round(per_set["C0 default"].mean(), 3) == POOL_RECORD["default"]
    assert POOL_RECORD["by_eigengap"] < POOL_RECORD["default"]  # what makes the advice "keep the default"


def test_the_k_table_stays_short_at_large_k():
    from kernelsketch.diagnostics import K_TABLE_ROWS, _k_table_rows

    ranking = [{"k": k, "stability": 1.0 / k} for k in range(2, 106)]
    rows = _k_table_rows(ranking, 100)
    assert len(rows) == K_TABLE_ROWS + 1 and rows[-1]["k"] == 100
    assert [r["k"] for r in rows] == sorted(r["k"] for r in rows)
