"""Kernel functions: what is computed, block by block, into a caller's buffer.

Every kernel implements :meth:`Kernel.compute` ``(X_chunk, prepared_Y, out)``
(Falkon's pattern: the kernel says *what*, :mod:`.blocks` says *how* it is
chunked under the working-memory budget) and, for the shift-invariant ones,
:meth:`ShiftInvariantKernel.sample_frequencies` from the kernel's spectral
measure (Bochner), used by random Fourier features.

Parametrisation (one everywhere in kernelsketch)
------------------------------------------------
==========  ======================================  ===============================
kernel      k(x, y)                                 spectral measure of w (per dim)
==========  ======================================  ===============================
gaussian    exp(-||x - y||_2^2 / h^2)               N(0, 2 / h^2)
laplacian   exp(-||x - y||_1 / h)                   Cauchy(0, 1 / h)
cauchy      prod_j 1 / (1 + (x_j - y_j)^2 / h^2)    Laplace(0, 1 / h)
polynomial  (gamma <x, y> + coef0)^degree           --
sigmoid     tanh(gamma <x, y> + coef0)              -- (not positive semi-definite)
cosine      <x, y> / (||x|| ||y||)                  --
linear      <x, y>                                  --
==========  ======================================  ===============================

A Python callable ``f(X, Y) -> K(X, Y)`` is a kernel too (:class:`CallableKernel`),
for the estimators that only evaluate kernel blocks (landmark maps, KernelPCA).

Conversions for the Gaussian bandwidth ``h``:

* scikit-learn ``rbf_kernel(gamma=g)``, ``exp(-g ||x-y||^2)``: ``g = 1 / h^2``.
* Streaming KPCA paper (Ghashami et al.), ``exp(-||x-y||^2 / 2)`` (with a
  scale sigma: ``exp(-||x-y||^2 / (2 sigma^2))``): ``h = sqrt(2) * sigma``.
* Nystrom eigengap paper (Mahdavi et al.), ``exp(-lambda ||x-y||^2 / dbar^2)``:
  ``h = dbar / sqrt(lambda)``.
* Kernel JL paper (Kpotufe & Sriperumbudur): ``exp(-||x-y||^2 / h^2)`` as is.

Every estimator also takes ``gamma`` the way scikit-learn does; for the
shift-invariant kernels it sets the bandwidth (:meth:`ShiftInvariantKernel.bandwidth_from_gamma`):
gaussian ``h = 1 / sqrt(gamma)``, laplacian ``h = 1 / gamma`` (scikit-learn's
``exp(-gamma ||x - y||_1)``), cauchy ``h = 1 / sqrt(gamma)``.

Accuracy of the Gaussian block
------------------------------
The exponent ``-(||x||^2 + ||y||^2 - 2 x.y) / h^2`` comes out of one GEMM on
augmented matrices.  Its rounding error is about ``eps * (||x||^2 + ||y||^2)
/ h^2`` (absolute) -- catastrophic *relative* cancellation for near points,
but the kernel value is then close to 1 and its absolute error is that same
small number.  To keep the norms small, both sides are centred on the mean of
``Y`` (dense input) before the product, and the squared norms are computed
in float64.  Each block then checks the bound ``eps * (max ||x_c||^2 + max
||y_c||^2) / h^2`` and takes the cheapest route that keeps it small:

* the GEMM in the output dtype when the bound is <= 2e-6 (float32) or
  <= 1e-9 (float64) -- the normal case, data spread comparable to ``h``;
* float32 data spread too wide for that: the same GEMM in float64;
* a bandwidth tiny against the spread (bound > 1e-9 even in float64):
  squared distances from explicit differences (``cdist``), exact to rounding.

So every kernel value is accurate to ~2e-6 absolute in float32 and ~1e-9
(typically 1e-15) in float64, whatever the bandwidth (tested from 1e-8 to
1e8 times the data scale).  The GEMM routes run through
:func:`~kernelsketch.kernels.tiled_gemm.gemm_map`: GEMM and ``exp`` tile by
tile in cache, on every core -- about twice as fast as one GEMM followed by
one ``np.exp`` over its result.  Exponents are not clipped at 0 (a full extra pass
over the block); ``K(X, X)`` has an exact unit diagonal.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from ..utils.threads import exp_inplace
from .evaluation import evaluate
from .tiled_gemm import gemm_map


def _exp_tile(T):
    np.exp(T, out=T)


def _check_positive(name, value):
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a positive number, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return value


def _check_bandwidth(value):
    """A positive bandwidth whose ``1 / h^2`` is a finite, nonzero float64 (else NaN or empty outputs follow)."""
    h = _check_positive("bandwidth", value)
    with np.errstate(over="ignore", under="ignore"):
        inv_h2 = 1.0 / (h * h) if h * h > 0 else np.inf
    if not (np.isfinite(inv_h2) and inv_h2 > 0):
        raise ValueError(
            f"bandwidth={h!r} is out of range: 1/h^2 = {inv_h2!r} is not a finite nonzero float64 "
            "(use a bandwidth between about 1e-150 and 1e150, or rescale the data)"
        )
    return h


class Kernel:
    """Base class. Subclasses define ``compute`` and optionally ``prepare``."""

    name = "kernel"
    #: True when K(x, x) is 1 for every x and the block should get an exact unit diagonal
    unit_diagonal = False
    #: True when sparse (CSR) input is handled natively
    accepts_sparse = True
    #: True when ``compute`` may run concurrently on disjoint row ranges of X
    #: and ``out`` (it only writes its own ``out``); blocks then split the rows
    #: over threads (:func:`kernelsketch.kernels.blocks.compute_block`)
    parallel_compute = True
    #: True when the kernel has a GEMM form (:meth:`gemm_operands` returns operands
    #: for dense blocks): its ``compute`` then runs the fused tiled route, threaded
    #: inside, and callers project through :func:`~kernelsketch.kernels.tiled_gemm.gemm_map`
    gemm_form = False

    def get_params(self, deep=True) -> dict:
        # deep is accepted so sklearn.base.clone treats a Kernel like an estimator parameter
        return {}

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    def __eq__(self, other):
        return type(self) is type(other) and self.get_params() == other.get_params()

    def __hash__(self):
        return hash((type(self).__name__, tuple(sorted(self.get_params().items()))))

    # -- block protocol -------------------------------------------------
    def prepare(self, Y, dtype):
        """Precompute what every block against ``Y`` needs (done once)."""
        return Y

    def temp_bytes_per_row(self, n_features: int, n_cols: int, itemsize: int) -> int:
        """Scratch bytes one row of ``compute`` needs beyond the output row."""
        return n_features * itemsize

    def compute(self, X, prepared, out):  # pragma: no cover - abstract
        raise NotImplementedError

    #: in-place function of a tile of ``A @ B`` for kernels of GEMM form
    elementwise: Callable[[np.ndarray], object] | None = None

    def _compute_by_gemm(self, X, prepared, out) -> bool:
        """Fill ``out`` through the fused tiled route when this block has a GEMM form; False otherwise."""
        ops = self.gemm_operands(X, prepared, out.dtype)
        if ops is None:
            return False
        A, B = ops
        gemm_map(A, B, self.elementwise, out=out)
        return True

    def gemm_operands(self, X, prepared, out_dtype):
        """``(A, B)`` with ``K(X, Y) = elementwise(A @ B)``, or None (no GEMM form for this block).

        Kernels of that form get their blocks -- and feature maps
        ``K(X, Y) @ P`` -- from :func:`~kernelsketch.kernels.tiled_gemm.gemm_map`,
        which never holds more than a cache-sized tile of the block.
        """
        return None

    def diag(self, X):
        """``k(x_i, x_i)`` for every row of X."""
        raise NotImplementedError

    def __call__(self, X, Y=None):
        """The block ``K(X, Y)`` (``Y = X`` when omitted), as :func:`~kernelsketch.kernels.pairwise_kernel`."""
        return evaluate(self, X, Y)


class ShiftInvariantKernel(Kernel):
    """``k(x, y) = kappa(x - y)`` with ``kappa(0) = 1`` and a bandwidth ``h``."""

    unit_diagonal = True

    def __init__(self, bandwidth=1.0):
        self.bandwidth = _check_bandwidth(bandwidth)

    def get_params(self, deep=True):
        return {"bandwidth": self.bandwidth}

    def diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype if X.dtype == np.float32 else np.float64)

    def sample_frequencies(self, rng: np.random.Generator, n_features: int, n_components: int):
        """Draw ``W`` of shape (n_features, n_components) from the spectral measure."""
        raise NotImplementedError

    @staticmethod
    def bandwidth_from_gamma(gamma):
        """The bandwidth ``h`` with ``exp(-||x-y||^2 / h^2) = exp(-gamma ||x-y||^2)`` (scikit-learn's rbf)."""
        return 1.0 / np.sqrt(_check_positive("gamma", gamma))


class GaussianKernel(ShiftInvariantKernel):
    r"""Gaussian kernel :math:`k(x, y) = \exp(-\|x - y\|_2^2 / h^2)`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.kernels import GaussianKernel
    >>> K = GaussianKernel(bandwidth=2.0)(np.array([[0.0, 0.0], [2.0, 0.0]]))
    >>> np.round(K, 4)
    array([[1.    , 0.3679],
           [0.3679, 1.    ]])
    """

    name = "gaussian"

    #: worst-case absolute error of a kernel value tolerated from the GEMM
    #: route, per output dtype; beyond it a more accurate route is taken.
    _GEMM_TOL: ClassVar[dict] = {np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-9}

    def prepare(self, Y, dtype):
        inv_h2 = 1.0 / self.bandwidth**2
        prepared = {"inv_h2": inv_h2, "Y": Y, "Y_dense64": None, "B64": None}
        if sp.issparse(Y):
            # Sparse data cannot be centred without densifying it: the product
            # runs in float64 so the cancellation stays at float64 level.
            Y64 = Y.astype(np.float64)
            yn = np.asarray(Y64.multiply(Y64).sum(axis=1)).ravel()
            top = (Y64.T * (2.0 * inv_h2)).tocsc()
            prepared.update(sparse=True, top=top, ytail=-inv_h2 * yn, ymax=float(yn.max(initial=0.0)))
            return prepared
        # Augmented right factor B (d + 2, m) so that [x_c, -|x_c|^2/h^2, 1] @ B
        # is the exponent (2 x_c.y_c - |x_c|^2 - |y_c|^2) / h^2 in one GEMM;
        # centring on mean(Y) keeps the norms (hence the rounding error) small.
        Y64 = np.asarray(Y, dtype=np.float64)
        # the centre is representable in the GEMM dtype, so X can be centred
        # in that dtype with exactly the same shift as Y
        center = Y64.mean(axis=0).astype(dtype).astype(np.float64)
        Yc = Y64 - center
        yn = np.einsum("ij,ij->i", Yc, Yc)
        d, m = Y.shape[1], Y.shape[0]
        B64 = np.empty((d + 2, m), dtype=np.float64)
        B64[:d] = (2.0 * inv_h2) * Yc.T
        B64[d] = 1.0
        B64[d + 1] = -inv_h2 * yn
        B = B64 if np.dtype(dtype) == np.float64 else B64.astype(dtype)
        # the float64 factor is kept from float64 values (not from B rounded to
        # float32) for the blocks of float32 data too spread for a float32 GEMM
        prepared.update(sparse=False, B=B, B64=B64, center=center, ymax=float(yn.max(initial=0.0)))
        return prepared

    def temp_bytes_per_row(self, n_features, n_cols, itemsize):
        # dense: the augmented chunk (d + 2 values, float64 while centring);
        # sparse / fallback routes: a float64 row before the cast into `out`.
        return 8 * (n_features + 2) + 8 * n_cols

    @staticmethod
    def _gemm_error_bound(dtype, xmax, ymax, inv_h2):
        # |fl(exponent) - exponent| <~ eps * (|x_c|^2 + |y_c|^2) / h^2, and a
        # kernel value k = exp(-z) moves by at most that much (k <= 1).
        return float(np.finfo(dtype).eps) * (xmax + ymax) * inv_h2

    @staticmethod
    def _augmented_rows(X, center, dtype):
        """``A = [x - c, ., 1]`` in the GEMM dtype (centred in place) and ``|x - c|^2`` in float64."""
        d = X.shape[1]
        A = np.empty((X.shape[0], d + 2), dtype=dtype)
        Xc = A[:, :d]
        # c is exactly representable in dtype (see prepare), so the shift is the same as Y's
        np.subtract(X, center.astype(dtype), out=Xc, dtype=dtype)
        xn = np.einsum("ij,ij->i", Xc, Xc, dtype=np.float64)
        return A, xn

    def _exact_block(self, X, prepared, out):
        # Accurate route for bandwidths tiny relative to the data's spread:
        # squared distances from explicit differences (cdist), no cancellation.
        if prepared["Y_dense64"] is None:
            Y = prepared["Y"]
            prepared["Y_dense64"] = np.asarray(Y.toarray() if sp.issparse(Y) else Y, dtype=np.float64)
        Xd = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        D = cdist(Xd, prepared["Y_dense64"], metric="sqeuclidean")
        # D >= 0 and 0 < 1/h^2 < inf: an overflowing product is -inf, whose exp is the exact 0
        with np.errstate(over="ignore"):
            D *= -prepared["inv_h2"]
        exp_inplace(D)
        out[...] = D

    gemm_form = True

    def gemm_operands(self, X, prepared, out_dtype):
        """``(A, B)`` with ``K(X, Y) = exp(A @ B)`` to within ``_GEMM_TOL``, or None.

        None when the block needs another route: sparse or mixed-dtype input,
        or a bandwidth so small against the spread that even a float64 GEMM
        would lose more than ``_GEMM_TOL`` (explicit differences then).
        """
        if sp.issparse(X) or prepared["sparse"]:
            return None
        inv_h2 = prepared["inv_h2"]
        B = prepared["B"]
        A, xn = self._augmented_rows(X, prepared["center"], B.dtype)
        xmax = float(xn.max(initial=0.0))
        if self._gemm_error_bound(B.dtype, xmax, prepared["ymax"], inv_h2) > self._GEMM_TOL[np.dtype(out_dtype)]:
            if (
                self._gemm_error_bound(np.float64, xmax, prepared["ymax"], inv_h2)
                > self._GEMM_TOL[np.dtype(np.float64)]
            ):
                return None
            B = prepared["B64"]  # float32 data too spread for a float32 GEMM
            if A.dtype != np.float64:
                A, xn = self._augmented_rows(X, prepared["center"], np.float64)
        d = X.shape[1]
        A[:, d] = -inv_h2 * xn
        A[:, d + 1] = 1.0
        return A, B

    #: applied in place to a tile of ``A @ B`` (see :meth:`gemm_operands`)
    elementwise = staticmethod(_exp_tile)

    def compute(self, X, prepared, out):
        if self._compute_by_gemm(X, prepared, out):  # GEMM + exp tile by tile in cache, on every core
            return
        if not sp.issparse(X) and not prepared["sparse"]:
            return self._exact_block(X, prepared, out)
        # Sparse input: float64 product, norms added by broadcasting.
        inv_h2 = prepared["inv_h2"]
        tol64 = self._GEMM_TOL[np.dtype(np.float64)]
        X64 = X.astype(np.float64)
        xn = np.asarray(X64.multiply(X64).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum("ij,ij->i", X64, X64)
        if prepared["sparse"]:
            top, ytail, ymax = prepared["top"], prepared["ytail"], prepared["ymax"]
        else:
            B, c = prepared["B"], prepared["center"]
            d = X.shape[1]
            top = np.asarray(B[:d], dtype=np.float64)
            # |x - c|^2 = |x|^2 - 2 x.c + |c|^2 and (x - c).B = x.B - c.B
            xn = xn - 2.0 * np.asarray(X64 @ c).ravel() + c @ c
            ytail = np.asarray(B[d + 1], dtype=np.float64) - c @ top
            ymax = prepared["ymax"]
        if self._gemm_error_bound(np.float64, float(xn.max(initial=0.0)), ymax, inv_h2) > tol64:
            return self._exact_block(X, prepared, out)
        prod = X64 @ top
        prod = prod.toarray() if sp.issparse(prod) else np.asarray(prod)
        prod -= (inv_h2 * xn)[:, None]
        prod += ytail[None, :]
        out[...] = prod
        # No clip at 0 before the exp: it would cost a full extra pass (~45 %
        # of the block time).  The route chosen above keeps the exponent's
        # error below _GEMM_TOL, so no value exceeds 1 by more than that.
        exp_inplace(out)

    def sample_frequencies(self, rng, n_features, n_components):
        # E[cos(w.(x-y))] = exp(-s^2 |x-y|^2 / 2) for w ~ N(0, s^2 I); s^2 = 2/h^2.
        return rng.standard_normal((n_features, n_components)) * (np.sqrt(2.0) / self.bandwidth)


class LaplacianKernel(ShiftInvariantKernel):
    r"""Laplacian kernel :math:`k(x, y) = \exp(-\|x - y\|_1 / h)` (L1 distance).

    Its spectral measure is a product of Cauchy(0, 1/h) laws (Rahimi & Recht, 2007).
    Sparse input is densified chunk by chunk.
    """

    name = "laplacian"
    accepts_sparse = False

    @staticmethod
    def bandwidth_from_gamma(gamma):
        """``h = 1 / gamma``: scikit-learn's ``laplacian_kernel`` is ``exp(-gamma ||x - y||_1)``."""
        return 1.0 / _check_positive("gamma", gamma)

    def prepare(self, Y, dtype):
        return np.asarray(Y.toarray() if sp.issparse(Y) else Y, dtype=np.float64)

    def temp_bytes_per_row(self, n_features, n_cols, itemsize):
        return 8 * (n_cols + n_features)

    def compute(self, X, prepared, out):
        Xd = X.toarray() if sp.issparse(X) else X
        D = cdist(np.asarray(Xd, dtype=np.float64), prepared, metric="cityblock")
        D *= -1.0 / self.bandwidth
        np.exp(D, out=D)  # rows are already split over threads (blocks.compute_block)
        out[...] = D

    def sample_frequencies(self, rng, n_features, n_components):
        return rng.standard_cauchy((n_features, n_components)) / self.bandwidth


class CauchyKernel(ShiftInvariantKernel):
    r"""Cauchy kernel :math:`k(x, y) = \prod_j 1 / (1 + (x_j - y_j)^2 / h^2)`.

    Its spectral measure is a product of Laplace(0, 1/h) laws (Rahimi & Recht, 2007).
    Cost O(n m d) elementwise work (no GEMM form exists).
    """

    name = "cauchy"
    accepts_sparse = False

    def prepare(self, Y, dtype):
        Yd = Y.toarray() if sp.issparse(Y) else Y
        return np.ascontiguousarray(np.asarray(Yd, dtype=np.float64).T / self.bandwidth)

    def temp_bytes_per_row(self, n_features, n_cols, itemsize):
        return 8 * (2 * n_cols + n_features)

    def compute(self, X, prepared, out):
        Xd = X.toarray() if sp.issparse(X) else X
        Xs = np.asarray(Xd, dtype=np.float64) / self.bandwidth
        acc = np.ones(out.shape, dtype=np.float64)
        tmp = np.empty_like(acc)
        for j in range(Xs.shape[1]):  # loop over features, never over rows
            np.subtract(Xs[:, j, None], prepared[j][None, :], out=tmp)
            np.square(tmp, out=tmp)
            tmp += 1.0
            acc /= tmp
        out[...] = acc

    def sample_frequencies(self, rng, n_features, n_components):
        return rng.laplace(0.0, 1.0 / self.bandwidth, (n_features, n_components))


def _check_coef0(coef0):
    if isinstance(coef0, bool) or not isinstance(coef0, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"coef0 must be a real number, got {coef0!r}")
    return float(coef0)


class _ScaledInnerProductKernel(Kernel):
    """``k(x, y) = f(gamma <x, y> + coef0)``: one GEMM on ``gamma``-scaled ``Y^T``, then ``f`` in place.

    Subclasses define ``_apply(T)`` (``f`` in place on ``gamma <x, y>``, before ``coef0``
    is added by :meth:`_finish`) and ``get_params``.  ``gamma=None`` means
    ``1 / n_features`` (scikit-learn's default).
    """

    def _gamma(self, n_features):
        return self.gamma if self.gamma is not None else 1.0 / n_features

    def prepare(self, Y, dtype):
        YT = Y.T * self._gamma(Y.shape[1])
        return YT.tocsc() if sp.issparse(Y) else np.asarray(YT, dtype=dtype)

    def _finish(self, T):
        T += self.coef0
        self._apply(T)

    @property
    def elementwise(self):
        return self._finish

    gemm_form = True

    def gemm_operands(self, X, prepared, out_dtype):
        if sp.issparse(X) or sp.issparse(prepared):
            return None
        return np.asarray(X, dtype=prepared.dtype), prepared

    def compute(self, X, prepared, out):
        if self._compute_by_gemm(X, prepared, out):
            return
        prod = X @ prepared
        out[...] = prod.toarray() if sp.issparse(prod) else prod
        self._finish(out)

    def diag(self, X):
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
        T = np.asarray(self._gamma(X.shape[1]) * sq + self.coef0, dtype=np.float64)
        self._apply(T)
        return T


class PolynomialKernel(_ScaledInnerProductKernel):
    r"""Polynomial kernel :math:`k(x, y) = (\gamma \langle x, y\rangle + c_0)^p`.

    ``gamma=None`` means ``1 / n_features`` (scikit-learn's default).
    """

    name = "polynomial"

    def __init__(self, degree=3, gamma=None, coef0=1.0):
        if isinstance(degree, bool) or not isinstance(degree, (numbers.Integral, np.integer)) or degree < 1:
            raise ValueError(f"degree must be an integer >= 1, got {degree!r}")
        self.degree = int(degree)
        self.gamma = None if gamma is None else _check_positive("gamma", gamma)
        self.coef0 = _check_coef0(coef0)

    def get_params(self, deep=True):
        return {"degree": self.degree, "gamma": self.gamma, "coef0": self.coef0}

    def _apply(self, T):
        if self.degree != 1:
            np.power(T, self.degree, out=T)


class LinearKernel(Kernel):
    r"""Linear kernel :math:`k(x, y) = \langle x, y \rangle`."""

    name = "linear"

    def prepare(self, Y, dtype):
        return Y.T.tocsc() if sp.issparse(Y) else np.asarray(Y, dtype=dtype).T

    gemm_form = True

    def gemm_operands(self, X, prepared, out_dtype):
        if sp.issparse(X) or sp.issparse(prepared):
            return None
        return np.asarray(X, dtype=prepared.dtype), prepared

    def compute(self, X, prepared, out):
        if self._compute_by_gemm(X, prepared, out):
            return
        prod = X @ prepared
        out[...] = prod.toarray() if sp.issparse(prod) else prod

    def diag(self, X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum("ij,ij->i", X, X)


class SigmoidKernel(_ScaledInnerProductKernel):
    r"""Sigmoid kernel :math:`k(x, y) = \tanh(\gamma \langle x, y\rangle + c_0)`, scikit-learn's.

    ``gamma=None`` means ``1 / n_features``.  It is not positive semi-definite:
    eigenvalue-based estimators keep only its positive eigenvalues.
    """

    name = "sigmoid"

    def __init__(self, gamma=None, coef0=1.0):
        self.gamma = None if gamma is None else _check_positive("gamma", gamma)
        self.coef0 = _check_coef0(coef0)

    def get_params(self, deep=True):
        return {"gamma": self.gamma, "coef0": self.coef0}

    def _apply(self, T):
        np.tanh(T, out=T)


def _row_norms(X):
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
    norms = np.sqrt(np.asarray(sq, dtype=np.float64))
    norms[norms == 0] = 1.0  # scikit-learn's cosine_similarity: a zero row stays zero
    return norms


class CosineKernel(Kernel):
    r"""Cosine kernel :math:`k(x, y) = \langle x, y\rangle / (\|x\| \|y\|)` (scikit-learn's ``cosine_similarity``).

    A zero row has similarity 0 with everything (including itself), as in scikit-learn.
    """

    name = "cosine"

    def prepare(self, Y, dtype):
        inv = 1.0 / _row_norms(Y)
        if sp.issparse(Y):
            return sp.csr_matrix(Y.multiply(inv[:, None])).T.tocsc()
        return np.asarray(np.asarray(Y, dtype=np.float64) * inv[:, None], dtype=dtype).T

    def _scaled(self, X, dtype):
        inv = 1.0 / _row_norms(X)
        if sp.issparse(X):
            return sp.csr_matrix(X.multiply(inv[:, None]))
        return np.asarray(np.asarray(X, dtype=np.float64) * inv[:, None], dtype=dtype)

    gemm_form = True

    def gemm_operands(self, X, prepared, out_dtype):
        if sp.issparse(X) or sp.issparse(prepared):
            return None
        return self._scaled(X, prepared.dtype), prepared

    def compute(self, X, prepared, out):
        if self._compute_by_gemm(X, prepared, out):
            return
        prod = self._scaled(X, out.dtype) @ prepared
        out[...] = prod.toarray() if sp.issparse(prod) else prod

    def diag(self, X):
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
        return (np.asarray(sq) > 0).astype(np.float64)


class CallableKernel(Kernel):
    """A Python function ``f(X, Y, **kernel_params) -> K`` of shape ``(len(X), len(Y))`` as a kernel.

    Blocks are computed by calling ``f`` on row chunks of ``X`` against all of
    ``Y`` (the landmarks), so ``f`` must be a proper kernel of the rows it gets.
    Its output is checked: the right shape, finite.  It runs on the calling
    thread only (a Python function may not be thread-safe).
    """

    name = "callable"
    parallel_compute = False

    def __init__(self, function, **kernel_params):
        if not callable(function):
            raise TypeError(f"CallableKernel needs a callable, got {type(function).__name__}")
        self.function = function
        self.kernel_params = kernel_params

    def get_params(self, deep=True):
        return {"function": self.function, **self.kernel_params}

    def __hash__(self):
        return hash((type(self).__name__, id(self.function)))

    def prepare(self, Y, dtype):
        return Y

    def temp_bytes_per_row(self, n_features, n_cols, itemsize):
        return (n_features + n_cols) * itemsize

    def _call(self, X, Y):
        K = self.function(X, Y, **self.kernel_params)
        K = K.toarray() if sp.issparse(K) else np.asarray(K)
        if K.shape != (X.shape[0], Y.shape[0]):
            raise ValueError(
                f"the kernel callable {getattr(self.function, '__name__', self.function)!r} "
                f"returned shape {K.shape} for inputs of {X.shape[0]} and {Y.shape[0]} rows; "
                f"expected ({X.shape[0]}, {Y.shape[0]})"
            )
        if K.dtype.kind not in "biuf":
            raise TypeError(f"the kernel callable returned dtype {K.dtype}; expected real numbers")
        if not np.all(np.isfinite(K)):
            raise ValueError("the kernel callable returned NaN or infinity")
        return K

    def compute(self, X, prepared, out):
        out[...] = self._call(X, prepared)

    def diag(self, X):
        return np.array([self._call(X[i : i + 1], X[i : i + 1])[0, 0] for i in range(X.shape[0])], dtype=np.float64)


KERNELS: dict[str, type[Kernel]] = {
    "gaussian": GaussianKernel,
    "rbf": GaussianKernel,
    "laplacian": LaplacianKernel,
    "cauchy": CauchyKernel,
    "polynomial": PolynomialKernel,
    "poly": PolynomialKernel,
    "linear": LinearKernel,
    "sigmoid": SigmoidKernel,
    "cosine": CosineKernel,
}
SHIFT_INVARIANT = ("gaussian", "laplacian", "cauchy")


def get_kernel(kernel="gaussian", *, bandwidth=None, degree=3, gamma=None, coef0=1.0) -> Kernel:
    """Return a :class:`Kernel` from a name and parameters (or pass one through).

    Parameters
    ----------
    kernel : str, Kernel or callable
        One of ``"gaussian"`` (alias ``"rbf"``), ``"laplacian"``, ``"cauchy"``,
        ``"polynomial"`` (alias ``"poly"``), ``"sigmoid"``, ``"cosine"``, ``"linear"``,
        a Kernel instance, or a function ``f(X, Y) -> K(X, Y)`` (a :class:`CallableKernel`).
    bandwidth : float
        ``h`` of the shift-invariant kernels (required for them; must be a
        number here -- resolve heuristics first with :func:`resolve_bandwidth`).
    degree, gamma, coef0 :
        Polynomial (all three) and sigmoid (``gamma``, ``coef0``) kernel parameters.
    """
    if isinstance(kernel, Kernel):
        return kernel
    if callable(kernel):
        return CallableKernel(kernel)
    if not isinstance(kernel, str):
        raise TypeError(f"kernel must be a name or a kernelsketch Kernel, got {type(kernel).__name__}")
    key = kernel.lower()
    if key not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; choose one of {sorted(set(KERNELS))}")
    cls = KERNELS[key]
    if issubclass(cls, ShiftInvariantKernel):
        if bandwidth is None:
            raise ValueError(f"the {key} kernel needs a bandwidth")
        return cls(bandwidth=bandwidth)
    if cls is PolynomialKernel:
        return PolynomialKernel(degree=degree, gamma=gamma, coef0=coef0)
    if cls is SigmoidKernel:
        return SigmoidKernel(gamma=gamma, coef0=coef0)
    return cls()
