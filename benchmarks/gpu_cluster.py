"""The default ``cluster`` on a GPU, end to end, against a plain PyTorch k-means and its own search floor.

    python -m benchmarks.gpu_cluster [--rows 5000000] [--device cuda] [--repeats 3] [--output FILE] [--quick]

In one process, on the device (synchronised around every timed call), for ``--rows`` x 20 float32 rows in a
``.npy`` on disk (8 Gaussian blobs, k = 8: the floor benchmark's data, ``benchmarks/cluster_floor.py``):

1. **ours**: ``ks.cluster_file(X.npy, 8, device=...)`` -- the default landmark spectral clustering with every
   search (the fit's graph, k-means' seeding, the assignment pass) in a
   :class:`~kernelsketch.kernels.torch_search.TorchSearch`, whose routes do each block's whole work on the card
   (the fit's graph statistics, the assignment), the file read block by block; wall time from the path to the
   labels in memory; its ARI against the blobs; the seconds spent inside the searcher and its routes.
2. **PyTorch k-means**: the file loaded, all rows moved to the card, k-means++ seeding on the card, then as many
   Lloyd iterations as scikit-learn's ``MiniBatchKMeans(8)`` (its default settings) makes on the same rows
   (its ``n_iter_``: passes over the data, at least 1; MiniBatchKMeans runs on the host first, untimed), wall
   time from the path to the labels on the host; and the same k-means run to convergence (tol 1e-4), for
   context.

Both are run once untimed at full size (CUDA context, cuBLAS, numba's kernels, the file in the page cache), then
timed in ``--repeats`` alternated rounds; the page reports each one's median and every round.
3. **The floor of our hot loop**: one GEMM of each block of rows (already on the card) against the fitted
   landmarks and the selection of each row's ``r`` nearest (the faster of ``torch.topk`` and ``r`` row minima),
   over every row, at the card's rate, nothing copied back; our time on the card is set against it (it also pays
   the host-to-card copy of each block and the rest of the block's work).

Targets (issue 55): ours within 2x the PyTorch k-means end to end; our search within 2x of the floor.
``--quick --device cpu`` is a functional smoke run on PyTorch's CPU (tiny sizes, not a measurement).

On the lent GPU machine (its Python has PyTorch, numpy, scipy, scikit-learn and numba; nothing to install), from the
repository root, one prepared command (a few minutes; its page comes back from ``$OUT``)::

    PYTHONUNBUFFERED=1 PYTHONPATH=src:. python3 -m benchmarks.gpu_cluster --output $OUT/gpu-cluster.md

then commit the page as ``benchmarks/results/gpu-cluster.md`` (it names the card).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shutil
import sys
import tempfile
import time
from typing import ClassVar

import numpy as np

from ._harness import _git_commit, write_page

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def _sync(torch, device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def timed_search(torch, device):
    """A TorchSearch that records ``(seconds, rows, points, what)`` of each call (device synchronised) in
    ``.calls``: its searches (``what`` = "search"; ``points`` = m for the landmarks, k for k-means' centres) and
    its fused routes, a block's whole work on the card (``"landmark_statistics"``, ``"landmark_assign"``)."""
    from kernelsketch.kernels.torch_search import TorchSearch

    class Timed(TorchSearch):
        calls: ClassVar[list] = []  # (one list shared by the copies the estimators make)

        def _timed(self, what, call, X, *args, **kwargs):
            _sync(torch, self.device_)
            t0 = time.perf_counter()
            out = call(X, *args, **kwargs)
            _sync(torch, self.device_)
            Timed.calls.append((time.perf_counter() - t0, int(X.shape[0]), self.n_points_, what))
            return out

        def search(self, X, r):
            return self._timed("search", super().search, X, r)

        def landmark_statistics(self, X, *args, **kwargs):
            return self._timed("landmark_statistics", super().landmark_statistics, X, *args, **kwargs)

        def landmark_assign(self, X, *args, **kwargs):
            return self._timed("landmark_assign", super().landmark_assign, X, *args, **kwargs)

    return Timed(device)


def ours(path, k, device, torch):
    import kernelsketch as ks

    searcher = timed_search(torch, device)
    searcher.calls.clear()
    _sync(torch, device)
    t0 = time.perf_counter()
    res = ks.cluster_file(
        path, k, embedding=ks.LandmarkSpectralEmbedding(search=searcher), random_state=0, keep_labels=True
    )
    _sync(torch, device)
    wall = time.perf_counter() - t0
    emb = res.clusterer.embedding_
    m = int(emb.landmarks_.shape[0])

    def total(what, landmarks=True):
        calls = [(t, n) for t, n, points, w in searcher.calls if w == what and (points == m) == landmarks]
        return float(sum(t for t, _ in calls)), int(sum(n for _, n in calls))

    return {
        "wall": wall,
        "labels": res.labels,
        "search": total("search"),
        "statistics": total("landmark_statistics"),
        "assign": total("landmark_assign"),
        "centre_search": total("search", landmarks=False)[0],
        "stages": {key: round(v, 3) for key, v in res.seconds.items()},
        "m": m,
        "r": int(min(emb.n_neighbors, emb.landmarks_.shape[0])),
        "landmarks": emb.landmarks_,
    }


def minibatch_iterations(path, k):
    """scikit-learn ``MiniBatchKMeans(k)``'s passes over the rows at its defaults (untimed: its iteration count)."""
    from sklearn.cluster import MiniBatchKMeans

    mb = MiniBatchKMeans(k, random_state=0).fit(np.load(path, mmap_mode="r"))
    return max(1, math.ceil(mb.n_iter_)), int(mb.n_steps_)


def torch_kmeans(path, k, n_iter, device, torch, tol=None, seed=0):
    """Plain k-means on the card: load, move, k-means++ (greedy-free, one candidate per step), Lloyd."""
    _sync(torch, device)
    t0 = time.perf_counter()
    X = torch.from_numpy(np.load(path)).to(device)
    gen = torch.Generator(device=X.device).manual_seed(seed)
    n = X.shape[0]
    centers = X[torch.randint(n, (1,), device=X.device, generator=gen)]
    d2 = torch.cdist(X, centers).square_().squeeze(1)
    for _ in range(1, k):
        # (a draw with probability d2 / sum d2 by the cumulative sums: torch.multinomial takes at most 2^24 rows)
        cum = torch.cumsum(d2, 0, dtype=torch.float64)
        u = torch.rand(1, generator=gen, device=X.device, dtype=torch.float64) * cum[-1]
        pick = torch.searchsorted(cum, u).clamp_max_(n - 1)
        centers = torch.cat([centers, X[pick]])
        d2 = torch.minimum(d2, (X - X[pick]).square_().sum(dim=1))
    done = 0
    while done < (n_iter if tol is None else 300):
        done += 1
        labels = torch.cdist(X, centers).argmin(dim=1)
        sums = torch.zeros_like(centers).index_add_(0, labels, X)
        counts = torch.bincount(labels, minlength=k).clamp_min_(1).unsqueeze(1).to(X.dtype)
        new = sums / counts
        shift = float((new - centers).square().sum())
        centers = new
        if tol is not None and shift <= tol * float(X.var(dim=0).sum()):
            break
    labels = torch.cdist(X, centers).argmin(dim=1).cpu().numpy()
    _sync(torch, device)
    return time.perf_counter() - t0, labels, done


def search_floor(path, landmarks, r, device, torch, block_rows=None):
    """One GEMM + selection of the ``r`` nearest per block over every row already on the card, the faster of
    ``torch.topk`` and ``r`` row minima (:class:`~kernelsketch.kernels.torch_search.TorchSearch`'s two
    ``select``), nothing copied back: ``(seconds, block rows, the selection)``."""
    from kernelsketch.kernels.torch_search import TorchSearch

    X = torch.from_numpy(np.load(path))
    found = []
    for select in ("topk", "min"):
        s = TorchSearch(device, block_rows=block_rows, select=select).build(landmarks)
        T = s._rows(X)  # (on the card, measured from the landmarks' origin as the search does)
        P, p2 = s._on_device(np.float32 if T.dtype == torch.float32 else np.float64)
        step = s._sub_block_rows(T.shape[0], T.element_size())
        best = math.inf
        for _ in range(3):
            _sync(torch, device)
            t0 = time.perf_counter()
            with torch.no_grad():
                for start in range(0, T.shape[0], step):
                    s._nearest(T[start : start + step], r, P, p2)
            _sync(torch, device)
            best = min(best, time.perf_counter() - t0)
        found.append((best, step, select))
        del T
    return min(found)


def render(out, args, card):
    from sklearn.metrics import adjusted_rand_score

    y = out["y"]
    o, km, kc = out["ours"], out["kmeans"], out["kmeans_converged"]
    fl, fl_rows, fl_select = out["floor"]
    on_card = sum(o[key][0] for key in ("search", "statistics", "assign"))
    rows = sum(o[key][1] for key in ("search", "statistics", "assign"))
    lines = [
        "# The default `cluster` on a GPU"
        + (" (quick: tiny sizes on PyTorch's CPU, not a measurement)" if args.quick else "")
        + (
            " -- rehearsed on PyTorch's CPU (the script at full size; not a GPU figure)"
            if card == "PyTorch CPU" and not args.quick
            else ""
        ),
        "",
        f"- date: {time.strftime('%Y-%m-%d %H:%M')}; "
        f"command: `python -m benchmarks.gpu_cluster {' '.join(sys.argv[1:])}`",
        f"- code: kernelsketch {os.environ.get('BENCHMARK_COMMIT') or _git_commit()}\n"
        f"- device: **{card}** (`{args.device}`); host: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores; Python {platform.python_version()}, PyTorch {out['torch']}",
        f"- data: {args.rows:,} x 20 float32 `.npy` on disk, 8 Gaussian blobs, k = 8 (the floor benchmark's)",
        f"- MiniBatchKMeans(8) at its defaults: {out['mb'][1]} steps, {out['mb'][0]} pass(es) over the rows: "
        f"the PyTorch k-means makes {out['mb'][0]} Lloyd iteration(s)",
        "",
        "| run | wall (s) | ARI vs the blobs |",
        "|---|---:|---:|",
        f"| ours: `cluster_file(X.npy, 8, device=...)`, end to end | {o['wall']:.2f} | "
        f"{adjusted_rand_score(y, o['labels']):.3f} |",
        f"| PyTorch k-means, k-means++ + {km[2]} Lloyd, end to end | {km[0]:.2f} | "
        f"{adjusted_rand_score(y, km[1]):.3f} |",
        f"| PyTorch k-means to convergence ({kc[2]} Lloyd), for context | {kc[0]:.2f} | "
        f"{adjusted_rand_score(y, kc[1]):.3f} |",
        "",
        f"Medians of {len(out['walls'][0])} alternated rounds after one untimed run of each at full size; the rounds "
        f"(s): ours {', '.join(f'{w:.2f}' for w in out['walls'][0])}, PyTorch k-means "
        f"{', '.join(f'{w:.2f}' for w in out['walls'][1])}.",
        "",
        f"Ours / PyTorch k-means: **{o['wall'] / km[0]:.2f}x** (target <= 2x).  Stages of ours' median run (s): "
        + ", ".join(f"{k} {v}" for k, v in o["stages"].items()),
        "",
        "On the card (each call synchronised): "
        + "; ".join(
            f"{what} {o[key][0]:.2f} s for {o[key][1]:,} rows"
            for key, what in (
                ("search", "landmark searches (rows back to the host: the seeding sample, the landmark choice)"),
                ("statistics", "the fit's graph statistics (search, weights, Z^T Z in one route)"),
                ("assign", "the assignment (search, weights, embedding, nearest centre in one route)"),
            )
        )
        + f"; k-means' nearest centres {o['centre_search']:.2f} s.  The floor, one GEMM + `{fl_select}` per block of "
        f"{fl_rows:,} rows already on the card, {fl:.3f} s per {args.rows:,} rows, is {fl * rows / args.rows:.3f} s "
        f"for as many rows ({rows:,}): ours (the copy to the card and the block's whole work) / floor (the search "
        f"alone) **{on_card / (fl * rows / args.rows):.2f}x** (target <= 2x).",
        "",
    ]
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=5_000_000)
    p.add_argument("--device", default="cuda")
    p.add_argument("--repeats", type=int, default=3, help="alternated timed rounds of both (the median reported)")
    p.add_argument("--quick", action="store_true", help="20,000 rows, one round (with --device cpu: a smoke run)")
    p.add_argument("--output", default=None)
    args = p.parse_args(argv)
    import torch

    if args.quick:
        args.rows, args.repeats = min(args.rows, 20_000), 1
    card = torch.cuda.get_device_name(args.device) if torch.device(args.device).type == "cuda" else "PyTorch CPU"
    tmp = tempfile.mkdtemp(prefix="ks-gpu-")
    try:
        from .cluster_scale import write_input

        write_input(tmp, args.rows, 20, 8, 500_000, "float32", 38)
        path = os.path.join(tmp, "X.npy")
        out = {"torch": torch.__version__, "y": np.load(os.path.join(tmp, "y.npy"))}
        out["mb"] = minibatch_iterations(path, 8)
        print(f"MiniBatchKMeans: {out['mb']}", flush=True)
        # one untimed run of each at full size (CUDA context, cuBLAS handles, numba's kernels of every size's
        # route, the file in the page cache), then alternated timed rounds: the median of each is reported
        ours(path, 8, args.device, torch)
        torch_kmeans(path, 8, out["mb"][0], args.device, torch)
        runs, kmeans_runs = [], []
        for _ in range(max(1, args.repeats)):
            runs.append(ours(path, 8, args.device, torch))
            kmeans_runs.append(torch_kmeans(path, 8, out["mb"][0], args.device, torch))
            print(f"ours: {runs[-1]['wall']:.2f} s; PyTorch k-means: {kmeans_runs[-1][0]:.2f} s", flush=True)
        out["ours"] = sorted(runs, key=lambda run: run["wall"])[len(runs) // 2]
        out["kmeans"] = sorted(kmeans_runs, key=lambda run: run[0])[len(runs) // 2]
        out["walls"] = ([run["wall"] for run in runs], [run[0] for run in kmeans_runs])
        out["kmeans_converged"] = torch_kmeans(path, 8, 0, args.device, torch, tol=1e-4)
        out["floor"] = search_floor(path, out["ours"]["landmarks"], out["ours"]["r"], args.device, torch)
        text = render(out, args, card)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.output:
        return write_page(text, args.output)
    print(text)
    return text


if __name__ == "__main__":
    main()
