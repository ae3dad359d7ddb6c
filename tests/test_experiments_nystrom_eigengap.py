"""Nystroem eigengap reproduction: the all-ranks error formula against the dense reference, and a quick run."""

import csv
import json

import numpy as np
import pytest

from kernelsketch.experiments import get_reproduction
from kernelsketch.experiments import nystrom_eigengap as ne
from kernelsketch.kernels import pairwise_kernel
from kernelsketch.metrics import additional_approximation_error_dense, top_eigen


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
