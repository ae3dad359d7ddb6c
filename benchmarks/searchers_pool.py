"""The searcher objects on the 48-set pool: the labels each gives against the exact search's (issues 52, 55).

    python -m benchmarks.searchers_pool [--seeds 3] [--output FILE]

For every set of the clustering pool (``benchmarks/cluster_pool.py``'s 48) and seed, the default
``cluster_file(X, k)`` with the landmark search in :class:`~kernelsketch.kernels.search.ExactSearch` (the
reference: ``search="exact"``) and with each other searcher passed as ``search=`` (so that it also serves k-means'
seeding and the assignment): faiss's ``IndexFlatL2`` (:class:`~kernelsketch.kernels.search.FaissSearch`, float32,
when faiss is installed) and PyTorch on the CPU (:class:`~kernelsketch.kernels.torch_search.TorchSearch`, the twin
of the GPU path, when PyTorch is installed).  Reported per group: the smallest and the mean ARI between a searcher's
labels and the exact search's, and the sets below .99 by name.  The tolerance the issues state: ARI >= .99 on the
pool; a search that rounds otherwise (float32) can move a row whose landmarks are at near-equal distances.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

from ._harness import machine_info

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
TOLERANCE = 0.99


def searchers():
    """``{name: factory}`` of the searchers installed here, besides the exact one."""
    out = {}
    try:
        import faiss  # noqa: F401

        from kernelsketch.kernels.search import FaissSearch

        out["faiss (FaissSearch)"] = FaissSearch
    except ImportError:
        pass
    try:
        import torch

        torch.set_num_threads(os.cpu_count() or 1)
        from kernelsketch.kernels.torch_search import TorchSearch

        out["PyTorch CPU (TorchSearch)"] = lambda: TorchSearch("cpu")
    except ImportError:
        pass
    return out


def labels(X, k, seed, search):
    import kernelsketch as ks

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        emb = ks.LandmarkSpectralEmbedding(search=search)
        return ks.cluster_file(X, k, embedding=emb, random_state=seed).labels


def measure(seeds):
    from sklearn.metrics import adjusted_rand_score

    from .cluster_pool import load_pool

    others = searchers()
    rows = []
    for group, name, X, _y, k in load_pool():
        for seed in range(seeds):
            ref = labels(X, k, seed, "exact")
            for label, make in others.items():
                rows.append((group, name, seed, label, float(adjusted_rand_score(ref, labels(X, k, seed, make())))))
        print(f"{group}/{name}: done", flush=True)
    return rows, list(others)


def render(rows, names, seeds, seconds):
    info = machine_info()
    lines = [
        "# The searcher objects on the pool: labels against the exact search's",
        "",
        f"Machine: {info['cpu']}; {info['cores']} cores; kernelsketch {info['kernelsketch']}. "
        f"`python -m benchmarks.searchers_pool --seeds {seeds}` ({seconds / 60:.1f} min).",
        "",
        "The default `cluster_file(X, k)` with `search=` a searcher object (so it serves the landmark graph, k-means' "
        'seeding and the assignment) against `search="exact"`, on the 48 sets of the pool, '
        f"{seeds} seed(s) each: ARI between the two labellings (not against the truth). Tolerance: >= {TOLERANCE}.",
        "",
    ]
    if not names:
        return "\n".join([*lines, "No other searcher is installed here (faiss-cpu, torch).", ""])
    groups = sorted({r[0] for r in rows})
    lines += ["| group | sets x seeds | " + " | ".join(f"{n}: min / mean ARI" for n in names) + " |"]
    lines += ["|---|---:|" + "---:|" * len(names)]
    for g in [*groups, "all"]:
        cells = []
        for n in names:
            a = np.array([r[4] for r in rows if r[3] == n and (g == "all" or r[0] == g)])
            cells.append(f"{a.min():.3f} / {a.mean():.4f}")
        count = len({(r[1], r[2]) for r in rows if g == "all" or r[0] == g})
        lines.append(f"| {g} | {count} | " + " | ".join(cells) + " |")
    lines.append("")
    for n in names:
        below = sorted({f"{r[0]}/{r[1]} (seed {r[2]}: {r[4]:.3f})" for r in rows if r[3] == n and r[4] < TOLERANCE})
        share = np.mean([r[4] >= TOLERANCE for r in rows if r[3] == n])
        lines.append(
            f"- {n}: ARI >= {TOLERANCE} on {100 * share:.1f}% of set-seeds"
            + (f"; below: {', '.join(below)}." if below else ".")
        )
    return "\n".join([*lines, ""])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--output", default=os.path.join(RESULTS, "searchers-pool.md"))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows, names = measure(args.seeds)
    text = render(rows, names, args.seeds, time.perf_counter() - t0)
    with open(args.output, "w") as fh:
        fh.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
