"""Nystroem eigengap reproduction: the all-ranks error formula against the dense reference, and a quick run."""

import csv
import json

import numpy as np
import pytest

from kernelsketch.experiments import get_reproduction
from kernelsketch.experiments import nystrom_eigengap as ne
from kernelsketch.kernels import pairwise_kernel
from kernelsketch.metrics import additional_approximation_error_dense, nystroem_factor, top_eigen


def _read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_registry_points_here():
    assert get_reproduction("nystrom-eigengap") is ne.figure1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_all_ranks_formula_matches_dense_reference(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(150, 3)) * np.array([1.0, 0.5, 0.2])
    K = pairwise_kernel(X, kernel="gaussian", bandwidth=1.0)
    idx = np.sort(rng.choice(150, size=30, replace=False))
    add, nys = ne.nystroem_additional_errors(K, idx, 12)
    for r in (1, 2, 5, 12):
        ref = additional_approximation_error_dense(K, idx, r, details=True)
        assert add[r - 1] == pytest.approx(ref.additional_error, rel=1e-6, abs=1e-9)
        assert nys[r - 1] == pytest.approx(ref.nystroem_error, rel=1e-9)
    assert np.all(add >= -1e-9)  # Eckart-Young


@pytest.mark.parametrize("seed", [0, 1])
def test_rank_r_error_from_eigenpairs_matches_the_dense_difference(seed):
    # issue 29: Theorem 6 bounds ||K_r - K_hat_r||_F; it is computed from the Lanczos eigenpairs
    from kernelsketch.metrics import nystroem_factor

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(160, 3)) * np.array([1.0, 0.6, 0.3])
    K = pairwise_kernel(X, kernel="gaussian", bandwidth=1.2)
    idx = np.sort(rng.choice(160, size=40, replace=False))
    lam, V = np.linalg.eigh(K)
    lam, V = lam[::-1], V[:, ::-1]
    add, nys, rank_r = ne.nystroem_additional_errors(K, idx, 10, eigenvalues=lam, eigenvectors=V)
    Y = nystroem_factor(np.ascontiguousarray(K[:, idx]), idx, 10)
    for r in (1, 3, 10):
        K_r = (V[:, :r] * lam[:r]) @ V[:, :r].T
        K_hat_r = Y[:, :r] @ Y[:, :r].T
        assert rank_r[r - 1] == pytest.approx(np.linalg.norm(K_r - K_hat_r), rel=1e-6, abs=1e-9)
    # the theorem's quantity is at least the additional error (triangle inequality)
    assert np.all(rank_r >= add - 1e-9)
    a2, n2 = ne.nystroem_additional_errors(K, idx, 10, eigenvalues=lam)
    np.testing.assert_array_equal(a2, add)


def test_precomputed_eigenvalues_and_norm_give_the_same_errors():
    X = np.random.default_rng(5).normal(size=(120, 2))
    K = pairwise_kernel(X, kernel="gaussian", bandwidth=0.7)
    idx = np.arange(0, 120, 4)
    lam, _ = top_eigen(K, 9, method="lanczos", random_state=0)
    a, _ = ne.nystroem_additional_errors(K, idx, 8)
    b, _ = ne.nystroem_additional_errors(K, idx, 8, fro2=float((K * K).sum()), eigenvalues=lam)
    np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


def test_too_few_landmarks_is_an_error():
    K = np.eye(20)
    with pytest.raises(ValueError, match="landmarks"):
        ne.nystroem_additional_errors(K, np.arange(5), 8)
    with pytest.raises(ValueError, match="r_max"):
        ne.figure1("/nonexistent-unused", quick=True, landmarks=(10, 40), r_max=20, datasets=())


@pytest.mark.slow
def test_quick_run_reproduces_the_papers_trend(tmp_path):
    out = tmp_path / "ne"
    result = ne.figure1(out, quick=True, progress=False)
    meta = json.loads((out / "params.json").read_text())
    assert meta["params"]["quick"] is True and meta["params"]["seed"] == 0
    assert (out / "figure1.png").stat().st_size > 1000
    spear = _read_csv(out / "figure1_spearman.csv")
    curves = _read_csv(out / "figure1_curves.csv")
    titles = {r["dataset"] for r in spear}
    assert len(titles) == 4 and len(spear) == 8  # 4 datasets x 2 values of m
    assert len(curves) == 8 * 20
    for row in spear:
        # the paper's observation: error grows with r while the gap shrinks
        assert float(row["spearman_error_vs_eigengap"]) < -0.5
        assert float(row["spearman_error_vs_rank"]) > 0.8
        assert float(row["error_at_rmax"]) > float(row["error_at_r1"])
    for t in titles:
        # more landmarks, smaller additional error (averaged over ranks)
        by_m = {}
        for r in curves:
            if r["dataset"] == t:
                by_m.setdefault(int(r["m"]), []).append(float(r["additional_error_mean"]))
        assert np.mean(by_m[160]) < np.mean(by_m[40])
    assert all(float(r["additional_error_mean"]) >= -1e-8 for r in curves)
    assert all(float(r["eigengap"]) >= 0 for r in curves)
    assert result["params"]["landmarks"] == [40, 160]


def test_operator_hs_distance_equals_the_explicit_feature_computation():
    """With a linear kernel the operators are covariance matrices: ||C_N - C_m||_F from the features."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    K = X @ X.T
    idx = np.sort(rng.choice(300, size=40, replace=False))
    C_N = X.T @ X / 300
    C_m = X[idx].T @ X[idx] / 40
    assert ne.operator_hs_distance(K, idx) == pytest.approx(np.linalg.norm(C_N - C_m, "fro"), rel=1e-10)
    assert ne.operator_hs_distance(K, np.arange(300)) == pytest.approx(0.0, abs=1e-10)


@pytest.mark.parametrize("seed", [0, 1])
def test_projector_distance_is_the_dense_rkhs_one_and_theorem_2_holds(seed):
    """||H_r - H_hat_r||_2 from coordinates in an orthonormal basis of span{k(x_j, .)}, formed densely."""
    rng = np.random.default_rng(seed)
    N = 70
    X = rng.normal(size=(N, 3))
    K = pairwise_kernel(X, bandwidth=1.5)
    K = (K + K.T) / 2.0
    lam, V = np.linalg.eigh(K)
    lam, V = lam[::-1], V[:, ::-1]
    idx = np.sort(rng.choice(N, size=20, replace=False))
    got = ne.projector_distances(nystroem_factor(K[:, idx], idx, 8), eigenvalues=lam, eigenvectors=V)
    keep = lam > 1e-10 * lam[0]
    coords = np.sqrt(lam[keep])[:, None] * V[:, keep].T  # column j: k(x_j, .) in the basis e_i
    mu, U = np.linalg.eigh(K[np.ix_(idx, idx)])
    mu, U = mu[::-1], U[:, ::-1]
    for r in range(1, 9):
        Psi = coords[:, idx] @ U[:, :r] / np.sqrt(mu[:r])  # L_m's top eigenfunctions, orthonormal
        P = np.zeros((keep.sum(), keep.sum()))
        P[:r, :r] = np.eye(r)
        assert got[r - 1] == pytest.approx(np.linalg.norm(P - Psi @ Psi.T, 2), abs=1e-9)
        K_hat = K[:, idx] @ (U[:, :r] / mu[:r]) @ U[:, :r].T @ K[idx, :]
        K_r = (V[:, :r] * lam[:r]) @ V[:, :r].T
        assert np.linalg.norm(K_hat - K_r, "fro") <= ne.theorem2_bound(lam[0], N, got[r - 1]) * (1 + 1e-9)
    # every landmark: L_m = L_N and the projectors coincide
    every = np.arange(N)
    assert np.nanmax(ne.projector_distances(nystroem_factor(K, every, 8), eigenvalues=lam, eigenvectors=V)) < 1e-6


def test_theorem5_bound_only_where_its_condition_holds():
    assert np.isnan(ne.theorem5_bound(gap=0.3 * 100, N=100, hs=0.1))
    assert ne.theorem5_bound(gap=0.5 * 100, N=100, hs=0.1) == pytest.approx(4 * 0.1 / (0.5 - 0.1))


def test_theorem6_bound_only_where_its_condition_holds():
    assert np.isnan(ne.theorem6_bound(gap=0.3 * 100, N=100, hs=0.1))  # Delta = 0.3 = 3 HS: not strictly above
    assert ne.theorem6_bound(gap=0.5 * 100, N=100, hs=0.1) == pytest.approx(4 * 100 * 0.1 / (0.5 - 0.1))


def test_partial_spearman_separates_a_shared_trend_from_a_real_link():
    rng = np.random.default_rng(0)
    r = np.arange(1, 51)
    trend_only = ne.partial_spearman(r + rng.normal(0, 1, 50), -r + rng.normal(0, 1, 50), r)
    noise = rng.normal(0, 5, 50)
    linked = ne.partial_spearman(r + noise, -r - noise, r)
    from scipy.stats import spearmanr

    assert spearmanr(r + rng.normal(0, 1, 50), -r)[0] < -0.9  # the raw correlation is the trend's
    assert abs(trend_only) < 0.4 and linked < -0.8


def test_partial_spearman_is_undefined_when_a_curve_is_monotone_in_the_control():
    # issue 29: an error curve strictly increasing in r leaves a round-off residual; the ratio of two
    # round-offs printed +0.0056 for every such m. It is 0/0: NaN, with R^2 = 1 beside it
    r = np.arange(1, 51, dtype=np.float64)
    error = np.log1p(r) * 3.7  # strictly increasing: its ranks are r's
    gap = 1.0 / r + 0.3 * np.sin(r)  # not monotone
    assert np.isnan(ne.partial_spearman(error, gap, r))
    assert np.isnan(ne.partial_spearman(gap, error, r))
    assert ne.rank_r2(error, r) == pytest.approx(1.0, abs=1e-12)
    assert ne.rank_r2(gap, r) < 0.99
    assert not np.isnan(ne.partial_spearman(error + 5 * np.sin(3 * r), gap, r))
    # the committed table: NaN exactly where the error's ranks are r's (R^2 = 1), defined elsewhere
    import csv
    from pathlib import Path

    table = Path(__file__).resolve().parents[1] / "docs" / "results" / "nystrom-eigengap" / "figure1_spearman.csv"
    for row in csv.DictReader(open(table)):
        undefined = row["partial_spearman_given_r"] in ("nan", "")
        assert undefined == (float(row["r2_error_ranks_on_r"]) == 1.0), row


@pytest.mark.slow
def test_quick_run_checks_theorem_6(tmp_path):
    out = tmp_path / "ne6"
    ne.figure1(out, quick=True, progress=False, datasets=("diabetes", "cpu"), landmarks=(40, 80, 160))
    rows = _read_csv(out / "theorem6.csv")
    assert {int(r["m"]) for r in rows} == {40, 80, 160}
    for r in rows:
        assert float(r["Delta_r"]) >= 0 and float(r["hs_mean"]) > 0
        if r["error_over_bound_max"] not in ("", "nan"):
            # a theorem: wherever its condition holds, the measured error is below its bound
            assert float(r["error_over_bound_max"]) <= 1.0
    for row in _read_csv(out / "theorem6_summary.csv"):
        # Theorem 1 (w.p. 0.95 per draw; here with a wide margin): ||L_N - L_m||_HS <= 4 ln(2/0.05) / sqrt(m)
        bound = 4 * np.log(40) / np.sqrt(int(row["m"]))
        assert float(row["theorem1_bound_delta_0.05"]) == pytest.approx(bound, rel=1e-5)
        assert float(row["hs_max"]) <= bound
        n_in, n_all = row["draws_within_theorem1"].split("/")
        assert n_in == n_all
    for r in _read_csv(out / "theorems_2_5.csv"):
        # Theorem 2 holds in every draw; Theorem 5 in every draw where its condition does
        n_in, n_all = r["theorem2_holds_draws"].split("/")
        assert n_in == n_all and 0.0 <= float(r["dh_mean"]) <= float(r["dh_max"]) <= 1.0 + 1e-12
        n_in, n_all = r["theorem5_holds_draws"].split("/")
        assert n_in == n_all
    rates = _read_csv(out / "rate_in_m.csv")
    assert rates and all(float(r["loglog_slope"]) < 0 for r in rates)  # more landmarks, smaller error
    assert (out / "theorem6.png").stat().st_size > 1000
    spear = _read_csv(out / "figure1_spearman.csv")
    assert all(np.isnan(p) or -1 <= p <= 1 for p in (float(s["partial_spearman_given_r"]) for s in spear))


def _theorems_2_5_csv(folder, theorem5_rows):
    """A ``theorems_2_5.csv`` of one (dataset, m) pair; rows: Theorem 5's (condition, holds, vacuous, bound, grade)."""
    fields = [
        "dataset", "N", "m", "r", "dh_mean", "dh_max", "kr_error_mean", "theorem2_bound_mean",
        "theorem2_holds_draws", "theorem2_ratio_max", "theorem2_trivial_bound", "theorem2_vacuous_draws",
        "theorem2_grade", "theorem5_condition_draws", "theorem5_bound_mean", "theorem5_holds_draws",
        "theorem5_ratio_max", "theorem5_trivial_bound", "theorem5_vacuous_draws", "theorem5_grade",
    ]  # fmt: skip
    with open(folder / "theorems_2_5.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        for r, (cond, held, vac, bound, grade) in enumerate(theorem5_rows, start=1):
            w.writerow(
                {
                    "dataset": "CPU", "N": 100, "m": 50, "r": r, "dh_mean": 0.5, "dh_max": 0.6,
                    "kr_error_mean": 1.0, "theorem2_bound_mean": 3.0, "theorem2_holds_draws": "2/2",
                    "theorem2_ratio_max": 0.4, "theorem2_trivial_bound": 2.0, "theorem2_vacuous_draws": "2/2",
                    "theorem2_grade": "vacuous here", "theorem5_condition_draws": f"{cond}/2",
                    "theorem5_bound_mean": bound, "theorem5_holds_draws": f"{held}/{cond}",
                    "theorem5_ratio_max": 0.05 if cond else "nan", "theorem5_trivial_bound": 1.0,
                    "theorem5_vacuous_draws": f"{vac}/{cond}", "theorem5_grade": grade,
                }
            )  # fmt: skip


def test_theorem5_is_graded_vacuous_where_its_bound_is_at_least_one(tmp_path):
    """#53 item 15: a bound >= 1 on a sine cannot bind; the page must say vacuous, never 'holds (too)'."""
    _theorems_2_5_csv(tmp_path, [(2, 2, 2, 1.54, "vacuous here"), (0, 0, 0, "nan", "not applicable")])
    text = ne.render_theorems_2_5(tmp_path)
    assert "holds too" not in text and "holds where it applies" not in text
    assert "vacuous (2/2 draws: bound ≥ 1)" in text
    assert "its bound is vacuous in every draw" in text and "no point of these data tests Theorem 5" in text


def test_theorem5_grade_that_binds_is_not_called_vacuous(tmp_path):
    _theorems_2_5_csv(tmp_path, [(2, 2, 0, 0.4, "holds")])
    text = ne.render_theorems_2_5(tmp_path)
    assert "holds (2/2 draws)" in text and "binds in some draws" in text
    assert "vacuous in every draw" not in text


def test_theorem6_figure_marks_a_vacuous_bound(tmp_path):
    """The figure's note at a point where Theorem 6's condition holds names a vacuous bound as such."""
    import matplotlib

    matplotlib.use("Agg")
    fig_texts = []

    class _Rep:
        def figure(self, fig, name):
            fig_texts.extend(t.get_text() for ax in fig.axes for t in ax.texts)
            fig_texts.append(fig._suptitle.get_text())

    ranks = np.arange(1, 4)
    per_m = {50: (None, np.zeros(3))}
    results = {"CPU": ("CPU", 100, np.array([9.0, 2.0, 1.0]), np.zeros(3), per_m, [(50, 1, 3.0, 60.0, "vacuous here")])}
    tables = {
        "spear": [],
        "thm6": [{"dataset": "CPU", "m": 50, "three_hs_mean": 0.03}],
    }
    ne._figure1_plots(_Rep(), results, ranks, [50], tables, 2, 1.0, 0)
    assert any("bound vacuous" in t for t in fig_texts)
    assert any("marked vacuous" in t for t in fig_texts)
