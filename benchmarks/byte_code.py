"""What compiling the package from source costs a fresh ``kernelsketch cluster`` process.

``pip install`` byte-compiles a wheel's modules; an editable install gets byte-code only when an import writes it, and
never where ``PYTHONDONTWRITEBYTECODE`` is set (this workplace's shells set it).  The fresh-process benchmarks
(:func:`benchmarks._harness.byte_compile_package`) now compile the package first; this one measures what that changes.

Two copies of the package (``git archive HEAD src``, the committed code): one without byte-code, one compiled by
``compileall``; the same ``cluster X.npy -k 8 -o labels.npy`` command (scikit-learn and the rest loaded from their
installed byte-code in both) runs from each in turn, alternated ``--repeats`` times, with ``PYTHONDONTWRITEBYTECODE=1``
so the first copy stays without.  Reports the medians, the rounds' ratios and whether the labels are identical.

Usage (writes ``benchmarks/results/byte-code.md``)::

    python -m benchmarks.byte_code [--rows 5000000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

from ._harness import call_in_child, machine_info, render_header, run_child, write_page

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_COMMAND = (
    "import sys; sys.argv = ['kernelsketch', 'cluster', sys.argv[1], '-k', '8', '-o', sys.argv[2], '--force', '-q']; "
    "from kernelsketch.cli.console import main; main()"
)


def _copy_of_src(folder, compiled, revision="HEAD"):
    """The ``src/`` of the committed ``revision`` under ``folder`` (its path returned), compiled when ``compiled``."""
    os.makedirs(folder)
    archive = subprocess.run(["git", "archive", revision, "src"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
    src = os.path.join(folder, "src")
    if compiled and not compileall.compile_dir(os.path.join(src, "kernelsketch"), quiet=1):
        raise RuntimeError("compileall failed")
    return src


def _run(src, X, labels):
    """(wall seconds, peak MiB) of the command from the package in ``src``."""
    env = {**os.environ, "PYTHONPATH": src, "PYTHONDONTWRITEBYTECODE": "1"}
    run = run_child([sys.executable, "-c", _COMMAND, X, labels], env=env)
    if run.code != 0:
        raise RuntimeError("the cluster command failed")
    return run.wall, run.peak_mib


def measure(n_rows, repeats):
    tmp = tempfile.mkdtemp(prefix="ks-bytecode-")
    try:
        # the floor benchmark's input (cluster_scale's blobs, float32, seed 38), written in a child: a parent's RSS
        # high-water mark would be every measured command's
        call_in_child("benchmarks.cluster_scale", "write_input", tmp, int(n_rows), 20, 8, 500_000, "float32", 38)
        X = os.path.join(tmp, "X.npy")
        srcs = {"from source": _copy_of_src(os.path.join(tmp, "plain"), False)}
        srcs["byte-compiled"] = _copy_of_src(os.path.join(tmp, "compiled"), True)
        for name, src in srcs.items():  # warm-up: the page cache, numba's kernel cache
            _run(src, X, os.path.join(tmp, f"warm-{name}.npy"))
        walls = {name: [] for name in srcs}
        peaks = dict.fromkeys(srcs, 0.0)
        for rep in range(repeats):
            for name, src in srcs.items():
                wall, peak = _run(src, X, os.path.join(tmp, f"{name}-{rep}.npy"))
                walls[name].append(wall)
                peaks[name] = max(peaks[name], peak)
                print(f"round {rep + 1}: {name} {wall:.2f} s", flush=True)
        first = np.load(os.path.join(tmp, "from source-0.npy"))
        same = all(
            np.array_equal(first, np.load(os.path.join(tmp, f"{name}-{rep}.npy")))
            for name in srcs
            for rep in range(repeats)
        )
        plain = not any("__pycache__" in dirs for _, dirs, _ in os.walk(srcs["from source"]))
        return walls, peaks, same, plain
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def render(walls, peaks, same, stayed_plain, args):
    plain, compiled = walls["from source"], walls["byte-compiled"]
    ratios = [c / p for c, p in zip(compiled, plain, strict=True)]
    lines = [
        f"## A fresh `kernelsketch cluster` of {args.rows:,} x 20 float32 rows (8 blobs, k = 8), the package compiled "
        "from source or loaded from byte-code",
        "",
        f"The same committed code from two copies, alternated {args.repeats} times after one warm-up run of each "
        "(`PYTHONDONTWRITEBYTECODE=1`, so the first copy "
        + ("stayed without byte-code: checked after the runs" if stayed_plain else "GOT byte-code: the figures mix")
        + "); wall seconds of the whole process.",
        "",
        "| package | median wall (s) | min | max | peak RSS (MiB) |",
        "|---|---|---|---|---|",
    ]
    for name, w in walls.items():
        lines.append(f"| {name} | {statistics.median(w):.2f} | {min(w):.2f} | {max(w):.2f} | {peaks[name]:,.0f} |")
    lines += [
        "",
        f"Byte-compiled / from source, the median of the rounds' ratios: **{statistics.median(ratios):.3f}** "
        f"(rounds: {', '.join(f'{r:.3f}' for r in ratios)}); the median saving "
        f"{statistics.median(plain) - statistics.median(compiled):.2f} s. Labels identical in every run: "
        f"{'yes' if same else 'NO'}.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--output", default=os.path.join(RESULTS, "byte-code.md"))
    args = ap.parse_args(argv)
    walls, peaks, same, stayed_plain = measure(args.rows, args.repeats)
    write_page(
        render_header(machine_info(), False) + "\n" + render(walls, peaks, same, stayed_plain, args), args.output
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
