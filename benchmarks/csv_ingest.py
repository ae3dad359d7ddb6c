"""k) CSV ingestion: a 1,000,000 x 10 CSV read in row blocks, against pyarrow's own streaming reader.

``open_matrix(path).iter_blocks()`` (what every file-reading command does) against
``pyarrow.csv.open_csv`` over the same file with float64 columns, each consuming every block;
interleaved, median of repeats (the file stays in the page cache, so this is parsing speed).
Our pyarrow route (when pyarrow is installed) and our numpy route (without it) are both reported.

Target (issue #28): our reading >= 0.7x pyarrow's throughput.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from ._harness import CaseResult, Comparison, Metric, NotAvailable, RunConfig, time_interleaved

NAME = "csv"
TITLE = "k) CSV ingestion: 1,000,000 x 10 in row blocks vs pyarrow.csv"
FULL = (1_000_000, 10)
QUICK = (50_000, 10)


def expected_rows(quick: bool) -> list:
    return ["CSV rows/s: open_matrix().iter_blocks() vs pyarrow.csv.open_csv"]


def write_csv(path, n_rows, n_cols, chunk=100_000):
    rng = np.random.default_rng(0)
    with open(path, "w") as f:
        f.write(",".join(f"x{j}" for j in range(n_cols)) + "\n")
        for start in range(0, n_rows, chunk):
            np.savetxt(f, rng.normal(size=(min(chunk, n_rows - start), n_cols)), delimiter=",", fmt="%.17g")


def run(cfg: RunConfig) -> CaseResult:
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError as exc:
        raise NotAvailable("pyarrow is not installed (the 'parquet' extra): no reference") from exc
    from kernelsketch.io import delimited, open_matrix

    n, d = QUICK if cfg.quick else FULL
    repeats = cfg.n_repeats(3)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "X.csv")
        cfg.log(f"[{NAME}] writing {n:,} x {d} CSV")
        write_csv(path, n, d)
        size_mb = os.path.getsize(path) / 2**20

        def ours():
            return sum(X.shape[0] for X, _ in open_matrix(path).iter_blocks())

        def numpy_route():
            delimited.USE_PYARROW = False
            try:
                return ours()
            finally:
                delimited.USE_PYARROW = True

        def reference():
            types = {f"x{j}": pa.float64() for j in range(d)}
            with pacsv.open_csv(path, convert_options=pacsv.ConvertOptions(column_types=types)) as r:
                return sum(b.num_rows for b in r)

        cfg.log(f"[{NAME}] reading")
        t = time_interleaved({"ours": ours, "ref": reference, "numpy": numpy_route}, repeats)
    res = CaseResult(
        NAME,
        TITLE,
        setup=f"{n:,} x {d} float64 written with 17 significant digits ({size_mb:.0f} MiB), header line; "
        f"median of {repeats} interleaved reads after 1 warm-up.",
    )
    res.comparisons += [
        Comparison(
            "CSV rows/s: open_matrix().iter_blocks() vs pyarrow.csv.open_csv",
            "open_matrix().iter_blocks() (pyarrow route)",
            "pyarrow.csv.open_csv",
            t["ours"].median,
            t["ref"].median,
            0.7,
            ">= 0.7x",
        ),
        Comparison(
            "CSV without pyarrow: numpy route vs pyarrow.csv.open_csv",
            "open_matrix().iter_blocks() (numpy route, USE_PYARROW = False)",
            "pyarrow.csv.open_csv",
            t["numpy"].median,
            t["ref"].median,
        ),
    ]
    res.metrics.append(Metric("CSV throughput (ours)", n / t["ours"].median, "rows/s"))
    return res
