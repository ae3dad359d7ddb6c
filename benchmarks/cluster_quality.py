"""Clustering quality: every ``kernelsketch cluster --method`` against what a user would pick instead.

On every labelled data set we have (MNIST, Avila, Adult, Bank Notes, diabetes -- also with its
missing-value codes imputed --, scikit-learn's digits, iris, wine, breast cancer, and non-convex
synthetic sets: moons, circles, anisotropic blobs), for ``--seeds`` seeds each: the adjusted Rand
index (ARI) and normalized mutual information (NMI) against the true classes, mean and standard
deviation over seeds, and the time and peak extra memory of one run.

Ours (the library calls ``kernelsketch cluster`` makes, :func:`kernelsketch.cluster_file`):

* ``spectral`` -- the default: landmark spectral clustering, standardized when the columns are in
  different units (``standardize="auto"``), missing-value codes warned of and kept (the default since the
  spectral-recipe protocol; runs before it imputed them here); ``spectral (raw)`` the same never
  standardized, ``spectral (codes imputed)`` with the codes read as their column's median;
* ``kjl``, ``subsample-kpca``, ``nystroem-kkm``, ``kmeans`` -- the other ``--method`` values.

References, on the same data in memory:

* ``KMeans raw`` / ``KMeans std`` -- scikit-learn ``KMeans(k, n_init=10)`` on the raw and the
  standardized features;
* ``skl Nystroem+KMeans`` -- ``Nystroem(gamma=2 / median squared distance, n_components=500)``
  then ``KMeans(k, n_init=10)``;
* ``skl Spectral kNN`` -- ``SpectralClustering(affinity="nearest_neighbors", n_neighbors=10)``
  where it fits (N <= 25,000);
* ``dask-ml Spectral`` -- ``dask_ml.cluster.SpectralClustering`` (the ``bench`` extra) on the
  standardized features, where it finishes in reasonable time (N <= 800);
* ``HDBSCAN raw`` / ``HDBSCAN std`` -- scikit-learn ``HDBSCAN()`` with its defaults (what a user picks
  for non-convex clusters; it chooses the number of clusters itself, its noise points count as one
  more cluster) on the raw and the standardized features, N <= 25,000; deterministic, so one run.

The summary table counts each data set once: ``diabetes-imputed`` (diabetes with its missing-value
codes read as medians) is a separate experiment, shown but not counted.

Then the label-free model selection: for each set, which ``n_neighbors`` (5, 10, 20, 40) and
which ``k`` (2 .. 12) ``LandmarkSpectralClustering.score`` (the eigengap) picks, against the
ARI-best.

Usage (writes ``benchmarks/results/cluster-quality.md``, ``.csv`` and ``docs/cluster_quality.png``)::

    python -m benchmarks.cluster_quality [--seeds 5] [--quick] [--output FILE]
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
import warnings

import numpy as np

from ._harness import machine_info, peak_extra_mb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
DATASETS = (
    "mnist",
    "avila",
    "adult",
    "banknote",
    "diabetes",
    "diabetes-imputed",
    "digits",
    "iris",
    "wine",
    "breast_cancer",
    "moons",
    "circles",
    "aniso",
)
QUICK_SETS = ("iris", "wine", "moons")
OURS = ("spectral", "spectral (raw)", "spectral (codes imputed)", "kjl", "subsample-kpca", "nystroem-kkm", "kmeans")
REFERENCES = (
    "KMeans raw",
    "KMeans std",
    "skl Nystroem+KMeans",
    "skl Spectral kNN",
    "HDBSCAN raw",
    "HDBSCAN std",
    "dask-ml Spectral",
)
#: HDBSCAN has no seed (the same clusters every run): one run; and it runs where it finishes in minutes
HDBSCAN_MAX_ROWS = 25_000
#: the sets shown but not counted in the summary (a variant of another set: each set is counted once)
NOT_COUNTED = ("diabetes-imputed",)
SKL_SPECTRAL_MAX_ROWS = 25_000
DASK_ML_MAX_ROWS = 800
#: dask-ml's spectral clustering takes 10-80 s a run on these sizes: its first seeds only
DASK_ML_SEEDS = 1
#: scikit-learn KMeans(n_init=10) on MNIST's 70,000 x 784 takes minutes a run: its first seeds there
SLOW_REFERENCE_SEEDS = {("mnist", "KMeans raw"): 1, ("mnist", "KMeans std"): 1, ("mnist", "skl Nystroem+KMeans"): 1}
#: the k grid of the model-selection table fits 2 x 11 models: on the sets up to this size
K_GRID_MAX_ROWS = 25_000


def load(name):
    """``(X, y)`` float64 features and labels of a named set (synthetic ones with a fixed seed)."""
    from sklearn import datasets as skd

    import kernelsketch as ks

    if name in ("digits", "iris", "wine", "breast_cancer"):
        d = getattr(skd, f"load_{name}")()
        return d.data.astype(np.float64), d.target
    if name == "moons":
        return skd.make_moons(2000, noise=0.08, random_state=0)
    if name == "circles":
        return skd.make_circles(2000, noise=0.05, factor=0.5, random_state=0)
    if name == "aniso":
        X, y = skd.make_blobs(3000, centers=3, random_state=170)
        return X @ np.array([[0.6, -0.6], [-0.4, 0.8]]), y
    if name == "diabetes-imputed":  # diabetes with the codes diagnose finds replaced by the column medians
        from kernelsketch.diagnostics import missing_value_codes

        X, y = load("diabetes")
        X = X.copy()
        for c in missing_value_codes(X):
            col = X[:, c["column"]]
            col[col == c["value"]] = np.median(col[col != c["value"]])
        return X, y
    X, y = ks.load_dataset(name)
    if hasattr(X, "toarray"):  # adult: 48,842 x 123 binary, 48 MB dense; every reference takes it as it is
        X = X.toarray()
    return np.asarray(X, dtype=np.float64), np.asarray(y)


def _ours(method, X, k, seed):
    """``kernelsketch cluster --method METHOD -k K --seed SEED``, as the CLI builds it."""
    import kernelsketch as ks

    if method.startswith("spectral"):
        return ks.cluster_file(
            X,
            k,
            embedding="spectral",
            standardize=False if method == "spectral (raw)" else None,
            missing_codes="impute" if method == "spectral (codes imputed)" else "warn",
            random_state=seed,
        ).labels
    if method == "kjl":
        emb = "kjl"
    elif method == "subsample-kpca":
        emb = ks.SubsampleKPCA(n_components=k, random_state=seed)
    elif method == "nystroem-kkm":
        emb = ks.Nystroem(n_landmarks="auto", n_components=min(10 * k, 200), random_state=seed)
    else:
        emb = None
    # (the command line's one scaling rule for every method since 2026-11-28; runs before then did not scale these)
    return ks.cluster_file(X, k, embedding=emb, standardize="auto", random_state=seed).labels


def _reference(method, X, k, seed):
    from sklearn.cluster import KMeans, SpectralClustering
    from sklearn.kernel_approximation import Nystroem
    from sklearn.metrics.pairwise import euclidean_distances
    from sklearn.preprocessing import StandardScaler

    if method == "KMeans raw":
        return KMeans(k, n_init=10, random_state=seed).fit_predict(X)
    if method == "KMeans std":
        return KMeans(k, n_init=10, random_state=seed).fit_predict(StandardScaler().fit_transform(X))
    if method == "skl Nystroem+KMeans":
        rng = np.random.default_rng(seed)
        sub = X[rng.choice(X.shape[0], min(X.shape[0], 2000), replace=False)]
        d2 = euclidean_distances(sub, squared=True)  # (a broadcast difference is 25 GB on MNIST)
        gamma = 2.0 / np.median(d2[np.triu_indices_from(d2, 1)])
        F = Nystroem(gamma=gamma, n_components=min(500, X.shape[0]), random_state=seed).fit_transform(X)
        return KMeans(k, n_init=10, random_state=seed).fit_predict(F)
    if method == "skl Spectral kNN":
        if X.shape[0] > SKL_SPECTRAL_MAX_ROWS:
            return None
        return SpectralClustering(k, affinity="nearest_neighbors", n_neighbors=10, random_state=seed).fit_predict(X)
    if method in ("HDBSCAN raw", "HDBSCAN std"):
        from sklearn.cluster import HDBSCAN

        if X.shape[0] > HDBSCAN_MAX_ROWS:
            return None
        return HDBSCAN().fit_predict(X if method == "HDBSCAN raw" else StandardScaler().fit_transform(X))
    if method == "dask-ml Spectral":
        if X.shape[0] > DASK_ML_MAX_ROWS:
            return None
        try:
            from dask_ml.cluster import SpectralClustering as DaskSpectral
        except ImportError:
            return None
        Xs = StandardScaler().fit_transform(X)
        return np.asarray(DaskSpectral(k, random_state=seed, n_components=min(500, X.shape[0] - 1)).fit_predict(Xs))
    raise ValueError(method)


def _load_cache(path):
    import json

    if not os.path.exists(path):
        return {}
    with open(path) as fh:
        return json.load(fh)


def _save_cache(path, cache):
    import json

    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(cache, fh, default=lambda v: v.item() if hasattr(v, "item") else str(v))
    os.replace(tmp, path)


def run_method(method, X, y, k, seeds):
    """ARI and NMI per seed, the first seed's wall time and peak extra MiB; None when it does not apply."""
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    fn = _ours if method in OURS else _reference
    aris, nmis, seconds, peak = [], [], None, None
    for i, seed in enumerate(seeds):
        box = {}

        def call(seed=seed, box=box):
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                box["labels"] = fn(method, X, k, seed)
            box["seconds"] = time.perf_counter() - t0
            return box["labels"]

        if i == 0:
            peak = peak_extra_mb(call)
            seconds = box["seconds"]
        else:
            call()
        if box["labels"] is None:
            return None
        aris.append(adjusted_rand_score(y, box["labels"]))
        nmis.append(normalized_mutual_info_score(y, box["labels"]))
    return {"ari": aris, "nmi": nmis, "seconds": seconds, "peak_mib": peak}


def model_selection(X, y, k, seed=0):
    """What each estimator's label-free ``score`` picks, against the ARI-best setting.

    ``LandmarkSpectralClustering.score`` (the relative eigengap) chooses ``n_neighbors``
    (5, 10, 20, 40) at the true ``k`` and ``k`` (2 .. 12) at the default ``n_neighbors``;
    ``NystroemKernelKMeans.score`` (the silhouette in the embedding) chooses the bandwidth
    (``h`` = 0.5, 1, 2 times the 25th percentile of distances) and ``k``.  Each setting is
    fitted on all rows and scored on them, as a one-fold grid search would.
    """
    from sklearn.metrics import adjusted_rand_score

    import kernelsketch as ks

    ks_grid = list(range(2, 13))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, scaler = ks.standardize_source(X, when="auto")
        Xs = X if scaler is None else scaler.transform(X)
        h0 = ks.kernels.estimate_bandwidth(X, "percentile", random_state=seed)

        def spectral(**kw):
            est = ks.LandmarkSpectralClustering(random_state=seed, **kw).fit(Xs)
            return est.score(Xs), adjusted_rand_score(y, est.labels_)

        def kkm(**kw):
            est = ks.NystroemKernelKMeans(random_state=seed, n_init=3, **kw).fit(X)
            return est.score(X), adjusted_rand_score(y, est.labels_)

        grids = {
            ("spectral", "n_neighbors"): {r: spectral(n_clusters=k, n_neighbors=r) for r in (5, 10, 20, 40)},
            ("nystroem-kkm", "bandwidth"): {f"{f:g} h": kkm(n_clusters=k, bandwidth=f * h0) for f in (0.5, 1, 2)},
        }
        if X.shape[0] <= K_GRID_MAX_ROWS:
            grids[("spectral", "k")] = {kk: spectral(n_clusters=kk) for kk in ks_grid}
            grids[("nystroem-kkm", "k")] = {kk: kkm(n_clusters=kk) for kk in ks_grid}
    out = {}
    for key, grid in grids.items():
        picked = max(grid, key=lambda v: grid[v][0])
        best = k if key[1] == "k" else max(grid, key=lambda v: grid[v][1])
        out[key] = {"picked": picked, "ari_picked": grid[picked][1], "best": best, "ari_best": grid[best][1]}
    return out


#: global bandwidths the spectral method's per-row default ("local", the main table's row) is compared with
BANDWIDTHS = ("median", "0.5 median", "2 median", "percentile")


def bandwidth_comparison(X, y, k, seeds):
    """ARI per seed of the default spectral clustering with each of :data:`BANDWIDTHS`.

    Everything but the bandwidth is the default's (codes imputed, columns standardized when their units
    differ, 1,000 landmarks, 10 neighbours); a global ``h`` is computed on the rows the embedding sees
    (``"median"``: the median pairwise distance, scaled 0.5x and 2x; ``"percentile"``: the 25th
    percentile, the other methods' default), against the default's ``"local"`` (each row's distance to
    its 10th nearest landmark; the main table's ``spectral`` row).  A bandwidth that makes a row's
    affinities all 0 is an error there: ``None``.
    """
    from sklearn.metrics import adjusted_rand_score

    import kernelsketch as ks

    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in seeds:
            engine, _ = ks.replace_missing_codes(X, random_state=seed)
            engine, _ = ks.standardize_source(engine, when="auto")
            Xs = engine.gather(np.arange(X.shape[0]))[0]
            h_med = ks.kernels.estimate_bandwidth(Xs, "median", random_state=seed)
            for name in BANDWIDTHS:
                if out.get(name, []) is None:  # failed on an earlier seed
                    continue
                h = {"0.5 median": 0.5 * h_med, "2 median": 2 * h_med}.get(name, name)
                est = ks.LandmarkSpectralEmbedding(n_components=k, bandwidth=h, random_state=seed)
                try:
                    labels = ks.cluster_file(X, k, embedding=est, standardize="auto", random_state=seed).labels
                    out.setdefault(name, []).append(adjusted_rand_score(y, labels))
                except ValueError:
                    out[name] = None
    return out


def _bandwidth_lines(results, bandwidths):
    """The table of the spectral method's ARI by bandwidth, and where the default is within noise of the best."""
    lines = [
        "## Bandwidths for the spectral method",
        "",
        "ARI of the default `spectral` with its per-row bandwidth (`local`: each row's distance to its 10th nearest "
        "landmark, Zelnik-Manor & Perona's self-tuning scale) and with one global `h` for all rows: the median "
        "pairwise distance of the rows it embeds (standardized where the default standardizes), half and twice it, "
        "and the 25th percentile (the other methods' default). `error`: some row's affinities all vanish.",
        "",
        "| data | local (default) | " + " | ".join(BANDWIDTHS) + " |",
        "|---" * (len(BANDWIDTHS) + 2) + "|",
    ]
    near = 0
    for s, per in bandwidths.items():
        local = results[s]["spectral"]["ari"]
        ok = [v for v in per.values() if v]
        near += all(np.mean(local) >= np.mean(v) - max(np.std(local), np.std(v)) - 0.005 for v in ok)
        cells = [_fmt(per[b]) if per.get(b) else "error" for b in BANDWIDTHS]
        lines.append(f"| {s} | {_fmt(local)} | " + " | ".join(cells) + " |")
    worse = {
        b: [
            s
            for s, per in bandwidths.items()
            if not per.get(b) or np.mean(per[b]) < np.mean(results[s]["spectral"]["ari"]) - 0.1
        ]
        for b in BANDWIDTHS
    }
    lines += [
        "",
        f"`local` is within one standard deviation (and 0.005) of the best global bandwidth on {near} of "
        f"{len(bandwidths)} sets. A global bandwidth fails (`error`) or falls more than 0.1 below `local` on: "
        + "; ".join(f"{b}: {', '.join(w) if w else 'none'}" for b, w in worse.items())
        + ". That is why `local` is the default: it is never far from the best and never breaks.",
        "",
    ]
    return lines


def _fmt(v):
    return f"{np.mean(v):.3f} ± {np.std(v):.3f}"


def render(results, selection, bandwidths, seeds, info, quick):
    sets = list(results)
    methods = [*OURS, *REFERENCES]
    lines = [
        "# Clustering quality: ARI / NMI against the true classes",
        "",
        f"`python -m benchmarks.cluster_quality{' --quick' if quick else ''} --seeds {len(seeds)}` "
        f"(seeds {', '.join(map(str, seeds))}); {info.get('date', '')}, {info.get('cpu', '')}, "
        f"kernelsketch {info.get('commit', '')}." + (f" {info['resumed']}" if info.get("resumed") else ""),
        "Each cell: mean ± standard deviation over the seeds (the method's `random_state`; the data "
        f"are fixed); dask-ml's spectral clustering over its first {DASK_ML_SEEDS} seeds, HDBSCAN once (it has no "
        "seed), and scikit-learn's k-means references on MNIST over their first seed (each run takes minutes). "
        "`-`: not run (does not fit in memory or time: scikit-learn's spectral "
        f"clustering and HDBSCAN above {SKL_SPECTRAL_MAX_ROWS:,} rows, dask-ml's above {DASK_ML_MAX_ROWS:,}).",
        "",
    ]
    for metric in ("ari", "nmi"):
        lines += [f"## {metric.upper()}", "", "| method | " + " | ".join(sets) + " |", "|---" * (len(sets) + 1) + "|"]
        for m in methods:
            cells = [_fmt(results[s][m][metric]) if results[s].get(m) else "-" for s in sets]
            lines.append(f"| {m} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += [
        "## Time (s) and peak extra memory (MiB) of one run",
        "",
        "| method | " + " | ".join(sets) + " |",
        "|---" * (len(sets) + 1) + "|",
    ]
    for m in methods:
        cells = []
        for s in sets:
            r = results[s].get(m)
            cells.append(
                "-"
                if not r
                else f"{r['seconds']:.2f} s / {r['peak_mib']:.0f}"
                if r["peak_mib"] is not None
                else f"{r['seconds']:.2f} s"
            )
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    lines += ["", "## The default against k-means, the best of ours against the best reference", ""]
    lines += [
        "| data | default (spectral) ARI | KMeans raw ARI | KMeans std ARI | default >= both - 1 sd | best of ours | "
        "its ARI | best reference | its ARI |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    held = beat = 0
    failed = []
    counted = [s for s in sets if s not in NOT_COUNTED]
    for s in sets:
        d = results[s]["spectral"]["ari"]
        raw, std = results[s]["KMeans raw"]["ari"], results[s]["KMeans std"]["ari"]
        ok = all(np.mean(d) >= np.mean(v) - max(np.std(d), np.std(v)) for v in (raw, std))
        ours = max((m for m in OURS if results[s].get(m)), key=lambda m: np.mean(results[s][m]["ari"]))
        refs = [m for m in REFERENCES if results[s].get(m)]  # every reference, k-means on either input included
        ref = max(refs, key=lambda m: np.mean(results[s][m]["ari"]))
        won = np.mean(results[s][ours]["ari"]) >= np.mean(results[s][ref]["ari"]) - 0.005
        if s in counted:
            held += ok
            beat += won
            if not ok:
                failed.append(s)
        lines.append(
            f"| {s}{' (not counted)' if s not in counted else ''} | {_fmt(d)} | {_fmt(raw)} | {_fmt(std)} | "
            f"{'yes' if ok else 'NO'} | {ours} | "
            f"{np.mean(results[s][ours]['ari']):.3f} | {ref} | {np.mean(results[s][ref]['ari']):.3f} |"
        )
    lines += [
        "",
        (
            f"Each data set counted once ({', '.join(n for n in NOT_COUNTED if n in sets)}: a variant of another "
            "set, shown, not counted). "
            if any(n in sets for n in NOT_COUNTED)
            else ""
        )
        + f"The default holds against k-means on raw and on standardized features (within one sd) on {held} of "
        f"{len(counted)} sets"
        + (f" (not on {', '.join(failed)})" if failed else "")
        + f"; the best of ours is at least the best reference (every one above, to 0.005) on {beat} of "
        f"{len(counted)}.",
        "",
    ]
    lines += _bandwidth_lines(results, bandwidths)
    lines += [
        "## Label-free model selection (each estimator's `score`)",
        "",
        "`LandmarkSpectralClustering.score`: the relative eigengap of the normalized affinity; "
        "`NystroemKernelKMeans.score`: the silhouette of a 2,000-row sample in the embedding. For `k` "
        "the right pick is the true number of classes; for a parameter, the setting with the best ARI.",
        "",
        "| data | estimator | chooses | picked | its ARI | right | its ARI |",
        "|---|---|---|---|---|---|---|",
    ]
    hits = {}
    for s, sel in selection.items():
        for (est, param), r in sel.items():
            ok = r["picked"] == r["best"] or (param != "k" and r["ari_picked"] >= r["ari_best"] - 0.02)
            hits.setdefault((est, param), []).append(ok)
            lines.append(
                f"| {s} | {est} | {param} | {r['picked']} | {r['ari_picked']:.3f} | {r['best']} | {r['ari_best']:.3f} |"
            )
    lines.append("")
    for (est, param), oks in hits.items():
        what = "the true k" if param == "k" else f"a {param} within 0.02 ARI of the best"
        lines.append(f"- `{est}` picks {what} on {sum(oks)} of {len(oks)} sets.")
    lines.append("")
    return "\n".join(lines)


PAGE_INTRO = """# Clustering quality

Which clusters does `kernelsketch cluster` give, against what a user would pick instead? This page is
written by `python -m benchmarks.cluster_quality` from the same run as
`benchmarks/results/cluster-quality.md` (and its `.csv`, one row per data set, method
and seed): nothing below is typed by hand.

**What is compared.** Every `--method` of `kernelsketch cluster`, through the library call the command line
makes (`kernelsketch.cluster_file`): `spectral` (the default of the commit the run below names, `git` in its
heading; since 2026-11-28 the default also chooses between k-means' labels and Genie's on the landmarks
(`--assign-labels`), so a run before that date measured k-means on the embedding: landmark spectral clustering, columns
standardized when their units differ, each row's nearest landmarks found by U-SPEC's approximate search when the
data has at most 40 columns: `benchmarks/results/approximate-search.md`), `spectral (raw)` (never standardized),
`spectral (codes imputed)` (missing-value codes read as their column's median, below), `kjl` (the Kernel JL paper's
pipeline, the former default), `subsample-kpca`, `nystroem-kkm` and `kmeans` (plain k-means of the features).
Against them: scikit-learn's `KMeans` on the raw and on the standardized features, `Nystroem` + `KMeans`,
`SpectralClustering` with a k-nearest-neighbour affinity (where it fits in memory), `HDBSCAN` with its defaults
on the raw and on the standardized features (what a user picks for non-convex clusters; it chooses the number of
clusters itself, and its noise points count as one more cluster), and dask-ml's `SpectralClustering` (the `bench`
extra; on the small sets, where it finishes in reasonable time). The summary counts each data set once
(`diabetes-imputed` is a separate experiment on diabetes) and sets the default against k-means on both inputs.

**On which data.** The benchmark's sets are every labelled set the project has: MNIST, Avila, Adult, Bank
Notes and diabetes from `../shared/datasets`; scikit-learn's digits, iris, wine and breast cancer; and three
synthetic sets with clusters k-means cannot draw (two moons, two circles, anisotropic blobs). `k` is the number
of classes. The tables below hold the sets of the committed run (see its command line).

**Why the default is `spectral`.** It is the method with the best ARI across the table, and the only one that
follows non-convex clusters. The Kernel JL pipeline stays available by name (`--method kjl`) for fidelity to the
paper. Every method of ours runs through `cluster_file`, which by default warns of missing-value codes and keeps
them (`missing_codes="impute"`, `--missing-codes impute` reads them as their column's median):
`kernelsketch.diagnostics.missing_value_codes`
finds, in a sample of 5,000 rows, a whole number at a column's end, held by a minority of rows, more than 5 steps
of the others' grid beyond them, and cut off by more than their interquartile range or a spike. On these sets it
finds diabetes' five (glucose, blood pressure, skin thickness, insulin and BMI recorded as 0) and one on breast
cancer (13 rows of concavity error 0), nothing elsewhere. Kept, diabetes' 35 rows of blood pressure 0 form a tight
group that our spectral method and scikit-learn's split off (the default `spectral` row; imputed, the
`spectral (codes imputed)` row); raw k-means' score there came from the insulin code, 0 in half the rows of the column
with the largest numbers. `diabetes-imputed` is diabetes with those codes median-imputed before any method sees
it, so the references get the same repair (compare their two columns).

![ARI of the default and the alternatives](cluster_quality.png)

"""


#: the floor benchmark's latest committed page (the current default's figures)
FLOOR_PAGE = "cluster-floor-reduce-pieces.md"


def scale_paragraph(path=None):
    """The page's "At scale" paragraph, its figures read from the committed floor benchmark (empty without it)."""
    import re

    path = os.path.join(RESULTS, FLOOR_PAGE) if path is None else path
    try:
        text = open(path).read()
    except OSError:
        return ""
    jobs = text.split("### The job")  # (a page of two shapes: the first, 5,000,000 x 20, is this paragraph's)
    if len(jobs) > 2:
        text = "### The job".join(jobs[:2])
    rows = dict(re.findall(r"^\| (.+?) \| ([0-9.]+) \| [0-9,.]+", text, flags=re.M))
    ours = next((v for k, v in rows.items() if k.startswith("`kernelsketch cluster X.npy -k 8 -o labels.npy`")), None)
    exact = next((v for k, v in rows.items() if "--search exact" in k), None)
    mbk = next((v for k, v in rows.items() if k.startswith("scikit-learn `MiniBatchKMeans")), None)
    rss = re.search(r"peak RSS ([0-9,]+) MiB \(target", text)
    date = re.search(r"^- date: (.+)$", text, flags=re.M)
    cpu = re.search(r"^- CPU: ([^;]+); cores: (\d+) logical", text, flags=re.M)
    rounds = re.search(r"^Wall: the median of (\d+) fresh-process runs", text, flags=re.M)
    ratio = re.search(r"Ours / MiniBatchKMeans wall, the median of the rounds' ratios: \*\*([0-9.]+)x\*\*", text)
    dask = re.search(r"`--workers 2` / the local run, the median of the rounds' ratios: \*\*([0-9.]+)x\*\*", text)
    if not (ours and mbk and rss):
        return ""
    return (
        f"**At scale** (`python -m benchmarks.cluster_floor`, `benchmarks/results/{os.path.basename(path)}`"
        f"{', ' + date.group(1) if date else ''}"
        f"{f', {cpu.group(1)}, {cpu.group(2)} cores' if cpu else ''}): the default `cluster` of 5,000,000 x 20 "
        "float32 rows (8 blobs, "
        f"k = 8) takes {ours} s in {rss.group(1)} MiB"
        + (f" ({exact} s with the exact search)" if exact else "")
        + f", against {mbk} s for scikit-learn's `MiniBatchKMeans` on the same file in the same run"
        + (
            f" (medians of {rounds.group(1)} alternated runs of each; the rounds' ratios' median {ratio.group(1)}x)"
            if rounds and ratio
            else ""
        )
        + (f"; `--workers 2` takes {dask.group(1)}x the local run" if dask else "")
        + (f"{' and' if dask else '; `--workers 2`'} gives the same labels" if "identical labels: yes" in text else "")
        + ".\n\n"
    )


def write_page(md, path):
    """The docs page: the fixed introduction, then the tables of this run (and the block ``cluster_pool`` wrote,
    kept as it is)."""
    from .cluster_pool import POOL_END, POOL_START

    body = md.split("\n", 1)[1]  # the results file without its title
    intro = PAGE_INTRO.replace("![ARI of the default", scale_paragraph() + "![ARI of the default", 1)
    pool = ""
    if os.path.exists(path):
        old = open(path).read()
        if POOL_START in old and POOL_END in old:
            pool = "\n" + POOL_START + old.split(POOL_START, 1)[1].split(POOL_END, 1)[0] + POOL_END + "\n"
    with open(path, "w") as fh:
        fh.write(intro + body.lstrip("\n") + pool)


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sets = list(results)
    methods = [
        "spectral",
        "kjl",
        "nystroem-kkm",
        "KMeans raw",
        "KMeans std",
        "skl Nystroem+KMeans",
        "skl Spectral kNN",
        "HDBSCAN std",
    ]
    fig, ax = plt.subplots(figsize=(11, 4))
    width = 0.8 / len(methods)
    for i, m in enumerate(methods):
        mean = [np.mean(results[s][m]["ari"]) if results[s].get(m) else np.nan for s in sets]
        sd = [np.std(results[s][m]["ari"]) if results[s].get(m) else 0 for s in sets]
        ax.bar(np.arange(len(sets)) + i * width, mean, width, yerr=sd, label=m)
    ax.set_xticks(np.arange(len(sets)) + 0.4 - width / 2, sets)
    ax.set_ylabel("ARI (mean ± sd over seeds)")
    ax.legend(ncol=4, fontsize=8)
    ax.set_title("kernelsketch cluster: the default (spectral) and the alternatives")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="three small sets, two seeds (a smoke run)")
    ap.add_argument("--output", default=os.path.join(RESULTS, "cluster-quality.md"))
    ap.add_argument("--plot", default=os.path.join(ROOT, "docs", "cluster_quality.png"))
    ap.add_argument(
        "--page",
        default=os.path.join(ROOT, "docs", "clustering_quality.md"),
        help="the docs page written from the results ('' for none)",
    )
    ap.add_argument("--sets", default=None, help="comma-separated data sets (default: all)")
    ap.add_argument("--resume", action="store_true", help="reuse the results a stopped run kept (OUTPUT.partial.json)")
    args = ap.parse_args(argv)
    seeds = list(range(2 if args.quick else args.seeds))
    sets = args.sets.split(",") if args.sets else (QUICK_SETS if args.quick else DATASETS)
    results, selection, bandwidths = {}, {}, {}
    # results are kept as they come (a long run can be resumed, or extended by sets: --resume)
    cache_path = os.path.splitext(args.output)[0] + ".partial.json"
    cache = _load_cache(cache_path) if args.resume else {}
    reused = len(cache)
    for name in sets:
        X, y = load(name)
        k = len(np.unique(y))
        results[name] = {}
        for m in (*OURS, *REFERENCES):
            if m == "dask-ml Spectral":
                n_seeds = DASK_ML_SEEDS
            elif m.startswith("HDBSCAN"):
                n_seeds = 1  # no seed: every run gives the same clusters
            else:
                n_seeds = SLOW_REFERENCE_SEEDS.get((name, m), len(seeds))
            key = f"{name}|{m}|{len(seeds[:n_seeds])}"
            if key not in cache:
                cache[key] = run_method(m, X, y, k, seeds[:n_seeds])
                _save_cache(cache_path, cache)
            results[name][m] = r = cache[key]
            print(
                f"{name:14s} {m:22s} " + ("-" if r is None else f"ARI {_fmt(r['ari'])}  {r['seconds']:.2f} s"),
                flush=True,
            )
        key = f"{name}|selection"
        if key not in cache:
            cache[key] = {"|".join(k2): v for k2, v in model_selection(X, y, k).items()}
            _save_cache(cache_path, cache)
        selection[name] = {tuple(k2.split("|")): v for k2, v in cache[key].items()}
        key = f"{name}|bandwidths|{len(seeds)}"
        if key not in cache:
            cache[key] = bandwidth_comparison(X, y, k, seeds)
            _save_cache(cache_path, cache)
        bandwidths[name] = cache[key]
    info = machine_info()
    md = render(
        results,
        selection,
        bandwidths,
        seeds,
        {
            "date": time.strftime("%Y-%m-%d"),
            "cpu": info.get("cpu", ""),
            "commit": info.get("kernelsketch", ""),
            "resumed": (
                f"Resumed (`--resume`): {reused} results kept by an earlier run of this benchmark were reused; "
                f"{len(cache) - reused} were computed in this run."
                if args.resume and reused
                else ""
            ),
        },
        args.quick,
    )
    with open(args.output, "w") as fh:
        fh.write(md)
    with open(os.path.splitext(args.output)[0] + ".csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["data", "method", "seed", "ari", "nmi", "seconds_first_run", "peak_mib_first_run"])
        for s, per in results.items():
            for m, r in per.items():
                if r:
                    for seed, a, n in zip(seeds[: len(r["ari"])], r["ari"], r["nmi"], strict=True):
                        w.writerow(
                            [
                                s,
                                m,
                                seed,
                                f"{a:.6f}",
                                f"{n:.6f}",
                                f"{r['seconds']:.4f}",
                                "" if r["peak_mib"] is None else f"{r['peak_mib']:.1f}",
                            ]
                        )
        for s, per in bandwidths.items():  # the bandwidth table: ARI only
            for b, aris in per.items():
                for seed, a in zip(seeds, aris or [], strict=False):
                    w.writerow([s, f"spectral bandwidth={b}", seed, f"{a:.6f}", "", "", ""])
    if args.plot:
        plot(results, args.plot)
    if args.page and not args.quick:
        write_page(md, args.page)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
