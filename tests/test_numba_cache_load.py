"""The package's numba kernels load from the disk cache without numba's registry refresh (issue #65).

numba's own cache load refreshes its typing and target contexts first (about 0.3 s a process, all of it for
compiling); :func:`kernelsketch.utils.numba_cache._load_without_refresh` skips that for this package's kernels.
These tests run in fresh processes with a cache of their own, so that the second process really loads.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")

# a fresh process: count numba's refreshes, load (or compile) gram_add, check its numbers against numpy's,
# then compile a function of numba's own and call it (the compile path after a quick load)
_CODE = """
import numpy as np
from numba.core import base
calls = []
refresh = base.BaseContext.refresh
base.BaseContext.refresh = lambda self: (calls.append(1), refresh(self))[1]
from kernelsketch.kernels import _neighbors_numba as k
rng = np.random.default_rng(0)
n, m, r = 500, 40, 6
indices = np.stack([rng.choice(m, r, replace=False) for _ in range(n)]).astype(np.int32)
weights = rng.random((n, r))
G, degrees = np.zeros((m, m)), np.zeros(m)
k.gram_add(indices, weights, G, degrees, 0, m)
Z = np.zeros((n, m))
np.put_along_axis(Z, indices.astype(np.int64), weights, axis=1)
ok = np.allclose(G, Z.T @ Z, rtol=1e-12, atol=1e-12) and np.allclose(degrees, Z.sum(axis=0), rtol=1e-12)
loaded = sum(k.gram_add.stats.cache_hits.values())
before = len(calls)
import numba
ones = numba.njit(lambda n: np.ones(n) * 2.0)(5)
print(type(k.gram_add._cache).__name__, loaded, before, int(ok), int(len(calls) > before), ones.sum())
"""


def _run(env):
    out = subprocess.run([sys.executable, "-c", _CODE], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_a_cached_kernel_loads_without_the_registry_refresh_and_gives_the_same_numbers(tmp_path):
    env = {**os.environ, "KERNELSKETCH_CACHE_DIR": str(tmp_path)}
    env.pop("NUMBA_CACHE_DIR", None)
    first = _run(env)  # an empty cache: the kernel is compiled (numba refreshes its contexts to compile)
    assert first[:4] == ["QuickLoadCache", "0", first[2], "1"] and int(first[2]) > 0, first
    second = _run(env)  # the cache filled: loaded, with no refresh, and the numbers are numpy's
    assert second[:4] == ["QuickLoadCache", "1", "0", "1"], second
    # numba's own compile after a quick load still refreshes, and its function (which allocates) runs
    assert second[4:] == ["1", "10.0"], second


def test_without_numbas_private_names_the_kernels_keep_numbas_own_load(monkeypatch):
    import numba
    from numba.core.caching import Cache, FunctionCache

    from kernelsketch.utils import numba_cache

    def double(x):
        return 2 * x

    kernel = numba.njit(cache=True)(double)
    monkeypatch.delattr(Cache, "_load_overload")  # (the method the quick load calls, gone in some numba)
    assert numba_cache._load_without_refresh({"kernel": kernel}) is False
    assert type(kernel._cache) is FunctionCache


def test_only_the_packages_cached_dispatchers_change():
    import numba
    from numba.core.caching import FunctionCache, NullCache

    from kernelsketch.utils import numba_cache

    def double(x):
        return 2 * x

    cached = numba.njit(cache=True)(double)  # (caching set up, nothing compiled: never called)
    uncached = numba.njit(double)
    namespace = {"cached": cached, "uncached": uncached, "other": double}
    assert type(cached._cache) is FunctionCache and type(uncached._cache) is NullCache
    assert numba_cache._load_without_refresh(namespace) is True
    assert type(cached._cache).__name__ == "QuickLoadCache" and isinstance(cached._cache, FunctionCache)
    assert type(uncached._cache) is NullCache
