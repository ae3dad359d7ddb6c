"""``kernelsketch demo``: Kernel JL clustering of Bank Notes (and Avila when present).

The README's first command (``./dev demo``).  For each dataset: the centred
Kernel JL map (Kpotufe & Sriperumbudur) with ``d = 10 k`` components,
``n = "auto"`` landmarks and the 25th-percentile bandwidth, then k-means
with ``k`` = the number of classes; prints the Rand index, the adjusted Rand
index and the timings, and writes the cluster labels (CSV) and a scatter
plot (PNG) into the output folder.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ..io import write_matrix

DEMO_SETS = ("banknote", "avila")


def run_demo(output, *, seed=0, ui, datasets=DEMO_SETS):
    """Run the demo; returns the summary dict (one entry per dataset that ran)."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_rand_score, rand_score

    from .. import KernelJL
    from ..datasets import DatasetNotFoundError, load_dataset
    from .plotting import scatter_png

    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    ui.say(f"Kernel JL clustering (centred, d = 10 k, n = auto, bandwidth = 25th percentile), seed {seed}")
    for name in datasets:
        try:
            X, y = load_dataset(name)
        except DatasetNotFoundError:
            ui.say(f"{name}: not available locally (see `kernelsketch datasets`); skipped")
            continue
        k = len(np.unique(y))
        t0 = time.perf_counter()
        kjl = KernelJL(n_components=10 * k, n_landmarks="auto", centered=True, bandwidth="percentile",
                       random_state=seed)
        Z = kjl.fit_transform(X)
        t_embed = time.perf_counter() - t0
        t1 = time.perf_counter()
        labels = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(Z)
        t_kmeans = time.perf_counter() - t1
        ri, ari = rand_score(y, labels), adjusted_rand_score(y, labels)
        # The demo owns its folder: rerunning it replaces its own files (atomically).
        labels_path = write_matrix(out / f"{name}_labels.csv", labels.astype(np.int64), column_names=["cluster"],
                                   force=True)
        png = out / f"{name}_kjl.png"
        scatter_png(png, Z[:, :2], labels, title=f"{name}: Kernel JL (d={10 * k}) + k-means, k={k}; RI={ri:.3f}",
                    force=True)
        ui.say(f"{name:<9} N={X.shape[0]:>6} D={X.shape[1]:>3} k={k:>2}  Rand index {ri:.4f}  ARI {ari:.4f}  "
               f"embed {t_embed:.2f} s  k-means {t_kmeans:.2f} s  (n={kjl.n_landmarks_} landmarks)")
        results[name] = {"n_samples": int(X.shape[0]), "n_features": int(X.shape[1]), "k": int(k),
                         "n_landmarks": int(kjl.n_landmarks_), "rand_index": float(ri), "adjusted_rand_index": float(ari),
                         "embed_seconds": round(t_embed, 4), "kmeans_seconds": round(t_kmeans, 4),
                         "labels": str(labels_path), "plot": str(png)}
    ui.say(f"labels and plots written to {out}/")
    return results
