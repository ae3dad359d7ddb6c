"""Side-by-side benchmarks of kernelsketch against scikit-learn and the BLAS floor.

Run from the repository root::

    python -m benchmarks.run                 # full run, writes benchmarks/results/latest.md
    python -m benchmarks.run --quick         # small sizes, 1-2 repeats (CI smoke)
    python -m benchmarks.run --case kernel_block --output out.md

One module per case (:data:`benchmarks.run.CASES`); the timing, memory and
reporting machinery lives in :mod:`benchmarks._harness`.
"""
