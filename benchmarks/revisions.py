"""The default ``kernelsketch cluster`` of two committed revisions side by side, with MiniBatchKMeans in every round.

A change to the search or the pass is worth what it saves on the whole command, and this 2-core host's speed drifts
by tens of percent within an hour: pages measured at different times cannot say what a change did.  Here both
revisions run in the same rounds.  Two copies of the package (``git archive REV src``, byte-compiled as ``pip
install`` leaves a wheel); each round runs ``cluster X.npy -k 8 -o labels.npy`` from the base, from the head, then
scikit-learn's ``MiniBatchKMeans(8)`` (np.load + fit_predict, :mod:`benchmarks.cluster_floor`'s reference), all
fresh processes with the file in the page cache.  Reports the medians of wall and CPU seconds, the rounds' ratios
(head / base, each / MiniBatchKMeans; head / base of the CPU seconds) and whether both revisions give the same
labels.

``--workers N`` runs both revisions' command with ``--workers N`` (a local Dask cluster of N processes; its workers
import the same copy of the package), against the same MiniBatchKMeans.

Usage (writes ``benchmarks/results/revisions.md``)::

    python -m benchmarks.revisions --base REV [--head HEAD] [--rows 5000000] [--repeats 7] [--workers N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

from ._harness import call_in_child, machine_info, render_header, run_child, write_page
from .byte_code import _COMMAND, _copy_of_src
from .cluster_floor import MINIBATCH

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: the floor benchmark's reference command, MiniBatchKMeans(8) with its default n_init
_MBK = MINIBATCH.format(k=8, n_init="")


def _command(workers=None):
    """The default ``cluster`` command of :mod:`benchmarks.byte_code`, with ``--workers N`` when given."""
    if workers is None:
        return _COMMAND
    return _COMMAND.replace("'--force', '-q']", f"'--force', '-q', '--workers', '{int(workers)}']")


def _commit(revision):
    """The full hash of ``revision`` (a ValueError naming it when git does not know it)."""
    out = subprocess.run(["git", "rev-parse", "--verify", f"{revision}^{{commit}}"], cwd=ROOT, capture_output=True)
    if out.returncode != 0:
        raise ValueError(f"git does not know the revision {revision!r}: {out.stderr.decode().strip()}")
    return out.stdout.decode().strip()


def _run(code, src, X, labels):
    """(wall seconds, peak MiB, CPU seconds) of ``python -c code X labels`` with the package in ``src`` (None: the
    installed one); the CPU time is user + system of the process and the children it waited for."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    run = run_child([sys.executable, "-c", code, X, labels], env=env)
    if run.code != 0:
        raise RuntimeError(f"the command failed ({code[:60]} ...)")
    return run.wall, run.peak_mib, run.cpu


def measure(base, head, n_rows, repeats, workers=None):
    tmp = tempfile.mkdtemp(prefix="ks-revisions-")
    try:
        # the floor benchmark's input (cluster_scale's blobs, float32, seed 38), written in a child
        call_in_child("benchmarks.cluster_scale", "write_input", tmp, int(n_rows), 20, 8, 500_000, "float32", 38)
        X = os.path.join(tmp, "X.npy")
        runs = {
            "base": (_command(workers), _copy_of_src(os.path.join(tmp, "base"), True, base)),
            "head": (_command(workers), _copy_of_src(os.path.join(tmp, "head"), True, head)),
            "MiniBatchKMeans": (_MBK, None),
        }
        for name, (code, src) in runs.items():  # warm-up: the page cache, numba's kernel cache of each copy
            _run(code, src, X, os.path.join(tmp, f"warm-{name}.npy"))
        walls = {name: [] for name in runs}
        cpus = {name: [] for name in runs}
        peaks = dict.fromkeys(runs, 0.0)
        for rep in range(repeats):
            for name, (code, src) in runs.items():
                wall, peak, cpu = _run(code, src, X, os.path.join(tmp, f"{name}-{rep}.npy"))
                walls[name].append(wall)
                cpus[name].append(cpu)
                peaks[name] = max(peaks[name], peak)
                print(f"round {rep + 1}: {name} {wall:.2f} s (CPU {cpu:.2f} s)", flush=True)
        first = np.load(os.path.join(tmp, "base-0.npy"))
        same = all(
            np.array_equal(first, np.load(os.path.join(tmp, f"{name}-{rep}.npy")))
            for name in ("base", "head")
            for rep in range(repeats)
        )
        return walls, cpus, peaks, same
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _ratios(a, b):
    return [x / y for x, y in zip(a, b, strict=True)]


def render(walls, cpus, peaks, same, base, head, args):
    mbk = walls["MiniBatchKMeans"]
    pairs = {
        "head / base": _ratios(walls["head"], walls["base"]),
        "base / MiniBatchKMeans": _ratios(walls["base"], mbk),
        "head / MiniBatchKMeans": _ratios(walls["head"], mbk),
    }
    on = "" if args.workers is None else f" with `--workers {args.workers}` (a local Dask cluster)"
    lines = [
        f"## The default `kernelsketch cluster`{on} of {args.rows:,} x 20 float32 rows (8 blobs, k = 8): revision "
        f"`{base[:7]}` (base) and `{head[:7]}` (head) in the same rounds",
        "",
        f"Each of {args.repeats} rounds (after one warm-up run of each): the base's command, the head's, then "
        "scikit-learn's `MiniBatchKMeans(8)` (np.load + fit_predict); fresh processes, the file in the page cache, "
        "both packages byte-compiled; wall seconds of the whole process, and its CPU seconds (user + system, the "
        "process and its threads: what a change of work shows where the host's scheduling moves the wall).",
        "",
        "| command | median wall (s) | min | max | median CPU (s) | peak RSS (MiB) |",
        "|---|---|---|---|---|---|",
    ]
    labels = {"base": f"`cluster` at {base[:7]}", "head": f"`cluster` at {head[:7]}"}
    for name, w in walls.items():
        lines.append(
            f"| {labels.get(name, name)} | {statistics.median(w):.2f} | {min(w):.2f} | {max(w):.2f} | "
            f"{statistics.median(cpus[name]):.2f} | {peaks[name]:,.0f} |"
        )
    lines += ["", "| ratio | median of the rounds' ratios | rounds |", "|---|---|---|"]
    pairs["head / base, CPU"] = _ratios(cpus["head"], cpus["base"])
    for name, r in pairs.items():
        lines.append(f"| {name} | **{statistics.median(r):.3f}** | {', '.join(f'{x:.3f}' for x in r)} |")
    lines += ["", f"The two revisions' labels identical in every run: {'yes' if same else 'NO'}.", ""]
    if args.workers is not None:
        lines += [FORKED_NOTE, ""]
    return "\n".join(lines)


#: what a ``--workers`` page's CPU and peak columns cover (every such page says it)
FORKED_NOTE = (
    "With `--workers`, the CPU seconds and the peak RSS are those of the command and of the processes it waited for. "
    "From 864c720 on, a local cluster's workers are forked by a fork server "
    "(`kernelsketch.distributed.cluster.start_worker_forkserver`), which the command does not wait for: their CPU "
    "and memory are outside those two columns for such a revision (the wall is comparable; each worker's own peak is "
    "in the command's `--json` summary, `dask.worker_peak_mib`), and its CPU ratio is not a comparison of work."
)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the revision to compare with (a commit, tag or branch)")
    ap.add_argument("--head", default="HEAD")
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--workers", type=int, default=None, help="run both revisions' command with --workers N")
    ap.add_argument("--output", default=os.path.join(RESULTS, "revisions.md"))
    args = ap.parse_args(argv)
    base, head = _commit(args.base), _commit(args.head)
    walls, cpus, peaks, same = measure(base, head, args.rows, args.repeats, args.workers)
    page = render_header(machine_info(), False) + "\n" + render(walls, cpus, peaks, same, base, head, args)
    write_page(page, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
