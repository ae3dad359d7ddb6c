"""A seeded uniform sample of ``m`` rows from a stream of row blocks, in one pass.

Every row gets a uniform random key; the sample is the ``m`` rows with the
smallest keys (a bottom-k sketch), which is a uniform sample without
replacement.  Keys are drawn sequentially from one generator, and numpy's
``Generator.random(a)`` followed by ``random(b)`` gives the same numbers as
``random(a + b)``, so the sample does not depend on the block sizes.
Selected rows are returned in file order; with ``m >= n`` they are all rows.
Memory: ``m + block`` rows.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["RowReservoir"]


class RowReservoir:
    """Bottom-k sample of rows of ``X`` (dense or CSR) and of optional labels.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> r = RowReservoir(3, seed=0)
    >>> for s in (slice(0, 4), slice(4, 10)):
    ...     r.add(X[s])
    >>> Xs, _, idx = r.result()
    >>> Xs.shape, bool(np.all(np.diff(idx) > 0)), bool(np.all(Xs[:, 0] == 2 * idx))
    ((3, 2), True, True)
    """

    def __init__(self, m, seed=0):
        self.m = int(m)
        self._rng = np.random.default_rng(seed)
        self._X = None
        self._y = None
        self._keys = np.empty(0)
        self._idx = np.empty(0, dtype=np.int64)
        self.n_seen = 0

    def add(self, X, y=None):
        n = X.shape[0]
        keys = self._rng.random(n)
        idx = np.arange(self.n_seen, self.n_seen + n, dtype=np.int64)
        self.n_seen += n
        if self._X is None:
            allX, ally = X, y
        else:
            allX = sp.vstack([self._X, X], format="csr") if sp.issparse(X) else np.concatenate([self._X, X])
            ally = None if y is None or self._y is None else np.concatenate([self._y, np.asarray(y)])
        allk = np.concatenate([self._keys, keys])
        alli = np.concatenate([self._idx, idx])
        if allk.size > self.m:
            keep = np.sort(np.argpartition(allk, self.m - 1)[: self.m])  # sorted: file order
            allX = allX[keep]
            ally = None if ally is None else np.asarray(ally)[keep]
            allk, alli = allk[keep], alli[keep]
        elif not sp.issparse(allX):
            allX = np.array(allX, copy=True) if self._X is None else allX  # never keep a caller's buffer
        self._X, self._y, self._keys, self._idx = allX, ally, allk, alli

    def result(self):
        """``(X_sample, y_sample or None, row_indices)`` in file order."""
        if self._X is None:
            raise ValueError("no rows were seen")
        return self._X, self._y, self._idx
