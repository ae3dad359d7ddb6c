"""g) Scaling curves of ``KernelJL.transform``: time vs N, n, d and BLAS threads.

The cost model is ``O(N n p)`` for the kernel blocks plus ``O(N n d)`` for the
projection, so time must be linear in N (checked: the log-log slope of time
vs N is within 0.15 of 1), about linear in n, and flat-then-linear in d.
Threads are limited with ``threadpoolctl.threadpool_limits``.  With
``plots_dir`` set, the curves are saved as ``scaling_<axis>.png`` there plus
``scaling.md`` (the tables and the machine line).
"""

from __future__ import annotations

import os

import numpy as np

from ._harness import CaseResult, Metric, RunConfig, require, time_interleaved

NAME = "scaling"
TITLE = "g) Scaling of KernelJL.transform (time vs N, n, d, threads)"

FULL = {
    "base": {"N": 100_000, "n": 1_000, "d": 50},
    "p": 10,
    "N": [25_000, 50_000, 100_000, 200_000],
    "n": [250, 500, 1_000, 2_000],
    "d": [10, 25, 50, 100, 200],
    "threads": [1, 2],
}
QUICK = {
    "base": {"N": 2_000, "n": 100, "d": 10},
    "p": 10,
    "N": [1_000, 2_000, 4_000],
    "n": [50, 100],
    "d": [5, 10],
    "threads": [1, 2],
}
AXES = {"N": "rows transformed N", "n": "landmarks n", "d": "embedding dimension d", "threads": "BLAS threads"}


def expected_rows(quick: bool) -> list:
    return ["time vs N: |log-log slope - 1|", "time vs threads: speedup 2 threads / 1 thread"]


def run(cfg: RunConfig) -> CaseResult:
    from threadpoolctl import threadpool_limits

    KernelJL = require("kernelsketch.maps", "KernelJL")
    s = QUICK if cfg.quick else FULL
    p = s["p"]
    repeats = cfg.n_repeats(3)
    rng = np.random.default_rng(6)
    Xall = rng.standard_normal((max(s["N"]), p))
    h = float(np.sqrt(2.0 * p))
    base = s["base"]
    res = CaseResult(
        NAME,
        TITLE,
        setup=(
            f"X: standard normal with p = {p} features, Gaussian h = sqrt(2 p); base point N = {base['N']:,}, "
            f"n = {base['n']:,}, d = {base['d']}; one axis varied at a time; median of {repeats} runs."
        ),
    )
    curves = {}

    def measure(N, n, d, threads=None):
        est = KernelJL(n_components=d, n_landmarks=n, bandwidth=h, random_state=0).fit(Xall[: max(n, 2 * d, 1000)])
        X = Xall[:N]
        if threads is None:
            return time_interleaved({"t": lambda: est.transform(X)}, repeats)["t"].median
        with threadpool_limits(limits=threads, user_api="blas"):
            return time_interleaved({"t": lambda: est.transform(X)}, repeats)["t"].median

    for axis in ("N", "n", "d", "threads"):
        cfg.log(f"[{NAME}] vs {axis}")
        xs, ts = [], []
        for v in s[axis]:
            kw = dict(base)
            if axis == "threads":
                t = measure(**kw, threads=v)
            else:
                kw[axis] = v
                t = measure(**kw)
            xs.append(v)
            ts.append(t)
        curves[axis] = (xs, ts)

    xs, ts = curves["N"]
    slope = float(np.polyfit(np.log(xs), np.log(ts), 1)[0])
    res.metrics.append(
        Metric("time vs N: |log-log slope - 1|", abs(slope - 1.0), "", 0.15, "<=", note=f"slope {slope:.3f}")
    )
    for axis in ("n", "d"):
        xa, ta = curves[axis]
        res.metrics.append(Metric(f"time vs {axis}: log-log slope", float(np.polyfit(np.log(xa), np.log(ta), 1)[0])))
    tt = dict(zip(*curves["threads"], strict=True))
    res.metrics.append(Metric("time vs threads: speedup 2 threads / 1 thread", tt[1] / tt[2] if 2 in tt else None, "x"))
    table = ["| axis | value | time | rows/s |", "|---|---:|---:|---:|"]
    for axis, (xa, ta) in curves.items():
        for v, t in zip(xa, ta, strict=True):
            N = v if axis == "N" else base["N"]
            table.append(f"| {axis} | {v:,} | {t * 1e3:.1f} ms | {N / t:,.0f} |")
    res.notes.append(f"time vs N log-log slope = {slope:.3f}")
    res.notes.append("Curves:\n\n" + "\n".join(table))
    if cfg.plots_dir:
        _plot(curves, base, cfg.plots_dir, res)
    return res


def _plot(curves, base, plots_dir, res):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ._harness import machine_info

    os.makedirs(plots_dir, exist_ok=True)
    info = machine_info()
    arch = ", ".join(sorted({b["architecture"] or "-" for b in info["blas"] if b["internal_api"] == "openblas"}))
    names = []
    for axis, (xs, ts) in curves.items():
        fig, ax = plt.subplots(figsize=(4.5, 3.2))
        ax.plot(xs, ts, "o-", label="KernelJL.transform")
        if axis != "threads":
            # a line through the base point with slope 1: what linear scaling looks like
            ref = ts[xs.index(base[axis])] if base[axis] in xs else ts[len(ts) // 2]
            x0 = base[axis] if base[axis] in xs else xs[len(xs) // 2]
            ax.plot(xs, [ref * x / x0 for x in xs], "--", color="grey", label="linear")
            ax.set_xscale("log")
            ax.set_yscale("log")
        ax.set_xlabel(AXES[axis])
        ax.set_ylabel("seconds")
        fixed = ", ".join(f"{k}={v:,}" for k, v in base.items() if k != axis)
        ax.set_title(f"time vs {axis} ({fixed})", fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        name = f"scaling_{axis}.png"
        fig.savefig(os.path.join(plots_dir, name), dpi=110)
        plt.close(fig)
        names.append(name)
    lines = [
        "# Scaling of KernelJL.transform",
        "",
        f"Generated by the scaling case of `python -m benchmarks.run` (full run) on {info['date']}; "
        f"CPU {info['cpu']} ({info['cores']}), OpenBLAS kernel {arch}, numpy {info['numpy']}.",
        "",
        res.setup,
        "",
    ]
    lines += [note for note in res.notes if note.startswith("Curves")]
    lines.append("")
    lines += [f"![{n}]({n})" for n in names]
    with open(os.path.join(plots_dir, "scaling.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
