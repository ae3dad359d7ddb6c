"""h) Dask: rows/s in memory vs a LocalCluster of 1 and 2 worker processes, and bytes moved per method.

Run standalone (writes ``benchmarks/results/dask.md``)::

    python -m benchmarks.dask_throughput [--quick]

Protocol.  The data (Gaussian, float64) is generated on the workers and
persisted there before timing, like a dataset already in the cluster's
memory; the in-memory side uses the same rows as one numpy array.  Each
method is timed for ``fit`` and ``transform`` (``transform(est, X).sum(0)``
so that every block is computed but only ``d`` numbers come back), median of
``repeats`` runs after one warm-up.  Bytes moved:

* *worker <-> worker*: the increase of every worker's
  ``transfer_outgoing_bytes_total`` (data fetched between workers);
* *client -> cluster*: the pickled task graph (for ``transform`` it holds the
  fitted state once; with ``client=`` it is scattered instead) plus the
  gathered landmark/sample rows of ``fit`` counted below;
* *cluster -> client*: the pickled result (merged sketch, gathered rows).
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import sys
import time

from ._harness import CaseResult, Metric, NotAvailable, RunConfig

NAME = "dask"
TITLE = "h) Dask: rows/s in memory vs LocalCluster (1 and 2 workers), bytes moved per method"

FULL = {"n_rows": 100_000, "n_features": 20, "chunk": 12_500, "repeats": 2}
QUICK = {"n_rows": 8_000, "n_features": 5, "chunk": 2_000, "repeats": 1}
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "dask.md")


def _methods(quick):
    from kernelsketch.decomposition import RFKPCA, RNCA, StreamingKPCA, SubsampleKPCA
    from kernelsketch.maps import KernelJL, Nystroem, RandomFourierFeatures
    from kernelsketch.sketches import FrequentDirections

    m = 50 if quick else 500
    f = 32 if quick else 256
    return {
        f"Nystroem (m={m}, r={m // 5})": lambda: Nystroem(
            n_landmarks=m, n_components=m // 5, bandwidth="median", random_state=0
        ),
        f"KernelJL (n={m}, d=50)": lambda: KernelJL(n_components=50, n_landmarks=m, random_state=0),
        f"SubsampleKPCA (n={m}, k=10)": lambda: SubsampleKPCA(n_components=10, n_landmarks=m, random_state=0),
        f"RandomFourierFeatures (m={2 * f})": lambda: RandomFourierFeatures(2 * f, bandwidth="median", random_state=0),
        f"RNCA (m={f}, k=10)": lambda: RNCA(10, n_random_features=f, bandwidth="median", random_state=0),
        f"RFKPCA (m={f}, k=10)": lambda: RFKPCA(10, n_random_features=f, bandwidth="median", random_state=0),
        f"StreamingKPCA (m={f}, l=32)": lambda: StreamingKPCA(
            10, n_random_features=f, sketch_size=32, bandwidth="median", random_state=0
        ),
        "FrequentDirections (l=10)": lambda: FrequentDirections(sketch_size=10),
    }


def _median_time(fn, repeats):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _worker_bytes(client):
    return sum(client.run(lambda dask_worker: dask_worker.transfer_outgoing_bytes_total).values())


def _measure_cluster(n_workers, s, methods, log):
    import dask.array as da
    from distributed import Client, LocalCluster, wait

    from kernelsketch.distributed import fit, transform

    out = {}
    with (
        LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        X = da.random.default_rng(0).standard_normal((s["n_rows"], s["n_features"]), chunks=(s["chunk"], -1))
        X = client.persist(X)
        wait(X)
        for label, make in methods.items():
            log(f"dask {n_workers} worker(s): {label}")
            est = fit(make(), X)
            t_fit = _median_time(lambda: fit(make(), X), s["repeats"])
            b0 = _worker_bytes(client)
            est = fit(make(), X)
            fit_ww = _worker_bytes(client) - b0
            fit_back = len(pickle.dumps(est))
            Z = transform(est, X).sum(axis=0)
            t_tr = _median_time(lambda: transform(est, X).sum(axis=0).compute(), s["repeats"])
            b0 = _worker_bytes(client)
            Z.compute()
            tr_ww = _worker_bytes(client) - b0
            graph = len(pickle.dumps(dict(transform(est, X).__dask_graph__())))
            out[label] = dict(
                fit_s=t_fit,
                transform_s=t_tr,
                fit_ww=fit_ww,
                fit_back=fit_back,
                transform_ww=tr_ww,
                transform_graph=graph,
                state=len(pickle.dumps(est)),
            )
        Xl = X.compute()
    return out, Xl


def _measure_memory(X, s, methods, log):
    out = {}
    for label, make in methods.items():
        log(f"in memory: {label}")
        est = make().fit(X)
        out[label] = dict(
            fit_s=_median_time(lambda: make().fit(X), s["repeats"]),
            transform_s=_median_time(lambda: est.transform(X).sum(axis=0), s["repeats"]),
        )
    return out


def measure(quick=False, log=lambda msg: print(msg, file=sys.stderr, flush=True)):
    try:
        import dask.array  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as exc:
        raise NotAvailable(f"dask/distributed not installed ({exc})") from None
    s = QUICK if quick else FULL
    methods = _methods(quick)
    one, X = _measure_cluster(1, s, methods, log)
    two, _ = _measure_cluster(2, s, methods, log)
    mem = _measure_memory(X, s, methods, log)
    return s, {"memory": mem, "dask-1": one, "dask-2": two}


def _mib(b):
    return f"{b / 2**20:.2f} MiB" if b >= 2**20 else f"{b / 2**10:.1f} KiB"


def render(s, res) -> str:
    n = s["n_rows"]
    lines = [
        f"# {TITLE}",
        "",
        f"Data: {n:,} x {s['n_features']} float64 persisted on the workers in chunks of {s['chunk']:,} rows "
        f"({n // s['chunk']} chunks); LocalCluster with processes=True, threads_per_worker=1, on this machine "
        f"({os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end).  Median of {s['repeats']} "
        "runs after a warm-up.  `transform` is timed as `transform(est, X).sum(axis=0)` (every block computed, "
        "d numbers returned).",
        "",
        "## Throughput (rows/s)",
        "",
        "| method | fit in memory | fit dask 1w | fit dask 2w | transform in memory | transform dask 1w "
        "| transform dask 2w |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label in res["memory"]:
        row = [label]
        for step in ("fit_s", "transform_s"):
            for side in ("memory", "dask-1", "dask-2"):
                row.append(f"{n / res[side][label][step]:,.0f}")
        lines.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        "## Bytes moved per method (2 workers)",
        "",
        "| method | fit: worker<->worker (row gather, tree merge) | fit: fitted state to client "
        "| transform: graph sent (holds the state once) | transform: worker<->worker | fitted state (pickled) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, r in res["dask-2"].items():
        lines.append(
            f"| {label} | {_mib(r['fit_ww'])} | {_mib(r['fit_back'])} | {_mib(r['transform_graph'])} | "
            f"{_mib(r['transform_ww'])} | {_mib(r['state'])} |"
        )
    lines += [
        "",
        "Input rows never move: a fit sends back only sketches (merged up a tree) or the gathered "
        "landmark and bandwidth-sample rows; a transform ships the fitted state once per worker and "
        "returns only what is asked for.",
        "",
    ]
    return "\n".join(lines)


def run(cfg: RunConfig) -> CaseResult:
    """Harness entry point (``benchmarks.run``): the rows/s as metrics, the full table as a note."""
    s, res = measure(cfg.quick, cfg.log)
    out = CaseResult(NAME, TITLE, setup=f"{s['n_rows']:,} x {s['n_features']} rows persisted on the workers")
    n = s["n_rows"]
    for label in res["memory"]:
        for side in ("memory", "dask-1", "dask-2"):
            out.metrics.append(Metric(f"{label}: transform, {side}", n / res[side][label]["transform_s"], "rows/s"))
    out.notes.append(render(s, res))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--output", default=RESULTS)
    args = p.parse_args(argv)
    s, res = measure(args.quick)
    text = render(s, res)
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
