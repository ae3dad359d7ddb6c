"""b) Embedding 100,000 points into d = 50 dimensions from n = 1,000 landmarks.

Targets (issue): ``KernelJL.transform`` and ``Nystroem(n_components=50)
.transform`` >= 5x faster than scikit-learn's ``Nystroem(n_components=1000)
.transform`` and >= 20x faster than scikit-learn's ``Nystroem(1000) ->
PCA(50)`` pipeline fit+transform (ours: fit+transform too); float32 >= 1.6x
faster than our float64.
"""

from __future__ import annotations

import numpy as np

from ._harness import CaseResult, Comparison, NotAvailable, RunConfig, peak_extra_mb, require, time_interleaved

NAME = "embedding"
TITLE = "b) Embedding 100,000 points into d = 50 from n = 1,000 landmarks"

FULL = {"n_samples": 100_000, "n_features": 10, "n_landmarks": 1_000, "n_components": 50}
QUICK = {"n_samples": 3_000, "n_features": 10, "n_landmarks": 200, "n_components": 10}
OURS = (("KernelJL", "kernelsketch.maps", "KernelJL"), ("Nystroem", "kernelsketch.maps", "Nystroem"))


def expected_rows(quick: bool) -> list:
    rows = []
    for label, _, _ in OURS:
        rows += [
            f"{label}.transform vs sklearn Nystroem(n).transform (float64)",
            f"{label} fit+transform vs sklearn Nystroem(n) -> PCA(d) fit+transform (float64)",
            f"{label}.transform float32 vs our float64",
        ]
    return rows


def _make(name, Est, n_landmarks, d, h):
    if name == "KernelJL":
        return Est(n_components=d, n_landmarks=n_landmarks, bandwidth=h, random_state=0)
    return Est(n_landmarks=n_landmarks, n_components=d, bandwidth=h, random_state=0)


def run(cfg: RunConfig) -> CaseResult:
    from sklearn.decomposition import PCA
    from sklearn.kernel_approximation import Nystroem as SkNystroem
    from sklearn.pipeline import make_pipeline

    sizes = QUICK if cfg.quick else FULL
    N, p, n, d = sizes["n_samples"], sizes["n_features"], sizes["n_landmarks"], sizes["n_components"]
    repeats = cfg.n_repeats(5)
    # the scikit-learn pipeline takes several seconds per fit: fewer rounds there
    fit_repeats = cfg.n_repeats(3)
    rng = np.random.default_rng(2)
    X = rng.standard_normal((N, p))
    X32 = X.astype(np.float32)
    h = float(np.sqrt(2.0 * p))
    gamma = 1.0 / h**2
    res = CaseResult(
        NAME,
        TITLE,
        setup=(
            f"X: {N:,} x {p} standard normal, Gaussian kernel h = sqrt(2 p) (sklearn gamma = 1/h^2), "
            f"n = {n:,} landmarks, d = {d}; transforms of the fitted maps on all of X; "
            f"median of {repeats} interleaved runs after 1 warm-up ({fit_repeats} for fit+transform)."
        ),
    )

    def mem(fn):
        return peak_extra_mb(fn) if cfg.measure_memory else None

    sk_nys = SkNystroem(kernel="rbf", gamma=gamma, n_components=n, random_state=0).fit(X)
    pipeline = lambda: make_pipeline(
        SkNystroem(kernel="rbf", gamma=gamma, n_components=n, random_state=0), PCA(n_components=d, random_state=0)
    ).fit_transform(X)

    available = {}
    for label, module, name in OURS:
        try:
            available[label] = require(module, name)
        except NotAvailable as exc:
            res.notes.append(f"{label}: {exc}")
    transforms = {"sklearn": lambda: sk_nys.transform(X)}
    fitted = {}
    for label, Est in available.items():
        est64 = _make(label, Est, n, d, h).fit(X)
        est32 = _make(label, Est, n, d, h).fit(X32)
        fitted[label] = (est64, est32)
        transforms[f"{label}64"] = lambda e=est64: e.transform(X)
        transforms[f"{label}32"] = lambda e=est32: e.transform(X32)
        z32 = est32.transform(X32[:5])
        if z32.dtype != np.float32:
            res.notes.append(f"{label}: float32 input gave {z32.dtype} output")
    cfg.log(f"[{NAME}] transforms")
    t = time_interleaved(transforms, repeats)
    m = {k: mem(f) for k, f in transforms.items()}

    fits = {"pipeline": pipeline}
    for label, Est in available.items():
        fits[label] = lambda Est=Est, label=label: _make(label, Est, n, d, h).fit(X).transform(X)
    cfg.log(f"[{NAME}] fit+transform")
    tf = time_interleaved(fits, fit_repeats)
    mf = {k: mem(f) for k, f in fits.items()}

    for label, _, _name in OURS:
        ok = label in available
        res.comparisons += [
            Comparison(
                f"{label}.transform vs sklearn Nystroem(n).transform (float64)",
                f"{label}.transform",
                f"sklearn Nystroem({n}).transform",
                t[f"{label}64"].median if ok else None,
                t["sklearn"].median,
                5.0,
                ">= 5x",
                m.get(f"{label}64"),
                m["sklearn"],
            ),
            Comparison(
                f"{label} fit+transform vs sklearn Nystroem(n) -> PCA(d) fit+transform (float64)",
                f"{label} fit+transform",
                f"sklearn Nystroem({n}) -> PCA({d})",
                tf[label].median if ok else None,
                tf["pipeline"].median,
                20.0,
                ">= 20x",
                mf.get(label),
                mf["pipeline"],
            ),
            Comparison(
                f"{label}.transform float32 vs our float64",
                f"{label}.transform float32",
                f"{label}.transform float64",
                t[f"{label}32"].median if ok else None,
                t[f"{label}64"].median if ok else None,
                1.6,
                ">= 1.6x",
                m.get(f"{label}32"),
                m.get(f"{label}64"),
            ),
        ]
    if "KernelJL" in fitted:
        z64 = fitted["KernelJL"][0].transform(X[:2000])
        z32 = fitted["KernelJL"][1].transform(X32[:2000])
        rel = float(np.linalg.norm(z32 - z64) / np.linalg.norm(z64))
        res.notes.append(f"KernelJL float32 vs float64 embedding (same seed): relative Frobenius difference {rel:.1e}")
    return res
