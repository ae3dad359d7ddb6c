"""c) Random Fourier features: 100,000 x 50 input, 1,000 features, vs ``RBFSampler``.

Target (issue): >= 5x faster than ``sklearn.kernel_approximation.RBFSampler``
in float64, with the output accurate to 1e-6 absolute -- checked against the
exact ``sqrt(2/m) cos(X W + b)`` of the fitted weights, computed in float64
with ``np.cos``.
"""

from __future__ import annotations

import numpy as np

from ._harness import CaseResult, Comparison, Metric, RunConfig, peak_extra_mb, require, time_interleaved

NAME = "rff"
TITLE = "c) Random Fourier features, 100,000 x 50 input, 1,000 features"

FULL = {"n_samples": 100_000, "n_features": 50, "n_random_features": 1_000}
QUICK = {"n_samples": 3_000, "n_features": 50, "n_random_features": 200}


def expected_rows(quick: bool) -> list:
    return [
        "RandomFourierFeatures.transform vs RBFSampler.transform (float64)",
        "RandomFourierFeatures.transform float32 vs RBFSampler.transform (float32)",
    ]


def run(cfg: RunConfig) -> CaseResult:
    from sklearn.kernel_approximation import RBFSampler

    RFF = require("kernelsketch.maps", "RandomFourierFeatures")
    sizes = QUICK if cfg.quick else FULL
    N, p, m = sizes["n_samples"], sizes["n_features"], sizes["n_random_features"]
    repeats = cfg.n_repeats(5)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((N, p))
    X32 = X.astype(np.float32)
    h = float(np.sqrt(2.0 * p))
    res = CaseResult(
        NAME,
        TITLE,
        setup=(
            f"X: {N:,} x {p} standard normal, Gaussian kernel h = sqrt(2 p) (RBFSampler gamma = 1/h^2), "
            f"m = {m:,} features; transform only; median of {repeats} interleaved runs after 1 warm-up."
        ),
    )

    ours64 = RFF(n_random_features=m, bandwidth=h, random_state=0).fit(X)
    ours32 = RFF(n_random_features=m, bandwidth=h, random_state=0).fit(X32)
    sk64 = RBFSampler(gamma=1.0 / h**2, n_components=m, random_state=0).fit(X)
    sk32 = RBFSampler(gamma=1.0 / h**2, n_components=m, random_state=0).fit(X32)
    fns = {
        "ours64": lambda: ours64.transform(X),
        "sk64": lambda: sk64.transform(X),
        "ours32": lambda: ours32.transform(X32),
        "sk32": lambda: sk32.transform(X32),
    }
    cfg.log(f"[{NAME}] transforms")
    t = time_interleaved(fns, repeats)
    mem = {k: (peak_extra_mb(f) if cfg.measure_memory else None) for k, f in fns.items()}
    res.comparisons += [
        Comparison(
            "RandomFourierFeatures.transform vs RBFSampler.transform (float64)",
            "RandomFourierFeatures",
            "sklearn RBFSampler",
            t["ours64"].median,
            t["sk64"].median,
            5.0,
            ">= 5x",
            mem["ours64"],
            mem["sk64"],
        ),
        Comparison(
            "RandomFourierFeatures.transform float32 vs RBFSampler.transform (float32)",
            "RandomFourierFeatures float32",
            "sklearn RBFSampler float32",
            t["ours32"].median,
            t["sk32"].median,
            None,
            "",
            mem["ours32"],
            mem["sk32"],
        ),
    ]

    # accuracy: exact features of the same fitted weights (variant "cos": sqrt(2/m) cos(XW + b))
    W = np.asarray(ours64.random_weights_, dtype=np.float64)
    b = np.asarray(ours64.random_offset_, dtype=np.float64)
    rows = slice(0, min(N, 20_000))
    exact = np.sqrt(2.0 / m) * np.cos(X[rows] @ W + b)
    err = float(np.max(np.abs(ours64.transform(X[rows]) - exact)))
    res.metrics.append(Metric("float64 max |ours - sqrt(2/m) cos(XW + b)| (first 20,000 rows)", err, "", 1e-6, "<="))
    err32 = float(
        np.max(
            np.abs(
                ours32.transform(X32[rows]).astype(np.float64)
                - np.sqrt(2.0 / m)
                * np.cos(
                    X32[rows].astype(np.float64) @ np.asarray(ours32.random_weights_, np.float64)
                    + np.asarray(ours32.random_offset_, np.float64)
                )
            )
        )
    )
    res.metrics.append(Metric("float32 max |ours - exact features| (first 20,000 rows)", err32, ""))
    return res
