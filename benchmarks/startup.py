"""j) A fresh process: the first random-feature fit, with numba's disk cache and without.

Each measurement is a new Python process (what a script or a CLI call pays), timed inside it
around the first ``RandomFourierFeatures(...).fit_transform`` after scikit-learn is imported (so
the import of scikit-learn, which every estimator pays, is not counted), median of repeats, at
two sizes: 2,000 rows (1M cosines: the numpy route, numba never imported) and 20,000 rows
(10M cosines, at least ``NUMBA_MIN_ELEMENTS``: the compiled kernel):

* **cold**: an empty ``KERNELSKETCH_CACHE_DIR``: numba compiles the fused cos/sin kernel;
* **warm**: the cache the cold run filled: numba loads the machine code;
* **floor**: the same fit a second time in the same process (nothing left to load or compile);
* **reference**: scikit-learn's ``RBFSampler`` first ``fit_transform`` in a fresh process.

Target (issue #28): the warm first fit <= 0.5 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from ._harness import CaseResult, Comparison, Metric, NotAvailable, RunConfig

NAME = "startup"
TITLE = "j) A fresh process: the first RandomFourierFeatures fit (numba disk cache)"
SIZES = (2000, 20000)
N_FEATURES = 10
FEATURES = 500

_CHILD = """
import json, sys, time
import numpy as np, sklearn.base
X = np.random.default_rng(0).normal(size=(int(sys.argv[2]), {d}))
which = sys.argv[1]
if which == "sklearn":
    from sklearn.kernel_approximation import RBFSampler as Est
    make = lambda: Est(gamma=0.1, n_components={m}, random_state=0)
else:
    from kernelsketch.maps import RandomFourierFeatures as Est
    make = lambda: Est({m}, bandwidth=3.0, random_state=0)
t = time.perf_counter(); make().fit_transform(X); first = time.perf_counter() - t
t = time.perf_counter(); make().fit_transform(X); again = time.perf_counter() - t
print(json.dumps({{"first": first, "again": again}}))
"""


def expected_rows(quick: bool) -> list:
    return [f"{n:,} rows: first fit, warm numba cache" for n in SIZES]


def _child(which, cache_dir, n_rows):
    code = _CHILD.format(d=N_FEATURES, m=FEATURES)
    env = {**os.environ, "KERNELSKETCH_CACHE_DIR": cache_dir}
    env.pop("NUMBA_CACHE_DIR", None)
    argv = [sys.executable, "-c", code, which, str(n_rows)]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise NotAvailable(f"the child process failed: {out.stderr.strip()[-300:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(cfg: RunConfig) -> CaseResult:
    import importlib.util

    if importlib.util.find_spec("numba") is None:
        raise NotAvailable("numba is not installed (the 'fast' extra): nothing is compiled")
    repeats = 2 if cfg.quick else 5
    res = CaseResult(
        NAME,
        TITLE,
        setup=f"n x {N_FEATURES} float64, {FEATURES} features; a new process per measurement, scikit-learn "
        f"imported before the clock starts; median of {repeats}.",
    )
    for n in SIZES:
        cold, warm, ref = [], [], []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory() as cache:
                cold.append(_child("ours", cache, n))
                warm.append(_child("ours", cache, n))
            ref.append(_child("sklearn", tempfile.gettempdir(), n))
        med = lambda rows, key: float(np.median([r[key] for r in rows]))
        res.metrics += [
            Metric(
                f"{n:,} rows: first fit, warm numba cache",
                med(warm, "first"),
                "s",
                0.5,
                "<=",
                note=f"second fit in that process (the floor) {med(warm, 'again') * 1e3:.1f} ms",
            ),
            Metric(f"{n:,} rows: first fit, cold cache (numba compiles, once per machine)", med(cold, "first"), "s"),
        ]
        res.comparisons.append(
            Comparison(
                f"{n:,} rows: first fit in a fresh process",
                "RandomFourierFeatures, warm cache",
                "sklearn RBFSampler",
                med(warm, "first"),
                med(ref, "first"),
                note=f"second fits: RBFSampler {med(ref, 'again') * 1e3:.1f} ms, "
                f"ours {med(warm, 'again') * 1e3:.1f} ms",
            )
        )
    return res
