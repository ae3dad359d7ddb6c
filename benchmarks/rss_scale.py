"""m) Memory flat in N: peak RSS of ``kernelsketch cluster -n 200 -d 100`` at 2,000,000 and 16,000,000 rows.

The same command on the 2M and the 16M x 10 float64 ``.npy`` of case i (10 Gaussian clusters), each in a
fresh process (peak RSS of that process, ``os.wait4``).  Nothing the command holds depends on N: blocks,
the landmarks, the bandwidth's sampled rows and the k-means sample have fixed sizes; a scattered gather
reads the memory-mapped file region by region and drops its pages after each.

Target (issue #28): peak RSS at 16M <= 1.2 x at 2M (it was 391 -> 1,450 MiB).
"""

from __future__ import annotations

import os
import shutil
import tempfile

from ._harness import CaseResult, Metric, RunConfig

NAME = "rss"
TITLE = "m) Memory flat in N: kernelsketch cluster -n 200 -d 100 at 2M and 16M rows"
FULL = (2_000_000, 16_000_000)
QUICK = (100_000, 800_000)


def expected_rows(quick: bool) -> list:
    return ["peak RSS: large / small"]


def run(cfg: RunConfig) -> CaseResult:
    from .cluster_scale import _cli, _json_of, write_input_in_child

    sizes = QUICK if cfg.quick else FULL
    out = {}
    for n in sizes:
        tmp = tempfile.mkdtemp(prefix="ks-rss-")
        try:
            cfg.log(f"[{NAME}] writing {n:,} x 10")
            write_input_in_child(tmp, n, 10, 10)
            argv = [*_cli(), "cluster", os.path.join(tmp, "X.npy"), "-k", "10", "--method", "kjl", "-n", "200"]
            cfg.log(f"[{NAME}] cluster {n:,} rows")
            out[n] = _json_of([*argv, "-d", "100", "-o", os.path.join(tmp, "labels.npy")])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    (small, large) = sizes
    res = CaseResult(
        NAME,
        TITLE,
        setup=f"{small:,} and {large:,} x 10 float64 .npy ({large * 80 / 2**30:.2f} GiB); "
        "`cluster -k 10 --method kjl -n 200 -d 100 -o labels.npy`, a fresh process each.",
    )
    res.metrics += [
        Metric(
            "peak RSS: large / small",
            out[large][2] / out[small][2],
            "x",
            1.2,
            "<=",
            note=f"{out[small][2]:,.0f} MiB at {small:,} rows ({out[small][1]:.1f} s), "
            f"{out[large][2]:,.0f} MiB at {large:,} rows ({out[large][1]:.1f} s)",
        ),
        Metric(f"peak RSS at {large:,} rows", out[large][2], "MiB"),
    ]
    return res
