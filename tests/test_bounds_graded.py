"""A bound that cannot bind is not evidence: every graded bound is set against its quantity's trivial bound.

The rule (:func:`kernelsketch.experiments._bounds.grade_bound`), the trivial bounds themselves (each is a
bound: checked against exact computations), and the committed results and fresh quick runs: wherever a
graded bound is not below the trivial bound of its quantity, its grade says "vacuous".
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from kernelsketch.experiments import nystrom_eigengap as ne
from kernelsketch.experiments._bounds import grade_bound, is_vacuous_grade
from kernelsketch.kernels import pairwise_kernel
from kernelsketch.metrics import nystroem_factor

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
TOL = 1 - 1e-9


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _f(x):
    return float(x) if x not in ("", None) else float("nan")


def _count(frac):
    return int(str(frac).split("/")[0])


# ----------------------------------------------------------------------------- the rule


def test_grade_bound_names_each_case():
    assert grade_bound([0.5, 0.6], [0.8, 0.9], 1.0) == "holds"
    assert grade_bound([0.5, 0.6], [1.4, 1.7], 1.0) == "vacuous here"
    assert grade_bound([0.5, 0.6], [0.8, 1.7], 1.0, unit="points") == "holds; vacuous in 1/2 points"
    # a failure is a finding whatever the trivial bound says
    assert grade_bound([0.5, 2.0], [1.4, 1.7], 1.0) == "does not hold"
    # draws where the condition fails (NaN bound) are left out
    assert grade_bound([0.5, 0.6], [np.nan, 0.9], 1.0) == "holds"
    assert grade_bound([0.5, 0.6], [np.nan, np.nan], 1.0) == "not applicable"
    # a bound equal to the trivial one cannot bind either
    assert is_vacuous_grade(grade_bound([0.5], [1.0], 1.0))
    assert not is_vacuous_grade("holds") and is_vacuous_grade("holds; vacuous in 3/10 draws")
    with pytest.raises(ValueError, match="shape"):
        grade_bound([1.0, 2.0], [1.0], 1.0)


# ----------------------------------------------------------------------------- the trivial bounds are bounds


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_twice_the_rank_r_norm_bounds_the_nystroem_rank_r_error(seed):
    """``||K_r - K_hat_r||_F <= 2 ||K_r||_F``, also for badly placed landmarks (a tight cluster)."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(60, 2)), rng.normal(scale=0.05, size=(20, 2)) + 4.0])
    K = pairwise_kernel(X, bandwidth=1.0)
    K = (K + K.T) / 2.0
    lam, V = np.linalg.eigh(K)
    lam, V = lam[::-1], V[:, ::-1]
    for idx in (np.arange(60, 70), np.sort(rng.choice(80, size=12, replace=False))):
        Y = nystroem_factor(K[:, idx], idx, 6)
        for r in range(1, 7):
            K_r = (V[:, :r] * lam[:r]) @ V[:, :r].T
            K_hat_r = Y[:, :r] @ Y[:, :r].T
            assert np.linalg.norm(K_r - K_hat_r) <= ne.trivial_kr_bound(lam, r) * (1 + 1e-12)


def test_theorem1_trivial_bound_holds_and_decides_where_the_bound_binds():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    K = pairwise_kernel(X, bandwidth=0.1)  # nearly the identity: the HS distance is as large as it gets
    for m in (1, 5, 50):
        idx = np.sort(rng.choice(200, size=m, replace=False))
        assert ne.operator_hs_distance(K, idx) <= ne.TRIVIAL_HS_BOUND
    # 4 ln(40) / sqrt(m) < sqrt(2) exactly when m > (4 ln 40)^2 / 2 = 108.8
    assert ne.theorem1_bound(108) > ne.TRIVIAL_HS_BOUND > ne.theorem1_bound(109)


def test_theorem5_binds_only_above_five_hs():
    hs = 0.01
    assert ne.theorem5_bound(gap=4.9 * hs * 100, N=100, hs=hs) > ne.TRIVIAL_SINE_BOUND
    assert ne.theorem5_bound(gap=5.1 * hs * 100, N=100, hs=hs) < ne.TRIVIAL_SINE_BOUND


def test_lemma_trivial_bounds_hold_on_a_fitted_sketch():
    from kernelsketch import StreamingKPCA
    from kernelsketch.experiments.skpca_lemmas import lemma_2_4
    from kernelsketch.experiments.streaming_kpca import feature_scatter, lemma_2_2

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    for l in (2, 4, 10):
        est = StreamingKPCA(
            n_components=None, sketch_size=l, n_random_features=40, shrink="half", bandwidth=2.0, random_state=0
        ).fit(X)
        scatter = feature_scatter(est.feature_map_, X)
        err, _, bound, _, trivial = lemma_2_2(est, scatter)
        Z = est.feature_map_.transform(X)
        assert trivial == pytest.approx(np.linalg.norm(Z, 2) ** 2, rel=1e-9)
        assert err <= trivial * (1 + 1e-9)
        # the lemma's bound ||Z||_F^2 / (the shrink's index) is informative exactly when that index exceeds
        # Z's stable rank
        index = est.sketch_._delta_index
        assert bound == pytest.approx(np.linalg.norm(Z) ** 2 / index, rel=1e-9)
        assert (bound < trivial) == (index > np.linalg.norm(Z) ** 2 / np.linalg.norm(Z, 2) ** 2)
    G = pairwise_kernel(X[:100], bandwidth=2.0)
    Y = est.feature_map_.transform(X[:100])
    g_top = np.sort(np.linalg.eigvalsh(G))[::-1]
    for k, (lhs, _, trivial) in lemma_2_4(G, float(np.sum(G**2)), g_top, Y, (1, 3), np.empty_like(G)).items():
        s2 = np.sort(np.linalg.eigvalsh(Y.T @ Y))[::-1][:k]
        assert trivial == pytest.approx(np.linalg.norm(G) + np.sqrt(np.sum(s2**2)), rel=1e-9)
        assert lhs <= trivial


# ----------------------------------------------------------------- results: no bound graded as if it could bind


def graded_bound_violations(folder):
    """Every place in a results folder where a bound at or above its trivial bound lacks a "vacuous" grade."""
    folder = Path(folder)
    bad = []

    def need(ok, where):
        if not ok:
            bad.append(where)

    if (folder / "theorems_2_5.csv").exists():
        for r in _rows(folder / "theorems_2_5.csv"):
            where = f"theorems_2_5 {r['dataset']} m={r['m']} r={r['r']}"
            for t, cnt in (("theorem2", "theorem2_vacuous_draws"), ("theorem5", "theorem5_vacuous_draws")):
                g = r[f"{t}_grade"]
                hit = _count(r[cnt]) > 0 or _f(r[f"{t}_bound_mean"]) >= _f(r[f"{t}_trivial_bound"]) * TOL
                need(not hit or is_vacuous_grade(g) or g == "does not hold", f"{where} {t}: {g}")
    if (folder / "theorem6.csv").exists():
        for r in _rows(folder / "theorem6.csv"):
            hit = _count(r["vacuous_draws"]) > 0 or _f(r["bound_mean"]) >= _f(r["trivial_bound"]) * TOL
            need(
                not hit or is_vacuous_grade(r["grade"]) or r["grade"] == "does not hold",
                f"theorem6 {r['dataset']} m={r['m']} r={r['r']}: {r['grade']}",
            )
    if (folder / "theorem6_summary.csv").exists():
        for r in _rows(folder / "theorem6_summary.csv"):
            hit = _f(r["theorem1_bound_delta_0.05"]) >= _f(r["theorem1_trivial_bound"]) * TOL
            need(not hit or is_vacuous_grade(r["theorem1_grade"]), f"theorem1 {r['dataset']} m={r['m']}")
    if (folder / "lemma_2_2.csv").exists():  # skpca-lemmas
        claims = {(c["dataset"], c["claim"]): c["verdict"] for c in _rows(folder / "claims.csv")}
        for name, rows, col in (
            ("lemma_2_2", _rows(folder / "lemma_2_2.csv"), "lemma_bound"),
            ("lemma_2_4", _rows(folder / "lemma_2_4.csv"), "bound_stated"),
            ("lemma_2_4_proof", _rows(folder / "lemma_2_4.csv"), "bound_proof"),
        ):
            for r in rows:
                if _f(r[col]) >= _f(r["trivial_bound"]) * TOL:
                    v = claims[(r["dataset"], name)]
                    need(is_vacuous_grade(v) or v == "does not hold", f"{name} {r['dataset']}: {v}")
    if (folder / "results.csv").exists() and (folder / "claims.csv").exists():  # skpca-figures
        claims = {(c["dataset"], c["claim"]): c["verdict"] for c in _rows(folder / "claims.csv")}
        for r in _rows(folder / "results.csv"):
            if r["method"] == "SKPCA" and _f(r["lemma_bound"]) >= _f(r["lemma_trivial_bound"]) * TOL:
                v = claims[(r["dataset"], "lemma_2_2_sketch_error")]
                need(is_vacuous_grade(v) or v == "does not hold", f"skpca-figures lemma 2.2 {r['dataset']}: {v}")
    return sorted(set(bad))


GRADED = ("nystrom-eigengap", "skpca-lemmas", "skpca-figures")


@pytest.mark.parametrize("name", GRADED)
def test_committed_results_grade_every_bound_that_cannot_bind_as_vacuous(name):
    assert graded_bound_violations(RESULTS / name) == []


def test_the_check_catches_a_vacuous_bound_graded_as_holding(tmp_path):
    """Doctor the committed Theorem 6 row where its condition holds: "holds" there must be caught."""
    rows = _rows(RESULTS / "nystrom-eigengap" / "theorem6.csv")
    hits = [r for r in rows if _f(r["bound_mean"]) >= _f(r["trivial_bound"]) * TOL]
    assert hits, "the committed run has a point where Theorem 6's condition holds and its bound is vacuous"
    for r in hits:
        r["grade"] = "holds"
    with open(tmp_path / "theorem6.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert len(graded_bound_violations(tmp_path)) == len(hits)


def test_a_quick_run_grades_its_vacuous_bounds(tmp_path):
    out = tmp_path / "ne"
    ne.figure1(out, quick=True, progress=False, datasets=("diabetes", "cpu"), landmarks=(40, 160))
    assert graded_bound_violations(out) == []
    summary = _rows(out / "theorem6_summary.csv")
    # m = 40 and 160 are on either side of Theorem 1's threshold m > 108.8
    assert {r["m"]: is_vacuous_grade(r["theorem1_grade"]) for r in summary} == {"40": True, "160": False}
