"""How long a fresh process takes to start: ``kernelsketch --help``, ``cluster --help`` and ``import kernelsketch``.

Each command runs in a fresh process (the package byte-compiled first, as ``pip install`` leaves a wheel), the
commands alternated ``--repeats`` times after one untimed round; the medians are reported beside two references run in
the same rounds: an empty interpreter (``python -c pass``, the floor) and ``import sklearn.cluster`` (what a
scikit-learn ``MiniBatchKMeans`` script pays before its first line of work).

Targets (issue #65): ``kernelsketch --help`` at most 0.5 s, ``import kernelsketch`` at most 0.3 s.

Usage (writes ``benchmarks/results/cli-start.md``)::

    python -m benchmarks.cli_start [--repeats 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

from ._harness import byte_compile_package, machine_info, render_header, run_child, write_page
from .cluster_scale import _cli

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")

#: (name, the command after the interpreter or the console script, its target in seconds or None)
COMMANDS = [
    ("`kernelsketch --help`", "cli", ["--help"], 0.5),
    ("`kernelsketch cluster --help`", "cli", ["cluster", "--help"], 0.5),
    ("`python -c 'import kernelsketch'`", "py", ["-c", "import kernelsketch"], 0.3),
    ("`python -c 'import sklearn.cluster'` (reference)", "py", ["-c", "import sklearn.cluster"], None),
    ("`python -c pass` (the floor)", "py", ["-c", "pass"], None),
]


def measure(repeats):
    """``{name: [wall seconds of each round]}``, the commands alternated round by round after one untimed round."""
    walls = {name: [] for name, *_ in COMMANDS}
    for rep in range(repeats + 1):
        for name, kind, args, _ in COMMANDS:
            cmd = (_cli() if kind == "cli" else [sys.executable]) + args
            run = run_child(cmd, stdout=subprocess.DEVNULL)
            if run.code != 0:
                raise RuntimeError(f"{name} failed (exit {run.code})")
            if rep:
                walls[name].append(run.wall)
    return walls


def render(walls, repeats):
    lines = [
        "## A fresh process's start",
        "",
        f"Each command in a fresh process, the {len(COMMANDS)} commands alternated in {repeats} rounds after one "
        "untimed round (standard output discarded); wall seconds of the whole process, the median and the range.",
        "",
        "| command | median (s) | min | max | target | met |",
        "|---|---|---|---|---|---|",
    ]
    for name, _, _, target in COMMANDS:
        w = walls[name]
        med = statistics.median(w)
        met = "-" if target is None else ("yes" if med <= target else "NO")
        tgt = "-" if target is None else f"<= {target} s"
        lines.append(f"| {name} | {med:.3f} | {min(w):.3f} | {max(w):.3f} | {tgt} | {met} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--output", default=os.path.join(RESULTS, "cli-start.md"))
    args = ap.parse_args(argv)
    byte_compile_package()
    walls = measure(args.repeats)
    write_page(render_header(machine_info(), False) + "\n" + render(walls, args.repeats), args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
