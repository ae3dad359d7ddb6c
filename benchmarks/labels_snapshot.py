"""The labels of every clustering path, saved to compare two versions of the code (issue #64: a refactor must keep
them identical).

One file of labels (and the spectral embedding's projection) for: every set of the clustering pool through
:func:`kernelsketch.cluster_file` and, up to 30,000 rows, through ``LandmarkSpectralClustering.fit``; a 300,000 x 20
float32 ``.npy`` file (more rows than k-means' sample) clustered locally with and without the kept graph, with
``n_clusters="auto"``, in memory, and on a local Dask cluster of 2 worker processes (``--workers 2``) with and
without the kept graph; a 20,000-row CSV with a label column; ``fit_source`` of the embedding and its in-memory fit.

Usage::

    python -m benchmarks.labels_snapshot before.npz          # on one version
    python -m benchmarks.labels_snapshot after.npz           # on the other
    python -m benchmarks.labels_snapshot --compare before.npz after.npz
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings

import numpy as np


def snapshot(path):
    import kernelsketch as ks

    from .cluster_pool import load_pool

    warnings.simplefilter("ignore")
    out = {}
    t0 = time.time()
    for group, name, X, _, k in load_pool():
        out[f"file:{group}/{name}"] = ks.cluster_file(X, k, random_state=0).labels
        if X.shape[0] <= 30_000:
            out[f"mem:{group}/{name}"] = ks.LandmarkSpectralClustering(k, random_state=0).fit_predict(X)
    print(f"pool: {time.time() - t0:.0f} s", flush=True)
    rng = np.random.default_rng(5)
    centres = rng.normal(scale=6, size=(8, 20))
    X = (centres[rng.integers(0, 8, 300_000)] + rng.normal(size=(300_000, 20))).astype(np.float32)
    with tempfile.TemporaryDirectory() as d:
        npy, csv = os.path.join(d, "blobs.npy"), os.path.join(d, "small.csv")
        np.save(npy, X)
        for keep in (True, False):
            out[f"big:local:keep={keep}"] = ks.cluster_file(npy, 8, random_state=0, keep_graph=keep).labels
        out["big:auto"] = ks.cluster_file(npy, "auto", random_state=0).labels
        out["big:mem"] = ks.LandmarkSpectralClustering(8, random_state=0).fit_predict(X)
        emb = ks.fit_source(ks.LandmarkSpectralEmbedding(n_components=5, random_state=0), npy).estimator
        out["big:emb:proj"] = emb.projection_
        out["big:emb:mem"] = ks.LandmarkSpectralEmbedding(n_components=5, random_state=0).fit(X).projection_
        with open(csv, "w") as f:
            f.write(",".join([f"c{i}" for i in range(20)] + ["label"]) + "\n")
            for row, label in zip(X[:20_000], np.repeat(np.arange(4), 5_000), strict=True):
                f.write(",".join(f"{v:.5g}" for v in row) + f",{label}\n")
        out["csv"] = ks.cluster_file(csv, 8, random_state=0, label_column="label", init_size=5000).labels
        print(f"local: {time.time() - t0:.0f} s", flush=True)
        from distributed import Client, LocalCluster

        with (
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
            Client(cluster) as client,
        ):
            for keep in (True, False):
                res = ks.cluster_file(npy, 8, random_state=0, keep_graph=keep, client=client)
                out[f"big:dask:keep={keep}"] = res.labels
        print(f"dask: {time.time() - t0:.0f} s", flush=True)
    np.savez_compressed(path, **out)
    return out


def compare(a_path, b_path):
    a, b = np.load(a_path), np.load(b_path)
    missing = sorted(set(a.files) ^ set(b.files))
    differ = [k for k in sorted(set(a.files) & set(b.files)) if not np.array_equal(a[k], b[k])]
    print(f"{len(a.files)} and {len(b.files)} entries; only in one: {missing}; differing: {differ}")
    return 0 if not missing and not differ else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="OUT.npz, or with --compare two snapshots")
    ap.add_argument("--compare", action="store_true")
    args = ap.parse_args(argv)
    if args.compare:
        if len(args.paths) != 2:
            ap.error("--compare takes two snapshots")
        return compare(*args.paths)
    snapshot(args.paths[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
