"""i) The main job at scale: ``kernelsketch cluster`` of a 2,000,000 x 10 ``.npy`` (Kernel JL, k = 10).

Side by side in one run, each command in a fresh subprocess exactly as a user
types it (wall time and that child's own peak RSS, ``os.wait4``):

* ``kernelsketch embed X.npy -o Z.npy --method kjl -d 100`` (the embedding step alone);
* ``kernelsketch cluster X.npy -k 10 --method kjl -o labels.npy`` (embedding + k-means, labels streamed);
* the same ``cluster`` with ``--workers 2`` (a local Dask cluster; RSS is the client's);
* scikit-learn's ``KMeans(n_clusters=10, n_init=3)`` on the whole embedding ``Z.npy`` held in memory
  (the reference the labels are compared with);
* the scikit-learn user's pipeline ``Nystroem(n_components=200)`` -> ``MiniBatchKMeans(10)`` on ``X``.

Targets (issue): cluster wall <= 1.5 x embed wall, cluster peak RSS <= 1 GB, ARI >= 0.99 against full
KMeans on the same embedding; on Dask the same ``n``, ARI >= 0.999 against the in-memory labels and wall
<= 2 x in memory.  Input: 10 Gaussian clusters (centres ~ N(0, 16 I), unit noise), seeded.

Standalone, for the once-only 20,000,000-row run (writes ``benchmarks/results/cluster-20M.md``)::

    python -m benchmarks.cluster_scale --rows 20000000 --no-reference

and for the default method, landmark spectral clustering, beside ``--method kjl`` and on ``--workers 2``
(writes ``benchmarks/results/cluster-spectral-2M.md``; targets: spectral wall <= 2 x kjl wall, peak RSS
<= 1 GB, identical labels on Dask)::

    python -m benchmarks.cluster_scale --rows 2000000 --spectral
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import textwrap

import numpy as np

from ._harness import CaseResult, Comparison, Metric, MiB, NotAvailable, RunConfig, call_in_child, write_page

NAME = "cluster"
TITLE = "i) The main job at scale: kernelsketch cluster of a 2,000,000 x 10 .npy (Kernel JL, k = 10)"

FULL = {"n_rows": 2_000_000, "n_features": 10, "k": 10}
QUICK = {"n_rows": 30_000, "n_features": 10, "k": 10}
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def expected_rows(quick: bool) -> list:
    return ["cluster / embed wall time", "cluster peak RSS", "ARI vs full KMeans on the same embedding"]


def _cli():
    script = os.path.join(os.path.dirname(sys.executable), "kernelsketch")
    if os.path.exists(script):
        return [script]
    return [sys.executable, "-m", "kernelsketch.cli"]


def write_input(folder, n_rows, n_features, k, chunk=500_000, dtype="float64", seed=11):
    """``folder/X.npy`` (``k`` Gaussian blobs, centres ~ N(0, 16 I), unit noise) and its labels ``folder/y.npy``."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(0.0, 4.0, (k, n_features))
    X = np.lib.format.open_memmap(
        os.path.join(folder, "X.npy"), mode="w+", dtype=np.dtype(dtype), shape=(n_rows, n_features)
    )
    y = np.lib.format.open_memmap(os.path.join(folder, "y.npy"), mode="w+", dtype=np.int64, shape=(n_rows,))
    for start in range(0, n_rows, chunk):
        stop = min(start + chunk, n_rows)
        lab = rng.integers(0, k, stop - start)
        X[start:stop] = centers[lab] + rng.standard_normal((stop - start, n_features))
        y[start:stop] = lab
    X.flush()
    y.flush()
    del X, y


def write_input_in_child(folder, n_rows, n_features, k):
    """:func:`write_input` in a child process (see :func:`benchmarks._harness.call_in_child`)."""
    call_in_child("benchmarks.cluster_scale", "write_input", str(folder), int(n_rows), int(n_features), int(k))


_KMEANS = textwrap.dedent("""
    import json, sys, time, numpy as np
    from sklearn.cluster import KMeans
    Z = np.load(sys.argv[1])
    t = time.perf_counter()
    labels = KMeans(n_clusters=int(sys.argv[3]), n_init=3, random_state=0).fit_predict(Z)
    np.save(sys.argv[2], labels)
    print(json.dumps({"seconds": time.perf_counter() - t}))
""")

_SKLEARN = textwrap.dedent("""
    import json, sys, time, numpy as np
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.kernel_approximation import Nystroem
    from sklearn.pipeline import make_pipeline
    t = time.perf_counter()
    X = np.load(sys.argv[1])
    labels = make_pipeline(Nystroem(n_components=200, random_state=0),
                           MiniBatchKMeans(n_clusters=int(sys.argv[3]), random_state=0, n_init=3)).fit_predict(X)
    np.save(sys.argv[2], labels)
    print(json.dumps({"seconds": time.perf_counter() - t}))
""")


def _ari(a, b):
    from sklearn.metrics import adjusted_rand_score

    return float(adjusted_rand_score(np.load(a).ravel(), np.load(b).ravel()))


def _json_of(cmd):
    """Run a command with --json; return (summary dict, wall, peak MiB)."""
    import subprocess
    import time

    out = tempfile.NamedTemporaryFile(suffix=".json", delete=False)
    out.close()
    try:
        with open(out.name, "w") as fh:
            t0 = time.perf_counter()
            proc = subprocess.Popen([*cmd, "--json"], stdout=fh)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise NotAvailable(f"`{' '.join(cmd)}` failed with exit code {code}")
        with open(out.name) as fh:
            return json.load(fh), wall, usage.ru_maxrss * 1024 / MiB
    finally:
        os.unlink(out.name)


def measure(n_rows, n_features, k, cfg, *, dask=True, reference=True, folder=None):
    cli = _cli()
    tmp = folder or tempfile.mkdtemp(prefix="ks-cluster-")
    try:
        X, y = os.path.join(tmp, "X.npy"), os.path.join(tmp, "y.npy")
        cfg.log(f"[{NAME}] writing {n_rows:,} x {n_features} input with {k} clusters")
        write_input_in_child(tmp, n_rows, n_features, k)
        r = {"n_rows": n_rows}
        Z = os.path.join(tmp, "Z.npy")
        if reference:
            cfg.log(f"[{NAME}] embed")
            r["embed"] = _json_of([*cli, "embed", X, "-o", Z, "--method", "kjl", "-d", str(10 * k)])
        cfg.log(f"[{NAME}] cluster")
        lab = os.path.join(tmp, "labels.npy")
        r["cluster"] = _json_of([*cli, "cluster", X, "-k", str(k), "--method", "kjl", "-o", lab])
        r["ari_truth"] = _ari(y, lab)
        if reference:
            cfg.log(f"[{NAME}] cluster -n 200 (the landmark count of the scikit-learn pipeline)")
            lab200 = os.path.join(tmp, "labels_200.npy")
            r["cluster200"] = _json_of([*cli, "cluster", X, "-k", str(k), "--method", "kjl", "-n", "200", "-o", lab200])
            r["ari_200_truth"] = _ari(y, lab200)
        if dask:
            cfg.log(f"[{NAME}] cluster --workers 2")
            lab_d = os.path.join(tmp, "labels_dask.npy")
            r["dask"] = _json_of([*cli, "cluster", X, "-k", str(k), "--method", "kjl", "-o", lab_d, "--workers", "2"])
            r["ari_dask"] = _ari(lab, lab_d)
        if reference:
            cfg.log(f"[{NAME}] scikit-learn KMeans on the whole embedding")
            ref = os.path.join(tmp, "labels_kmeans.npy")
            r["kmeans"] = _child(_KMEANS, Z, ref, k)
            r["ari_kmeans"] = _ari(ref, lab)
            os.unlink(Z)
            cfg.log(f"[{NAME}] scikit-learn Nystroem -> MiniBatchKMeans")
            sk = os.path.join(tmp, "labels_sklearn.npy")
            r["sklearn"] = _child(_SKLEARN, X, sk, k)
            r["ari_sklearn_truth"] = _ari(y, sk)
        return r
    finally:
        if folder is None:
            shutil.rmtree(tmp, ignore_errors=True)


def _child(script, inp, out, k):
    import subprocess

    tmp = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
    tmp.write(script)
    tmp.close()
    try:
        res = tempfile.NamedTemporaryFile(suffix=".json", delete=False)
        res.close()
        with open(res.name, "w") as fh:
            proc = subprocess.Popen([sys.executable, tmp.name, inp, out, str(k)], stdout=fh)
            _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise NotAvailable("a scikit-learn reference run failed")
        with open(res.name) as fh:
            inner = json.load(fh)
        os.unlink(res.name)
        return inner, inner["seconds"], usage.ru_maxrss * 1024 / MiB
    finally:
        os.unlink(tmp.name)


def to_case(r, k, title=TITLE):
    emb_s = r["embed"][1] if "embed" in r else None
    cl, cl_s, cl_mb = r["cluster"]
    res = CaseResult(
        NAME,
        title,
        setup=(
            f"{r['n_rows']:,} x 10 float64 `.npy`, {k} Gaussian clusters; `-d {10 * k}`; `n_landmarks=auto` resolved "
            f"to n = {cl.get('n_landmarks')} (from N), bandwidth h = {cl.get('bandwidth', float('nan')):.4g}. "
            f"k-means seeded on {cl.get('kmeans_sample_rows'):,} sampled rows; 0 extra Lloyd passes (default)."
        ),
    )
    if emb_s is not None:
        res.metrics.append(
            Metric(
                "cluster / embed wall time",
                cl_s / emb_s,
                "x",
                1.5,
                "<=",
                note=f"cluster {cl_s:.1f} s, embed {emb_s:.1f} s (embed writes the "
                f"{r['n_rows'] * 10 * k * 8 / 1e9:.1f} GB embedding; cluster writes labels)",
            )
        )
        res.metrics.append(Metric("embed peak RSS", r["embed"][2], "MiB"))
    res.metrics.append(
        Metric(
            "cluster peak RSS",
            cl_mb,
            "MiB",
            1e9 / MiB if r["n_rows"] <= 2_000_000 else 2e9 / MiB,
            "<=",
            note="the whole command",
        )
    )
    res.metrics.append(Metric("cluster wall time", cl_s, "s", note=f"phases: {cl.get('seconds')}"))
    if "ari_kmeans" in r:
        km, km_s, km_mb = r["kmeans"]
        res.metrics.append(
            Metric(
                "ARI vs full KMeans on the same embedding",
                r["ari_kmeans"],
                "",
                0.99,
                ">=",
                note=f"scikit-learn KMeans(n_init=3) on the whole embedding: {km_s:.1f} s, {km_mb:,.0f} MiB peak",
            )
        )
    res.metrics.append(Metric("ARI vs the true clusters", r["ari_truth"], ""))
    if "dask" in r:
        dk, dk_s, dk_mb = r["dask"]
        res.metrics += [
            Metric(
                "--workers 2: same n",
                float(dk.get("n_landmarks") == cl.get("n_landmarks")),
                "",
                1.0,
                ">=",
                note=f"n = {dk.get('n_landmarks')} on Dask, {cl.get('n_landmarks')} in memory",
            ),
            Metric("--workers 2: ARI vs in-memory labels", r["ari_dask"], "", 0.999, ">="),
            Metric(
                "--workers 2: wall / in-memory wall",
                dk_s / cl_s,
                "x",
                2.0,
                "<=",
                note=f"{dk_s:.1f} s vs {cl_s:.1f} s; client peak RSS {dk_mb:,.0f} MiB; "
                f"tasks {dk['dask']['tasks']}, bytes to client {dk['dask']['bytes_to_client'] / 1e6:.1f} MB, "
                f"state scattered {dk['dask']['bytes_broadcast'] / 1e6:.1f} MB per pass x passes "
                f"{dk['dask']['passes']}",
            ),
        ]
    if "sklearn" in r:
        _, sk_s, sk_mb = r["sklearn"]
        res.comparisons.append(
            Comparison(
                "cluster the file",
                "kernelsketch cluster --method kjl (n = auto)",
                "sklearn Nystroem(200) -> MiniBatchKMeans(n_init=3)",
                cl_s,
                sk_s,
                ours_mem_mb=cl_mb,
                ref_mem_mb=sk_mb,
                note=f"ARI vs truth: ours {r['ari_truth']:.4f}, scikit-learn {r['ari_sklearn_truth']:.4f}; ours uses "
                f"n = {cl.get('n_landmarks')} landmarks, the pipeline 200 (its usual setting)",
            )
        )
        if "cluster200" in r:
            _, c2_s, c2_mb = r["cluster200"]
            res.comparisons.append(
                Comparison(
                    "cluster the file, same landmark count",
                    "kernelsketch cluster --method kjl -n 200",
                    "sklearn Nystroem(200) -> MiniBatchKMeans(n_init=3)",
                    c2_s,
                    sk_s,
                    ours_mem_mb=c2_mb,
                    ref_mem_mb=sk_mb,
                    note=f"ARI vs truth: ours {r['ari_200_truth']:.4f}, scikit-learn {r['ari_sklearn_truth']:.4f}",
                )
            )
    return res


@contextlib.contextmanager
def _fresh_input(prefix, n_rows, n_features, k, cfg):
    """A temporary folder holding :func:`write_input`'s ``X.npy`` and ``y.npy``: ``(folder, X, y)``; removed after."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    try:
        cfg.log(f"[{NAME}] writing {n_rows:,} x {n_features} input with {k} clusters")
        write_input_in_child(tmp, n_rows, n_features, k)
        yield tmp, os.path.join(tmp, "X.npy"), os.path.join(tmp, "y.npy")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def measure_spectral(n_rows, n_features, k, cfg, *, dask=True):
    """The default method (landmark spectral) beside ``--method kjl`` on the same file, and on Dask."""
    cli = _cli()
    with _fresh_input("ks-spectral-", n_rows, n_features, k, cfg) as (tmp, X, y):
        r = {"n_rows": n_rows}
        lab_k, lab_s = os.path.join(tmp, "labels_kjl.npy"), os.path.join(tmp, "labels_spectral.npy")
        cfg.log(f"[{NAME}] cluster --method kjl")
        r["kjl"] = _json_of([*cli, "cluster", X, "-k", str(k), "--method", "kjl", "-o", lab_k])
        cfg.log(f"[{NAME}] cluster (default: --method spectral)")
        r["spectral"] = _json_of([*cli, "cluster", X, "-k", str(k), "-o", lab_s])
        r["ari_kjl_truth"], r["ari_spectral_truth"] = _ari(y, lab_k), _ari(y, lab_s)
        if dask:
            cfg.log(f"[{NAME}] cluster --method spectral --workers 2")
            lab_d = os.path.join(tmp, "labels_spectral_dask.npy")
            r["dask"] = _json_of([*cli, "cluster", X, "-k", str(k), "-o", lab_d, "--workers", "2"])
            r["ari_dask"] = _ari(lab_s, lab_d)
            r["same_dask"] = float(np.array_equal(np.load(lab_s), np.load(lab_d)))
        return r


def measure_default(n_rows, n_features, k, cfg, *, extra=(), dask=True):
    """The default ``cluster`` alone (with ``extra`` flags) on a fresh file, and the same on ``--workers 2``."""
    cli = _cli()
    with _fresh_input("ks-default-", n_rows, n_features, k, cfg) as (tmp, X, y):
        r = {"n_rows": n_rows, "extra": list(extra)}
        lab = os.path.join(tmp, "labels.npy")
        cfg.log(f"[{NAME}] cluster {' '.join(extra)}")
        r["default"] = _json_of([*cli, "cluster", X, "-k", str(k), *extra, "-o", lab])
        r["ari_truth"] = _ari(y, lab)
        if dask:
            cfg.log(f"[{NAME}] cluster {' '.join(extra)} --workers 2")
            lab_d = os.path.join(tmp, "labels_dask.npy")
            r["dask"] = _json_of([*cli, "cluster", X, "-k", str(k), *extra, "-o", lab_d, "--workers", "2"])
            r["same_dask"] = float(np.array_equal(np.load(lab), np.load(lab_d)))
        return r


def default_case(r, k):
    d, d_s, d_mb = r["default"]
    flags = " ".join(r["extra"])
    res = CaseResult(
        "cluster-default",
        f"kernelsketch cluster {flags + ' ' if flags else ''}of a {r['n_rows']:,} x 10 .npy, k = {k}".replace(
            "  ", " "
        ),
        setup=(
            f"{r['n_rows']:,} x 10 float64 `.npy`, {k} Gaussian clusters (the input of case i). {d.get('n_landmarks')} "
            f"landmarks; each command in a fresh process; peak RSS of that process."
        ),
    )
    res.metrics += [
        Metric("wall time", d_s, "s", note=f"phases {d.get('seconds')}"),
        Metric("peak RSS", d_mb, "MiB", 1024.0, "<="),
        Metric("ARI vs the true clusters", r["ari_truth"], ""),
    ]
    if "dask" in r:
        dk, dk_s, dk_mb = r["dask"]
        res.metrics += [
            Metric("--workers 2: identical labels", r["same_dask"], "", 1.0, ">="),
            Metric("--workers 2: wall", dk_s, "s", note=f"client peak RSS {dk_mb:,.0f} MiB"),
        ]
    return res


def spectral_case(r, k):
    sp, sp_s, sp_mb = r["spectral"]
    kj, kj_s, kj_mb = r["kjl"]
    res = CaseResult(
        "cluster-spectral",
        f"kernelsketch cluster (default: spectral) of a {r['n_rows']:,} x 10 .npy, k = {k}, beside --method kjl",
        setup=(
            f"{r['n_rows']:,} x 10 float64 `.npy`, {k} Gaussian clusters (the input of case i). Spectral: "
            f"{sp.get('n_landmarks')} landmarks, standardize {sp.get('standardized', False)}; "
            f"kjl: n = {kj.get('n_landmarks')}, d = {10 * k}. Each command in a fresh process; peak RSS of that "
            "process."
        ),
    )
    res.metrics += [
        Metric(
            "spectral / kjl wall time",
            sp_s / kj_s,
            "x",
            2.0,
            "<=",
            note=f"spectral {sp_s:.1f} s (phases {sp.get('seconds')}), kjl {kj_s:.1f} s",
        ),
        Metric("spectral peak RSS", sp_mb, "MiB", 1e9 / MiB, "<=", note=f"kjl {kj_mb:,.0f} MiB"),
        Metric("spectral ARI vs the true clusters", r["ari_spectral_truth"], "", note=f"kjl {r['ari_kjl_truth']:.4f}"),
    ]
    if "dask" in r:
        dk, dk_s, dk_mb = r["dask"]
        res.metrics += [
            Metric("spectral --workers 2: identical labels", r["same_dask"], "", 1.0, ">="),
            Metric("spectral --workers 2: ARI vs in-memory labels", r["ari_dask"], "", 0.999, ">="),
            Metric(
                "spectral --workers 2: wall / in-memory wall",
                dk_s / sp_s,
                "x",
                2.0,
                "<=",
                note=f"{dk_s:.1f} s vs {sp_s:.1f} s; client peak RSS {dk_mb:,.0f} MiB; tasks {dk['dask']['tasks']}, "
                f"bytes to client {dk['dask']['bytes_to_client'] / 1e6:.1f} MB",
            ),
        ]
    return res


def run(cfg: RunConfig) -> CaseResult:
    import importlib.util

    if importlib.util.find_spec("kernelsketch.out_of_core") is None:
        raise NotAvailable("kernelsketch.out_of_core is not available")
    s = QUICK if cfg.quick else FULL
    dask = importlib.util.find_spec("distributed") is not None
    r = measure(s["n_rows"], s["n_features"], s["k"], cfg, dask=dask)
    return to_case(r, s["k"])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--no-reference", action="store_true", help="only `cluster` (no embed / KMeans / Dask)")
    parser.add_argument("--output", default=None)
    parser.add_argument(
        "--spectral",
        action="store_true",
        help="the default method (spectral) beside kjl and on --workers 2 (writes cluster-spectral-<N>M.md)",
    )
    parser.add_argument(
        "--default-only",
        action="store_true",
        help="the default cluster alone (plus --extra flags), and on --workers 2 unless --no-dask "
        "(writes cluster-default-<N>M[-<flags>].md)",
    )
    parser.add_argument(
        "--extra", default="", help="flags for the default-only cluster, e.g. '--landmark-selection kmeans'"
    )
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args(argv)
    from ._harness import byte_compile_package, machine_info, render_case, render_header

    byte_compile_package()  # (each command loads our byte-code, as an installed copy does)

    cfg = RunConfig()
    if args.default_only:
        extra = tuple(args.extra.split())
        res = default_case(measure_default(args.rows, 10, 10, cfg, extra=extra, dask=not args.no_dask), 10)
        tag = "-".join(a.lstrip("-") for a in extra)
        out = f"cluster-default-{max(args.rows // 1_000_000, 1)}M{'-' + tag if tag else ''}.md"
    elif args.spectral:
        import importlib.util

        dask = importlib.util.find_spec("distributed") is not None
        res = spectral_case(measure_spectral(args.rows, 10, 10, cfg, dask=dask), 10)
        out = f"cluster-spectral-{max(args.rows // 1_000_000, 1)}M.md"
    else:
        r = measure(args.rows, 10, 10, cfg, dask=not args.no_reference, reference=not args.no_reference)
        res = to_case(r, 10, title=f"i) kernelsketch cluster of a {args.rows:,} x 10 .npy (Kernel JL, k = 10)")
        out = f"cluster-{args.rows // 1_000_000}M.md"
    text = render_header(machine_info(), False) + "\n" + render_case(res)
    write_page(text, args.output or os.path.join(RESULTS, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
