"""The Gram matrix as a :class:`scipy.sparse.linalg.LinearOperator`, never formed.

``GramOperator(X, kernel)`` multiplies ``K`` (or the doubly centred
``H K H``, ``H = I - 11^T/n``) by blocks of rows, so eigensolvers
(``eigsh``, ``lobpcg``) and error metrics run at large n in the
working-memory budget.  Each product recomputes the kernel blocks: O(n^2 d)
flops, O(chunk * n) memory.  A PyTorch / CuPy / ... ``X`` (under
``array_api_dispatch``) keeps its blocks on its device: the products take and
return host vectors, as the eigensolvers want.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
from scipy.sparse.linalg import LinearOperator

from .._config import config_context
from ..utils.array_api import array_namespace, to_numpy
from ..utils.validation import check_input, check_input_xp
from .blocks import get_kernel, kernel_blocks


class GramOperator(LinearOperator):
    """``K = [k(x_i, x_j)]`` (optionally centred) as a symmetric LinearOperator.

    Parameters
    ----------
    X : array-like or CSR of shape (n, d)
    kernel : str or Kernel
    centered : bool
        Apply ``H K H`` with ``H = I - 11^T / n`` (kernel PCA's centring).
    working_memory : float, optional
    **kernel_params : passed to :func:`get_kernel`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.kernels import GramOperator, pairwise_kernel
    >>> X = np.random.default_rng(0).normal(size=(50, 2))
    >>> G = GramOperator(X, "gaussian", bandwidth=1.0)
    >>> v = np.ones(50)
    >>> bool(np.allclose(G @ v, pairwise_kernel(X, kernel="gaussian", bandwidth=1.0) @ v))
    True
    """

    def __init__(self, X, kernel="gaussian", *, centered=False, working_memory=None, **kernel_params):
        self._xp = None
        if (ns := array_namespace(X)) is not None:  # the blocks on X's device, in float64
            self._xp = ns[0]
            self.X = ns[0].astype(check_input_xp(X, ns[0]), ns[0].float64)
        else:
            self.X = check_input(X, accept_sparse=("csr",), name="X")
        self.kernel = get_kernel(kernel, **kernel_params)
        self.centered = bool(centered)
        self.working_memory = working_memory
        n = self.X.shape[0]
        dtype = np.float32 if self._xp is None and self.X.dtype == np.float32 else np.float64
        super().__init__(dtype=dtype, shape=(n, n))
        self._row_means = None
        self._total_mean = None
        if self.centered:
            self._row_means = self._raw_matmat(np.ones((n, 1), dtype=np.float64)).ravel() / n
            self._total_mean = float(self._row_means.mean())

    def _raw_matmat(self, V):
        if self._xp is not None:
            return self._device_matmat(V)
        n = self.shape[0]
        out = np.empty((n, V.shape[1]), dtype=np.result_type(V.dtype, np.float64))
        for rows, K in kernel_blocks(self.X, None, self.kernel, working_memory=self.working_memory, validate=False):
            np.matmul(K, V.astype(K.dtype, copy=False), out=out[rows]) if K.dtype == out.dtype else out.__setitem__(
                rows, K @ V
            )
        return out

    def _device_matmat(self, V):
        """``K V`` for host ``V``: the Gram's row blocks and their products on X's device."""
        from .array_api import gram_row_blocks_xp

        xp = self._xp
        Vd = xp.asarray(np.ascontiguousarray(V, dtype=np.float64), device=self.X.device)
        budget = nullcontext() if self.working_memory is None else config_context(working_memory=self.working_memory)
        with budget:
            parts = [K @ Vd for _, K in gram_row_blocks_xp(self.kernel, self.X, xp, 8 * V.shape[1])]
        return to_numpy(parts[0] if len(parts) == 1 else xp.concat(parts, axis=0), xp)

    def _matmat(self, V):
        V = np.asarray(V)
        if V.ndim == 1:
            V = V[:, None]
        if not self.centered:
            return self._raw_matmat(V)
        n = self.shape[0]
        # H K H V = K V - 1 (kbar^T V) - kbar (1^T V) + mean(K) 1 (1^T V), kbar = K 1 / n
        colsum = V.sum(axis=0, keepdims=True) / n
        Vc = V - colsum  # K H V
        KV = self._raw_matmat(Vc)
        KV -= KV.mean(axis=0, keepdims=True)
        return KV

    def _matvec(self, v):
        return self._matmat(np.asarray(v).reshape(-1, 1)).ravel()

    def _adjoint(self):
        return self

    def diagonal(self):
        """The diagonal of K (or of H K H) in O(n d) (plus one pass if centred)."""
        X = self.X if self._xp is None else to_numpy(self.X, self._xp)
        d = np.asarray(self.kernel.diag(X), dtype=np.float64)
        if self.centered:
            # (HKH)_ii = K_ii - 2 kbar_i + mean(K)
            d = d - 2.0 * self._row_means + self._total_mean
        return d

    def trace(self):
        """``tr(K)`` (or ``tr(H K H)``)."""
        return float(self.diagonal().sum())
