"""f) Memory: ``kernelsketch embed`` of a 5,000,000 x 10 float64 ``.npy`` with K-JL (n = 1,000, d = 50).

Target (issue): peak RSS under 1.5 GB beyond the output array; rows/s
reported.  The command runs in a fresh subprocess, exactly as a user types
it, and its peak RSS is that child's own ``ru_maxrss`` (``os.wait4``).  The
input is written in chunks to a temporary directory (400 MB) and deleted
afterwards.  Rows/s is measured on the command's wall time, so it includes
interpreter start-up and imports.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile

import numpy as np

from ._harness import CaseResult, Metric, MiB, NotAvailable, RunConfig, call_in_child, run_child

NAME = "memory"
TITLE = "f) Memory: kernelsketch embed of a 5,000,000 x 10 .npy (K-JL n = 1,000, d = 50)"

FULL = {"n_rows": 5_000_000, "n_features": 10, "n_landmarks": 1_000, "n_components": 50}
QUICK = {"n_rows": 20_000, "n_features": 10, "n_landmarks": 100, "n_components": 10}
LIMIT_MB = 1.5e9 / MiB  # 1.5 GB


def expected_rows(quick: bool) -> list:
    return ["peak RSS beyond the output array", "throughput"]


def _cli_command():
    if importlib.util.find_spec("kernelsketch.cli.main") is None:
        raise NotAvailable("kernelsketch.cli.main not available (the CLI is not written yet)")
    script = os.path.join(os.path.dirname(sys.executable), "kernelsketch")
    if os.path.exists(script):
        return [script]
    return [sys.executable, "-c", "import sys; from kernelsketch.cli.main import main; sys.exit(main())"]


def write_input(path, n_rows, n_features, chunk=500_000):
    rng = np.random.default_rng(5)
    X = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(n_rows, n_features))
    for start in range(0, n_rows, chunk):
        stop = min(start + chunk, n_rows)
        X[start:stop] = rng.standard_normal((stop - start, n_features))
    X.flush()
    del X


def run(cfg: RunConfig) -> CaseResult:
    cmd0 = _cli_command()
    s = QUICK if cfg.quick else FULL
    N, p, n, d = s["n_rows"], s["n_features"], s["n_landmarks"], s["n_components"]
    tmp = tempfile.mkdtemp(prefix="ks-bench-")
    try:
        src, dst = os.path.join(tmp, "in.npy"), os.path.join(tmp, "out.npy")
        cfg.log(f"[{NAME}] writing {N:,} x {p} input")
        # in a child: writing it here made the command's peak read as this process's (609 MiB, 2026-11-23)
        call_in_child("benchmarks.embed_memory", "write_input", src, N, p)
        cmd = [*cmd0, "embed", src, "-o", dst, "--method", "kjl", "-n", str(n), "-d", str(d)]
        cfg.log(f"[{NAME}] {' '.join(cmd)}")
        code, wall, peak_mb, _ = run_child(cmd)
        if code != 0 or not os.path.exists(dst):
            raise NotAvailable(f"`kernelsketch embed` failed (exit code {code}): see stderr")
        Z = np.load(dst, mmap_mode="r")
        out_mb = Z.nbytes / MiB
        shape, dtype = Z.shape, Z.dtype
        finite = bool(np.isfinite(Z[: min(N, 100_000)]).all())
        del Z
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res = CaseResult(
        NAME,
        TITLE,
        setup=(
            f"`kernelsketch embed in.npy -o out.npy --method kjl -n {n} -d {d}` on a {N:,} x {p} float64 .npy "
            f"({N * p * 8 / 1e6:,.0f} MB, memory-mapped by the command); output {shape} {dtype} "
            f"({out_mb:,.0f} MiB)."
        ),
    )
    res.metrics += [
        # The output is written through a memory map: its pages need not all be
        # resident, so the peak can be below the output size (reported as 0).
        Metric(
            "peak RSS beyond the output array",
            max(peak_mb - out_mb, 0.0),
            "MiB",
            LIMIT_MB,
            "<=",
            note=f"peak RSS {peak_mb:,.0f} MiB - output {out_mb:,.0f} MiB, floored at 0",
        ),
        Metric("peak RSS of the command", peak_mb, "MiB", out_mb + LIMIT_MB, "<=", note="output + 1.5 GB"),
        Metric("throughput", N / wall, "rows/s"),
        Metric("wall time of the command", wall, "s"),
    ]
    if shape != (N, d) or not finite:
        res.notes.append(f"**output check failed**: shape {shape}, all finite: {finite}")
    return res
