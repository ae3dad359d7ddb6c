"""RF-KPCA trade-off reproduction: the two R-E reconstructions, the exact mean embeddings, a quick run."""

import csv
import itertools
import json

import numpy as np
import pytest

from kernelsketch.experiments import get_reproduction
from kernelsketch.experiments import rf_kpca_tradeoff as rk
from kernelsketch.kernels import pairwise_kernel


def _read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_registry_points_here():
    assert get_reproduction("rf-kpca-tradeoff") is rk.tradeoff


def test_ekpca_with_all_components_reconstructs_training_sections_exactly():
    # k(., x_t) - mu_n lies in the span of the centred sections, so projecting
    # onto every eigenfunction gives it back: R_{x_t}(y) = k(y, x_t) - mean_j k(y, x_j)
    X = np.linspace(0.0, 8.0, 17)[:, None]
    Y = np.random.default_rng(0).uniform(-1.0, 9.0, size=(40, 1))
    h = 1.0
    R = rk.ekpca_reconstruction(X, X, Y, X.shape[0] - 1, h)
    KYX = pairwise_kernel(Y, X, kernel="gaussian", bandwidth=h)
    expected = (KYX - KYX.mean(axis=1, keepdims=True)).T
    np.testing.assert_allclose(R, expected, atol=1e-7)


def test_ekpca_reconstruction_is_a_projection():
    # R-E error of the training sections themselves falls as l grows (nested subspaces)
    X = np.random.default_rng(1).normal(size=(60, 1))
    Y = np.random.default_rng(2).normal(size=(50, 1))
    KYX = pairwise_kernel(Y, X, kernel="gaussian", bandwidth=0.5)
    G = (KYX - KYX.mean(axis=1, keepdims=True)).T
    errs = [np.mean((rk.ekpca_reconstruction(X, X, Y, l, 0.5) - G) ** 2) for l in (1, 2, 4, 8)]
    assert all(b <= a + 1e-12 for a, b in itertools.pairwise(errs))


@pytest.mark.parametrize("seed", [0, 1])
def test_rf_reconstruction_converges_to_ekpca(seed):
    # the uncentred evaluation <v_i, z(y)> converges to phi_i(y): the difference shrinks like m^{-1/2}
    rng = np.random.default_rng(seed)
    X, Xe, Y = rng.normal(size=(40, 1)), rng.normal(size=(10, 1)), rng.normal(size=(30, 1))
    ek = rk.ekpca_reconstruction(X, Xe, Y, 3, 0.8)
    diff = [
        np.sqrt(np.mean((rk.rf_ekpca_reconstruction(X, Xe, Y, 3, m, 0.8, random_state=seed) - ek) ** 2))
        for m in (15, 1500)
    ]
    scale = np.sqrt(np.mean(ek**2))
    assert diff[1] < 0.15 * scale
    assert diff[1] < diff[0] / 4


@pytest.mark.parametrize("name", ["exp", "poly"])
def test_exact_mean_embedding_matches_monte_carlo(name):
    src = rk._Source(name, 0, 0)
    U = src.draw(200_000, np.random.default_rng(3))
    Y = np.array([[-4.0], [-0.3], [0.0], [1.2], [6.0]])
    mc = pairwise_kernel(Y, U, kernel="gaussian", bandwidth=src.h).mean(axis=1)
    np.testing.assert_allclose(src.mu(Y), mc, atol=3e-3)


@pytest.mark.slow
def test_quick_run_shows_the_trade_off(tmp_path):
    out = tmp_path / "rf"
    result = rk.tradeoff(out, quick=True, progress=False)
    meta = json.loads((out / "params.json").read_text())
    assert meta["params"]["quick"] is True and meta["params"]["seed"] == 0
    for f in ("tradeoff", "spectrum"):
        assert (out / f"{f}.png").stat().st_size > 1000
    a, b = _read_csv(out / "vs_m.csv"), _read_csv(out / "vs_n.csv")
    spec = {r["dataset"].split(",")[-1].strip(): r for r in _read_csv(out / "spectrum.csv")}
    # the synthetic laws give the promised decays
    assert spec["exponential decay (Gaussian data)"]["decay_better_fit"] == "exponential"
    assert spec["polynomial decay (Cauchy data)"]["decay_better_fit"] == "polynomial"
    for ds in {r["dataset"] for r in a}:
        rf = [float(r["excess_over_EKPCA"]) for r in a if r["dataset"] == ds and r["method"] == "RF-EKPCA"]
        assert rf[-1] < 0.2 * rf[0]  # (a) RF-EKPCA approaches EKPCA as m grows
        assert {r["l_rule"] for r in b if r["dataset"] == ds} == {"n^0.333", "log n"}  # both l(n) rules ran
        for rule in ("n^0.333", "log n"):
            rows = [r for r in b if r["dataset"] == ds and r["l_rule"] == rule]
            ek = [float(r["error_mean"]) for r in rows if r["method"] == "EKPCA"]
            assert ek[-1] < ek[0]  # (b) falls with n
            last = [r for r in rows if int(r["n"]) == max(int(x["n"]) for x in rows)]
            by_theta = {r["theta"]: float(r["error_mean"]) for r in last}
            assert by_theta["1.0"] < by_theta["0.5"]  # more features, closer to EKPCA
        # the log rule keeps l = ceil(log n)
        assert all(
            int(r["l"]) == max(2, int(np.ceil(np.log(int(r["n"])))))
            for r in b
            if r["dataset"] == ds and r["l_rule"] == "log n"
        )
    slopes = [r for r in _read_csv(out / "slopes.csv") if r["part"] == "a"]
    assert all(float(r["fitted_slope"]) < -0.5 for r in slopes)
    assert set(result["tables"]) == {"vs_m", "vs_n", "slopes", "spectrum"}
