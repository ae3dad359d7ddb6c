"""``kernelsketch demo``: kernel clustering of Bank Notes (and Avila when present).

The README's first command (``./dev demo``).  For each dataset, the main job
as :func:`kernelsketch.cluster_file` runs it at any scale with its default
method: landmark spectral clustering (1,000 landmarks, each row joined to its
10 nearest with a local bandwidth, columns standardized when their units
differ), then k-means (:class:`~kernelsketch.cluster.StreamingKMeans`) with
``k`` = the number of classes; prints the Rand index, the adjusted Rand index
and the timings, and writes the cluster labels (CSV) and a scatter plot (PNG)
into the output folder.  The Kernel JL paper's pipeline (centred Kernel JL,
``d = 10 k``, ``n = "auto"`` landmarks, 25th-percentile bandwidth) runs beside
it, scores printed, for comparison.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

DEMO_SETS = ("banknote", "avila")


#: below this adjusted Rand index the demo says the classes are not groups the features separate
NEAR_CHANCE = 0.2


def run_demo(output, *, seed=0, ui, datasets=DEMO_SETS, force=True):
    """Run the demo; returns the summary dict (one entry per dataset that ran).

    The demo owns its output folder: a rerun replaces its own two files per
    dataset (atomically, and says so); ``force=False`` refuses instead.
    """
    from ..datasets import DatasetNotFoundError, load_dataset
    from ..io.atomic import check_output_path
    from ..io.source import ArraySource
    from ..out_of_core import cluster_file
    from .plotting import scatter_png

    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    ui.say(
        f"landmark spectral clustering (the default of `kernelsketch cluster`), and the Kernel JL paper's "
        f"pipeline for comparison; seed {seed}"
    )
    for name in datasets:
        try:
            X, y = load_dataset(name)
        except DatasetNotFoundError:
            ui.say(f"{name}: not available locally (see `kernelsketch datasets`); skipped")
            continue
        k = len(np.unique(y))
        labels_path, png = out / f"{name}_labels.csv", out / f"{name}_spectral.png"
        for path in (labels_path, png):
            check_output_path(path, force=force)
        if labels_path.exists() or png.exists():
            ui.say(f"{name}: replacing the previous run's {labels_path.name} and {png.name}")
        res = cluster_file(
            ArraySource(X, y, name=name), k, output=labels_path, force=force, random_state=seed, plot_rows=20000
        )
        kjl = cluster_file(ArraySource(X, y, name=name), k, embedding="kjl", random_state=seed)
        sec = res.seconds
        t_embed = sec["fit"] + sec["embed_sample"]
        t_kmeans = sec["kmeans"] + sec["passes"] + sec["assign"]
        ri, ari = res.rand_index, res.adjusted_rand_index
        points, labels, axes = res.sample
        scatter_png(
            png,
            points,
            labels,
            title=f"{name}: landmark spectral clustering, k={k}; ARI={ari:.3f}",
            axes=axes,
            force=force,
        )
        n_land = res.fit.n_landmarks
        ui.say(
            f"{name:<9} N={X.shape[0]:>6} D={X.shape[1]:>3} k={k:>2}  Rand index {ri:.4f}  ARI {ari:.4f}  "
            f"embed {t_embed:.2f} s  k-means {t_kmeans:.2f} s  (spectral, n={n_land} landmarks)"
        )
        ui.say(
            f"{'':<9} {'':>8} {'':>5} {'':>4}  Rand index {kjl.rand_index:.4f}  ARI {kjl.adjusted_rand_index:.4f}  "
            f"embed {kjl.seconds['fit'] + kjl.seconds['embed_sample']:.2f} s  (Kernel JL, d={10 * k}, "
            f"n={kjl.fit.n_landmarks} landmarks)"
        )
        if ari < NEAR_CHANCE:
            ui.say(
                f"{'':<9} (near chance: {name}'s {k} classes are not separated groups in these {X.shape[1]} features; "
                "no method of benchmarks/results/cluster-quality.md, k-means and HDBSCAN included, does much better)"
            )
        results[name] = {
            "n_samples": int(X.shape[0]),
            "n_features": int(X.shape[1]),
            "k": int(k),
            "n_landmarks": int(n_land),
            "rand_index": float(ri),
            "adjusted_rand_index": float(ari),
            "kjl_adjusted_rand_index": float(kjl.adjusted_rand_index),
            "embed_seconds": round(t_embed, 4),
            "kmeans_seconds": round(t_kmeans, 4),
            "labels": str(labels_path),
            "plot": str(png),
        }
    ui.say(f"labels and plots written to {out}/")
    return results
