"""d) Kernel PCA fits: exact top-10 and the 2,000-landmark approximations.

Targets (issue): exact KPCA top-10 on 5,000 points >= 2x faster than
``sklearn.decomposition.KernelPCA(eigen_solver='arpack')`` with the same
kernel; ``SubsampleKPCA`` / ``Nystroem`` fit with 2,000 landmarks no slower
than scikit-learn's randomized ``KernelPCA`` on those 2,000 points.
"""

from __future__ import annotations

import numpy as np

from ._harness import CaseResult, Comparison, NotAvailable, RunConfig, peak_extra_mb, require, time_interleaved

NAME = "kpca"
TITLE = "d) Kernel PCA fit (exact top-10; 2,000 landmarks)"

FULL = {"n_samples": 5_000, "n_landmarks": 2_000, "n_features": 10, "n_components": 10}
QUICK = {"n_samples": 400, "n_landmarks": 150, "n_features": 5, "n_components": 5}


def expected_rows(quick: bool) -> list:
    return [
        "exact KernelPCA fit (arpack)",
        "exact KernelPCA transform of new points",
        "SubsampleKPCA fit vs randomized KernelPCA on the landmarks",
        "Nystroem fit vs randomized KernelPCA on the landmarks",
    ]


def _top_eigenvalues_match(ours, ref, k):
    a, b = np.sort(ours)[::-1][:k], np.sort(ref)[::-1][:k]
    return float(np.max(np.abs(a - b)) / b[0])


def run(cfg: RunConfig) -> CaseResult:
    from sklearn.decomposition import KernelPCA as SkKernelPCA

    from kernelsketch.decomposition import KernelPCA

    sizes = QUICK if cfg.quick else FULL
    n, nl, d, k = sizes["n_samples"], sizes["n_landmarks"], sizes["n_features"], sizes["n_components"]
    repeats = cfg.n_repeats(3)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((n, d))
    h = float(np.sqrt(2.0 * d))
    gamma = 1.0 / h**2
    res = CaseResult(
        NAME,
        TITLE,
        setup=(
            f"X: {n:,} x {d} standard normal, Gaussian kernel h = sqrt(2 d) (sklearn gamma = 1/h^2), "
            f"top {k} components; landmarks: the first {nl:,} rows (sklearn fits on those rows); "
            f"median of {repeats} interleaved runs after 1 warm-up."
        ),
    )

    def mem(fn):
        return peak_extra_mb(fn) if cfg.measure_memory else None

    # -- exact ------------------------------------------------------------
    ours = lambda: KernelPCA(n_components=k, bandwidth=h, eigen_solver="arpack", random_state=0).fit(X)
    ref = lambda: SkKernelPCA(
        n_components=k,
        kernel="rbf",
        gamma=gamma,
        eigen_solver="arpack",
        random_state=0,
    ).fit(X)
    cfg.log(f"[{NAME}] exact")
    t = time_interleaved({"ours": ours, "ref": ref}, repeats)
    gap = _top_eigenvalues_match(ours().eigenvalues_, ref().eigenvalues_, k)
    res.comparisons.append(
        Comparison(
            "exact KernelPCA fit (arpack)",
            "KernelPCA(arpack)",
            "sklearn KernelPCA(arpack)",
            t["ours"].median,
            t["ref"].median,
            2.0,
            ">= 2x",
            mem(ours),
            mem(ref),
            note=f"top-{k} eigenvalues agree to {gap:.1e} (relative)",
        )
    )
    res.notes.append(f"exact: top-{k} eigenvalues of ours and scikit-learn agree to {gap:.1e} relative to the largest")

    # -- transform of new points by the fitted exact model -------------------------
    n_new = 200 if cfg.quick else 50_000
    Xn = rng.standard_normal((n_new, d))
    fitted_ours, fitted_ref = ours(), ref()
    cfg.log(f"[{NAME}] transform")
    t = time_interleaved({"ours": lambda: fitted_ours.transform(Xn), "ref": lambda: fitted_ref.transform(Xn)}, repeats)
    Za, Zb = fitted_ours.transform(Xn[:500]), fitted_ref.transform(Xn[:500])
    # components are defined up to sign: compare |Z| column by column
    agree = float(np.max(np.abs(np.abs(Za) - np.abs(Zb))) / np.max(np.abs(Zb)))
    res.comparisons.append(
        Comparison(
            "exact KernelPCA transform of new points",
            f"KernelPCA.transform ({n_new:,} x {d})",
            "sklearn KernelPCA.transform",
            t["ours"].median,
            t["ref"].median,
            1.0,
            "no slower (>= 1x)",
            note=f"|components| agree to {agree:.1e} (relative)",
        )
    )
    res.notes.append(
        f"transform: |components| of ours and scikit-learn agree to {agree:.1e} (relative, 500 new points)"
    )

    # -- 2,000 landmarks -------------------------------------------------------
    Xl = X[:nl]
    ref_r = lambda: SkKernelPCA(
        n_components=k,
        kernel="rbf",
        gamma=gamma,
        eigen_solver="randomized",
        random_state=0,
    ).fit(Xl)
    for label, module, name, kwargs in (
        (
            "SubsampleKPCA fit vs randomized KernelPCA on the landmarks",
            "kernelsketch.decomposition",
            "SubsampleKPCA",
            {"n_components": k},
        ),
        ("Nystroem fit vs randomized KernelPCA on the landmarks", "kernelsketch.maps", "Nystroem", {"n_components": k}),
    ):
        try:
            Est = require(module, name)
        except NotAvailable as exc:
            res.comparisons.append(
                Comparison(
                    label, name, "sklearn KernelPCA(randomized)", None, None, 1.0, "no slower (>= 1x)", note=str(exc)
                )
            )
            res.notes.append(f"{name}: not available")
            continue

        def fit_ours(Est=Est, kwargs=kwargs):
            return Est(n_landmarks=nl, bandwidth=h, random_state=0, **kwargs).fit(X)

        cfg.log(f"[{NAME}] {name}")
        t = time_interleaved({"ours": fit_ours, "ref": ref_r}, repeats)
        res.comparisons.append(
            Comparison(
                label,
                f"{name}(n_landmarks={nl})",
                "sklearn KernelPCA(randomized)",
                t["ours"].median,
                t["ref"].median,
                1.0,
                "no slower (>= 1x)",
                mem(fit_ours),
                mem(ref_r),
            )
        )
    return res
