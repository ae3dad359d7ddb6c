"""Run the benchmark suite and write a Markdown report.

Usage (from the repository root)::

    python -m benchmarks.run [--quick] [--case NAME ...] [--output FILE] [--repeats N]

A full run (no ``--case``) writes ``benchmarks/results/latest.md`` unless
``--output`` says otherwise, and the scaling figures under ``docs/results/``.
Each case runs in a fresh subprocess (sequentially: the large cases need
several GB) so its peak RSS is its own; ``--in-process`` runs them here.
On machines where ``OPENBLAS_CORETYPE`` pins an old OpenBLAS kernel, the
committed results were produced with it unset for that command only::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python -m benchmarks.run
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import time

from . import _harness
from ._harness import (
    CaseResult,
    NotAvailable,
    RunConfig,
    machine_info,
    render_case,
    render_header,
    render_report,
    render_summary,
    run_child,
)

# case name -> module (one module per case, in the order)
CASES = {
    "kernel_block": "benchmarks.kernel_block",
    "embedding": "benchmarks.embedding",
    "rff": "benchmarks.random_fourier",
    "kpca": "benchmarks.kpca",
    "streaming": "benchmarks.streaming",
    "memory": "benchmarks.embed_memory",
    "scaling": "benchmarks.scaling",
    "cluster": "benchmarks.cluster_scale",
    "startup": "benchmarks.startup",
    "csv": "benchmarks.csv_ingest",
    "float32": "benchmarks.float32",
    "rss": "benchmarks.rss_scale",
}

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUTPUT = os.path.join(ROOT, "benchmarks", "results", "latest.md")
DEFAULT_PLOTS = os.path.join(ROOT, "docs", "results")


def case_module(name: str):
    return importlib.import_module(CASES[name])


def run_case(name: str, cfg: RunConfig) -> CaseResult:
    """Run one case in this process; a missing estimator gives a 'not available' result."""
    mod = case_module(name)
    t0 = time.perf_counter()
    try:
        if cfg.quick:
            # Quick mode is a smoke test, not a measurement: one BLAS thread keeps
            # it fast on a loaded CI machine, where idle-spinning OpenBLAS threads
            # can make a tiny SVD 50x slower.
            from threadpoolctl import threadpool_limits

            with threadpool_limits(limits=1, user_api="blas"):
                res = mod.run(cfg)
        else:
            res = mod.run(cfg)
    except NotAvailable as exc:
        res = CaseResult(mod.NAME, mod.TITLE, available=False, notes=[str(exc)])
    res.seconds = time.perf_counter() - t0
    return res


def _run_case_subprocess(name: str, args) -> CaseResult:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        cmd = [sys.executable, "-m", "benchmarks.run", "--case", name, "--worker-json", out]
        if args.quick:
            cmd.append("--quick")
        if args.repeats is not None:
            cmd += ["--repeats", str(args.repeats)]
        if args.no_memory:
            cmd.append("--no-memory")
        if args.plots_dir:
            cmd += ["--plots-dir", args.plots_dir]
        code, wall, peak, _ = run_child(cmd, cwd=ROOT)
        mod = case_module(name)
        if code != 0 or not os.path.exists(out):
            return CaseResult(
                mod.NAME,
                mod.TITLE,
                available=False,
                notes=[f"case process failed with exit code {code} (see stderr)"],
                seconds=wall,
            )
        with open(out) as fh:
            res = CaseResult.from_dict(json.load(fh))
    res.peak_rss_mb = peak
    return res


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, 2 repeats: a smoke test, not a measurement")
    parser.add_argument(
        "--case",
        action="append",
        choices=sorted(CASES),
        metavar="NAME",
        help=f"run only this case (repeatable); one of {', '.join(CASES)}",
    )
    parser.add_argument(
        "--output",
        help="write the Markdown report here (default for a full run of every case: benchmarks/results/latest.md)",
    )
    parser.add_argument("--repeats", type=int, help="timed rounds per comparison (overrides the case defaults)")
    parser.add_argument("--no-memory", action="store_true", help="skip the per-call peak-memory measurements")
    parser.add_argument("--in-process", action="store_true", help="run the cases in this process")
    parser.add_argument(
        "--plots-dir",
        help="where the scaling case writes figures (default docs/results for a full run, none otherwise)",
    )
    parser.add_argument("--worker-json", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeats is not None and args.repeats < 1:
        parser.error("--repeats must be >= 1")

    names = args.case or list(CASES)
    full_run = not args.quick and not args.case
    if args.plots_dir is None and full_run:
        args.plots_dir = DEFAULT_PLOTS
    cfg = RunConfig(quick=args.quick, repeats=args.repeats, measure_memory=not args.no_memory, plots_dir=args.plots_dir)
    if args.quick:  # a smoke test measures nothing: no settling pauses
        _harness.SETTLE_S = 0.0
    elif not args.worker_json:  # (fresh processes load our byte-code, as an installed copy does)
        _harness.byte_compile_package()

    if args.worker_json:  # child of a subprocess run: one case, result as JSON
        res = run_case(names[0], cfg)
        with open(args.worker_json, "w") as fh:
            json.dump(res.to_dict(), fh)
        return 0

    info = machine_info()
    results = []
    for name in names:
        cfg.log(f"== {name}")
        res = run_case(name, cfg) if args.in_process else _run_case_subprocess(name, args)
        results.append(res)
        print(render_case(res), flush=True)
    if hasattr(os, "getloadavg"):
        info["load_average_end"] = os.getloadavg()
    report = render_report(info, results, args.quick)
    output = args.output or (DEFAULT_OUTPUT if full_run else None)
    # the cases were printed as they finished; end with the machine and the summary
    print(render_header(info, args.quick))
    print(render_summary(results), flush=True)
    if output:
        os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
        with open(output, "w") as fh:
            fh.write(report)
        cfg.log(f"report written to {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
