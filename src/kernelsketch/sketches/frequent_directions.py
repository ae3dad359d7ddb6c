"""Frequent Directions: a deterministic, mergeable covariance sketch.

One estimator, :class:`FrequentDirections`, with a block-vectorised update
(rows are copied into a buffer in slices; a shrink runs only when the buffer
is full) and a shrink step that diagonalises the small Gram matrix
``B @ B.T`` instead of taking an SVD of ``B``.
"""

from __future__ import annotations

import numbers
from typing import Any, ClassVar, Self

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._typing import ArrayLike, FloatArray
from ..utils.array_api import array_namespace, fitted_namespace, host_array, like, namespace_of, to_numpy
from ..utils.chunking import gen_row_slices, get_chunk_n_rows
from ..utils.dispatch import maybe_dask_transform
from ..utils.eigen import SIGN_TIE_RTOL, canonical_eigenvectors, sign_anchor
from ..utils.threads import single_threaded_blas
from ..utils.validation import cast_finite, check_input, check_input_xp, check_n_features, require_finite

__all__ = ["FrequentDirections"]

_SHRINK_MODES = ("l", "half")
#: ``buffer_size="auto"``: rows that fit in this many bytes (8 per value), between the papers' buffer and AUTO_MAX_ROWS
AUTO_BUFFER_BYTES = 32 * 2**20
AUTO_MAX_ROWS = 4096
#: beyond this many features "auto" is the papers' buffer: a large buffer's shrink diagonalises the
#: d x d covariance, which costs more than the papers' many small shrinks on a CPU
#: (benchmarks/results/design-measurements.md)
AUTO_MAX_FEATURES = 512

# Above this ratio lambda_1 / lambda_min_kept the Gram route loses more than
# ~1e-4 of relative accuracy on the smallest kept squared singular value
# (eigh of B B^T is accurate to eps * lambda_1 in absolute terms), so the
# shrink falls back to an SVD of B, accurate to eps * sigma_1 * sigma_i.
_GRAM_MAX_CONDITION = 1e12


def _squared_norm(block) -> float:
    """||block||_F^2 accumulated in float64 (block is C-contiguous)."""
    if (ns := namespace_of(block)) is not None:  # a device buffer: summed on the device
        xp = ns[0]
        b64 = xp.astype(block, xp.float64)
        return float(xp.sum(b64 * b64))
    flat = block.reshape(-1)
    if flat.dtype == np.float64:
        return float(np.dot(flat, flat))
    # float32 accumulation would drift over a long stream; a float64 copy of
    # at most one buffer's worth of rows is cheap next to the shrink.
    flat = flat.astype(np.float64)
    return float(np.dot(flat, flat))


def _shrink_rows(B, delta_index, exact):
    """Shrink the rows of ``B`` (r x d); return (new rows, delta).

    ``delta`` is the ``delta_index``-th largest squared singular value of
    ``B`` (1-based; 0 when ``exact``), raised to a rounding floor
    ``r * eps * sigma_1^2`` so that numerically-zero directions are dropped
    and accounted for.  The kept directions ``sigma_i^2 > delta`` become rows
    ``sqrt(sigma_i^2 - delta) v_i^T``; all others are zeroed.

    Every computed route preserves ``B^T B - B'^T B' >= 0`` and
    ``||B^T B - B'^T B'||_2 <= delta`` up to the eigensolver's backward error
    ``O(eps * sigma_1^2)``: with any orthonormal ``U``,
    ``B'^T B' = B^T U D^2 U^T B`` where ``0 <= D <= 1``.
    """
    r, d = B.shape
    B64 = B if B.dtype == np.float64 else B.astype(np.float64)
    use_covariance = d <= r
    # The smaller of B B^T (r x r) and B^T B (d x d): same nonzero spectrum.
    G = B64.T @ B64 if use_covariance else B64 @ B64.T
    lam, vec = _descending_eigh(G)
    delta, keep = _shrink_threshold(lam, delta_index, exact, r)
    if keep and lam[0] > _GRAM_MAX_CONDITION * lam[keep - 1]:
        return _shrink_rows_svd(B64, delta_index, exact)
    scale = np.sqrt(lam[:keep] - delta)
    if use_covariance:
        # Eigenvectors of B^T B are the right singular vectors themselves.
        return (vec[:, :keep] * scale).T, delta
    # v_i = B^T u_i / sigma_i, so row i = (sqrt(sigma_i^2 - delta) / sigma_i) u_i^T B.
    coef = (vec[:, :keep] * (scale / np.sqrt(lam[:keep]))).T
    return coef.astype(B.dtype, copy=False) @ B, delta


#: Grams at least this large are diagonalised on the device (a big buffer, or many features);
#: smaller ones on the host, where LAPACK's ``eigh`` beats a device launch and sync
DEVICE_EIGH_MIN = 384


def _shrink_rows_device(B, delta_index, exact, xp):
    """:func:`_shrink_rows` for a buffer on a device.

    The Gram (``O(c^2 d)``) and the new rows (``O(c k d)``) are computed on the device. A
    Gram smaller than :data:`DEVICE_EIGH_MIN` comes to the host for the same LAPACK ``eigh``
    as the host route (both routes then take the same decisions); a larger one is
    diagonalised on the device and only its eigenvalues come back. Eigenvector signs are
    fixed the same way on both sides.
    """
    r, d = B.shape
    device = B.device
    B64 = xp.astype(B, xp.float64)
    use_covariance = d <= r
    G = xp.matrix_transpose(B64) @ B64 if use_covariance else B64 @ xp.matrix_transpose(B64)
    if G.shape[0] >= DEVICE_EIGH_MIN:
        if not bool(xp.all(xp.isfinite(G))):
            require_finite(to_numpy(G, xp), "Frequent Directions buffer's Gram")
        lam_d, vec = xp.linalg.eigh(G)
        lam = np.clip(to_numpy(lam_d, xp)[::-1], 0.0, None)
        vec = _fixed_signs_xp(xp.flip(vec, axis=1), xp)
    else:
        lam, vec_h = _descending_eigh(to_numpy(G, xp))
        vec = xp.asarray(np.ascontiguousarray(vec_h), device=device)
    delta, keep = _shrink_threshold(lam, delta_index, exact, r)
    if keep and lam[0] > _GRAM_MAX_CONDITION * lam[keep - 1]:
        rows, delta = _shrink_rows_svd(to_numpy(B64, xp), delta_index, exact)
        return xp.astype(xp.asarray(rows, device=device), B.dtype), delta
    scale = xp.asarray(np.sqrt(lam[:keep] - delta), device=device)
    if use_covariance:
        return xp.astype(xp.matrix_transpose(vec[:, :keep] * scale[None, :]), B.dtype), delta
    inv = xp.asarray(1.0 / np.sqrt(lam[:keep]), device=device)
    coef = xp.matrix_transpose(vec[:, :keep] * (scale * inv)[None, :])
    return xp.astype(coef, B.dtype) @ B, delta


def _fixed_signs_xp(vec, xp):
    """:func:`_fixed_signs` on a device: each column's largest-|.| entry made positive."""
    if vec.shape[1] == 0:
        return vec
    A = xp.abs(vec)
    near = xp.astype(A >= xp.max(A, axis=0)[None, :] * (1.0 - SIGN_TIE_RTOL), vec.dtype)
    top = xp.argmax(near, axis=0)  # the first near-maximal entry, as sign_anchor
    picked = xp.take_along_axis(vec, top[None, :], axis=0)[0, :]
    signs = xp.where(picked < 0, -xp.ones_like(picked), xp.ones_like(picked))
    return vec * signs[None, :]


def _descending_eigh(G):
    """Eigenpairs of a shrink's Gram, descending, eigenvalues clipped at 0 (rounding can go below),
    eigenvectors with fixed signs: the one host ``eigh`` of both routes (LAPACK ``syevd``)."""
    require_finite(G, "Frequent Directions buffer's Gram")
    lam, vec = np.linalg.eigh(G)  # ascending
    return np.clip(lam[::-1], 0.0, None), _fixed_signs(vec[:, ::-1])


def _fixed_signs(vec):
    """Eigenvectors (columns) with their largest-|.| entry positive.

    An eigenvector's sign is the solver's choice and changes with rounding (a Gram computed
    by another BLAS, on a device); the sketch's rows inherit it. Fixing it makes the buffer
    a function of the rows alone, so host and device streams give the same sketch.
    """
    if vec.size == 0:
        return vec
    top = sign_anchor(vec)
    signs = np.sign(vec[top, np.arange(vec.shape[1])])
    signs[signs == 0] = 1.0
    return vec * signs


def _numpy_dtype_name(dtype, xp) -> str:
    """The NumPy name of a device array's floating dtype (``float32`` / ``float64``)."""
    return "float32" if dtype == xp.float32 else "float64"


def _shrink_rows_svd(B64, delta_index, exact):
    """The same shrink as :func:`_shrink_rows` through an SVD of ``B``."""
    r = B64.shape[0]
    require_finite(B64, "Frequent Directions buffer")
    _, s, vt = np.linalg.svd(B64, full_matrices=False)
    vt = _fixed_signs(vt.T).T
    lam = s * s
    delta, keep = _shrink_threshold(lam, delta_index, exact, r)
    return vt[:keep] * np.sqrt(lam[:keep] - delta)[:, None], delta


def _shrink_threshold(lam, delta_index, exact, r):
    """Shrinkage ``delta`` and number of kept directions for descending ``lam``."""
    eps = np.finfo(np.float64).eps
    floor = r * eps * lam[0] if lam.size else 0.0
    if exact or delta_index > lam.size:
        delta = 0.0
    else:
        delta = float(lam[delta_index - 1])
    delta = max(delta, floor)
    keep = int(np.count_nonzero(lam > delta))
    return delta, keep


class FrequentDirections(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Frequent Directions sketch of a row stream (Liberty 2013; Ghashami et al. 2016).

    Keeps an ``l x d`` matrix ``B`` whose covariance ``B^T B`` approximates
    ``A^T A`` for the stream of rows ``A`` seen so far, with a deterministic
    worst-case guarantee, in ``O(l d)`` memory.  Sketches of different streams
    can be merged.

    Parameters
    ----------
    sketch_size : int, default=20
        Number of rows ``l`` of the sketch (``l >= 2``).  When
        ``l >= n_features`` the sketch is exact: no shrinkage is ever applied
        and ``B^T B = A^T A`` up to rounding.
    shrink : {"l", "half"}, default="l"
        ``"l"``: standard Frequent Directions (Ghashami et al. 2016) with a
        ``2l``-row buffer, shrunk by its ``l``-th squared singular value.
        ``"half"``: Algorithm 1 of Ghashami, Perry & Phillips (Streaming KPCA),
        which is Liberty's original 2013 rule: an ``l``-row buffer shrunk by
        its ``(l // 2)``-th squared singular value.
    n_components : int, default=None
        Number of leading right singular vectors of ``B`` used by
        :meth:`transform`; ``None`` means ``min(l, n_features)``.  Must not
        exceed ``l``.
    buffer_size : "auto", "paper", int or None, default="auto"
        Rows of the buffer that a shrink empties.  ``"paper"`` (or None) is the
        papers' ``2l`` (``shrink="l"``) or ``l`` (``"half"``).  ``"auto"``: as
        many rows as fit in 32 MiB (``AUTO_BUFFER_BYTES``, 8 bytes a value), at
        most 4096 and at least the papers' buffer, for up to 512 features
        (``AUTO_MAX_FEATURES``); the papers' buffer beyond, where a large
        buffer's ``d x d`` diagonalisation costs more than many small shrinks on
        a CPU.  With few features it streams much faster than the papers'
        buffer, with a smaller error bound (fewer shrinks, so less shrinkage in
        total; ``benchmarks/results/design-measurements.md``).  On a GPU pass an int in the thousands whatever
        ``d`` (a shrink there costs a few synchronisations whatever its size).
        A larger buffer (at least
        that) shrinks once every ``buffer_size - l + 1`` rows or more, each
        shrink on a bigger buffer: far fewer shrinks, each one a few large
        products.  On a GPU, where a shrink costs a few synchronisations
        whatever its size, ``buffer_size`` in the thousands makes a stream
        run at GEMM speed (when ``n_features <= buffer_size`` the shrink
        diagonalises the ``d x d`` covariance).  The guarantee below is the
        same for any buffer size (Notes); the sketch itself differs.  Read when the
        sketch starts.

    Attributes
    ----------
    components_ : ndarray of shape (min(l, n_features), n_features)
        Right singular vectors of the sketch ``B`` (rows, by decreasing
        singular value).  Directions with a zero singular value complete an
        orthonormal basis.
    singular_values_ : ndarray of shape (min(l, n_features),)
        Singular values of ``B``, descending.
    error_bound_ : float
        Sum of all shrinkages ``Delta``: ``0 <= A^T A - B^T B`` and
        ``||A^T A - B^T B||_2 <= error_bound_``, for ``B = get_sketch()``.
    squared_frobenius_ : float
        ``||A||_F^2`` of all rows seen (and merged).
    n_samples_seen_ : int
        Number of rows seen (and merged).
    n_features_in_ : int
        Number of features ``d``.

    Notes
    -----
    **Update.**  Rows are copied into a buffer of ``c`` rows (``c = 2l`` for
    ``shrink="l"``, ``c = l`` for ``shrink="half"``) by slices, never one by
    one.  When the buffer is full it is shrunk: with ``sigma_i^2`` the squared
    singular values of the buffer ``B`` and ``v_i`` its right singular
    vectors, ``delta = sigma_j^2`` with ``j = l`` (``"l"``) or ``j = l // 2``
    (``"half"``), and ``B <- [sqrt(sigma_i^2 - delta) v_i^T]`` for the
    ``sigma_i^2 > delta``.  At most ``j - 1`` rows survive, so every shrink
    opens at least ``c - j + 1`` rows (``l + 1``, resp. ``l - l//2 + 1``).
    The buffer content depends only on the sequence of rows, so any split
    of a stream into :meth:`partial_fit` calls gives bit-identical results.
    ``buffer_size`` sets ``c`` to a larger value (fewer, bigger shrinks).

    **Shrink cost.**  The squared singular values come from the eigenvalues of
    the ``c x c`` Gram ``B B^T`` (or ``B^T B`` when ``d < c``), ``O(c^2 d)``
    for one BLAS product plus ``O(c^3)`` for the small ``eigh``, and the new
    rows from one product ``diag(sqrt(sigma_i^2 - delta) / sigma_i) U^T B``;
    about 10 times faster than an SVD of ``B``.  The amortised cost is
    ``O(l d)`` per row.  Eigenvalues are clipped at 0; directions with
    ``sigma_i^2 <= c * eps * sigma_1^2`` count as zero (delta is raised to
    that floor, so the accounting stays valid).  Whatever its eigenvector
    accuracy, the Gram route only ever subtracts a PSD matrix bounded by
    ``delta`` (up to ``O(eps sigma_1^2)``); what squaring loses is the
    relative accuracy of small kept directions, ``eps * sigma_1^2 / sigma_i^2``.
    When that ratio would exceed 1e12 the shrink falls back to an SVD of
    ``B``.  float32 input keeps a float32 buffer; its Gram and ``eigh`` run in
    float64 (``numpy.linalg.eigh``, LAPACK ``syevd``: the fastest of the three
    routes measured).  BLAS is pinned to one thread while rows are appended: the
    products are too small to gain from threads, and on a busy machine spinning
    BLAS threads slowed shrinks many times over
    (``benchmarks/results/design-measurements.md``).

    **Guarantee.**  Each shrink removes at least ``j * delta`` of Frobenius
    mass and at most ``delta`` of covariance in any direction, so with
    ``Delta = error_bound_`` (the sum of the deltas, including the final
    compaction of :meth:`get_sketch`):

    ``0 <= x^T (A^T A - B^T B) x <= Delta <= ||A - A_k||_F^2 / (j - k)``

    for every unit ``x`` and every ``k < j`` (``j = l``: Ghashami et al. 2016,
    Theorem 1.1; ``j = l // 2``: Liberty 2013 / Streaming KPCA, Algorithm 1).
    The same holds after :meth:`merge` in any tree of merges (the sketch is
    mergeable: both the covariance error and the Frobenius mass removed add).

    **Compaction.**  :meth:`get_sketch` returns ``l`` rows: if the buffer
    holds at most ``l`` rows it is rotated by an exact SVD (no loss);
    otherwise one more shrink by its ``l``-th squared singular value is
    applied (counted in ``error_bound_``).  The internal buffer is left as it
    is, so the stream can go on.

    References
    ----------
    .. [1] E. Liberty, "Simple and deterministic matrix sketching", KDD 2013.
    .. [2] M. Ghashami, E. Liberty, J. M. Phillips, D. P. Woodruff, "Frequent
       Directions: simple and deterministic matrix sketching", SIAM J.
       Computing 45(5), 2016.
    .. [3] M. Ghashami, D. J. Perry, J. M. Phillips, "Streaming kernel
       principal component analysis", AISTATS 2016 (Algorithm 1).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.sketches import FrequentDirections
    >>> A = np.random.default_rng(0).standard_normal((500, 30))
    >>> fd = FrequentDirections(sketch_size=10).fit(A)
    >>> B = fd.get_sketch()
    >>> B.shape
    (10, 30)
    >>> err = np.linalg.norm(A.T @ A - B.T @ B, 2)
    >>> bool(err <= fd.error_bound_ * (1 + 1e-12) <= np.linalg.norm(A, "fro") ** 2 / 10)  # to rounding
    True
    >>> fd.transform(A[:3]).shape
    (3, 10)
    """

    #: the fitted state ks.save writes (beyond the parameters, n_features_in_ and feature_names_in_);
    #: an attribute not listed here makes save fail, so nothing is silently lost
    _persistent_state: ClassVar[tuple[str, ...]] = (
        "_buffer",
        "_compact",
        "_delta_sum",
        "_dtype",
        "_last_full",
        "_n_rows",
        "_n_shrinks",
        "_record_last_full",
        "_squared_frobenius",
        "_started_with",
        "n_samples_seen_",
    )

    #: how the out-of-core driver (files, Dask) fits it: per-block sketches, merged
    _fit_strategy: ClassVar[str] = "sketch"
    #: the parameters that set the output dimension and the approximation"s size (the CLI"s -d and -n)
    _dim_param: ClassVar[str | None] = "n_components"
    _size_param: ClassVar[str | None] = "sketch_size"

    def __init__(
        self,
        *,
        sketch_size: int = 20,
        shrink: str = "l",
        n_components: int | None = None,
        buffer_size: int | str | None = "auto",
    ) -> None:
        self.sketch_size = sketch_size
        self.shrink = shrink
        self.n_components = n_components
        self.buffer_size = buffer_size

    # ------------------------------------------------------------------ params
    def _check_params(self):
        ell = self.sketch_size
        if not isinstance(ell, numbers.Integral) or isinstance(ell, bool):
            raise TypeError(f"sketch_size must be an int, got {type(ell).__name__}")
        if ell < 2:
            raise ValueError(f"sketch_size must be >= 2, got {ell}")
        if self.shrink not in _SHRINK_MODES:
            raise ValueError(f"shrink must be one of {_SHRINK_MODES}, got {self.shrink!r}")
        k = self.n_components
        if k is not None:
            if not isinstance(k, numbers.Integral) or isinstance(k, bool):
                raise TypeError(f"n_components must be an int or None, got {type(k).__name__}")
            if not 1 <= k <= ell:
                raise ValueError(f"n_components must be in [1, sketch_size={ell}], got {k}")
        c = self.buffer_size
        if isinstance(c, str):
            if c not in ("auto", "paper"):
                raise ValueError(f"buffer_size must be 'auto', 'paper', an int or None, got {c!r}")
        elif c is not None:
            if not isinstance(c, numbers.Integral) or isinstance(c, bool):
                raise TypeError(f"buffer_size must be 'auto', 'paper', an int or None, got {type(c).__name__}")
            least = 2 * ell if self.shrink == "l" else ell
            if c < least:
                raise ValueError(
                    f"buffer_size must be >= {least} (the papers' buffer for sketch_size={ell}, "
                    f"shrink={self.shrink!r}) or None, got {c}"
                )

    def _capacity(self, n_features) -> int:
        # An exact sketch compacts to rank <= n_features <= l rows, so it needs
        # more than l rows of buffer to make progress whatever the mode.
        if self.shrink == "l" or self.sketch_size >= n_features:
            default = 2 * self.sketch_size
        else:
            default = self.sketch_size
        c = self.buffer_size
        if c is None or c == "paper":
            return default
        if c == "auto":
            if n_features > AUTO_MAX_FEATURES:
                return default
            c = min(AUTO_MAX_ROWS, AUTO_BUFFER_BYTES // (8 * max(int(n_features), 1)))
        return max(default, int(c))

    @property
    def _delta_index(self) -> int:
        return self.sketch_size if self.shrink == "l" else self.sketch_size // 2

    # ------------------------------------------------------------------ state
    def _reset(self, n_features, dtype, on_device=None):
        self.n_features_in_ = int(n_features)
        self.n_samples_seen_ = 0
        # The buffer layout and the shrink rule are fixed when a sketch starts.
        self._started_with = (int(self.sketch_size), self.shrink)
        self._dtype = np.dtype(dtype) if on_device is None else np.dtype(_numpy_dtype_name(dtype, on_device[0]))
        shape = (self._capacity(n_features), n_features)
        if on_device is None:
            self._buffer = np.zeros(shape, dtype=self._dtype)
        else:  # the sketch of a PyTorch / CuPy / ... stream lives on its device
            xp, device = on_device
            self._buffer = xp.zeros(shape, dtype=getattr(xp, self._dtype.name), device=device)
        self._n_rows = 0
        self._delta_sum = 0.0
        self._squared_frobenius = 0.0
        self._n_shrinks = 0
        # Memo of the compacted sketch; one dict object per fitted state so a
        # lazy fill does not change the estimator's __dict__ bindings.
        self._compact = {}

    def _check_unchanged(self):
        if (self.sketch_size, self.shrink) != self._started_with:
            raise ValueError(
                f"sketch_size/shrink changed from {self._started_with} to "
                f"{(self.sketch_size, self.shrink)} since this sketch started; call fit to restart"
            )

    def _is_exact(self) -> bool:
        return self.sketch_size >= self.n_features_in_

    def _shrink(self):
        if getattr(self, "_record_last_full", False):
            # Algorithm 1 of Streaming KPCA returns W from the SVD of the last *full*
            # buffer, before its shrink: kept (a copy, O(c d) next to the shrink's
            # O(c^2 d)) for estimators that offer that basis.
            last = self._buffer[: self._n_rows, ...]
            on_device = namespace_of(last)
            self._last_full = last.copy() if on_device is None else on_device[0].asarray(last, copy=True)
        if (ns := namespace_of(self._buffer)) is not None:
            rows, delta = _shrink_rows_device(
                self._buffer[: self._n_rows, ...], self._delta_index, self._is_exact(), ns[0]
            )
        else:
            rows, delta = _shrink_rows(self._buffer[: self._n_rows, ...], self._delta_index, self._is_exact())
        # Stale rows past n_kept are never read: the buffer is refilled before
        # the next shrink, and compaction reads only the first _n_rows.
        self._buffer[: rows.shape[0], ...] = rows
        self._n_rows = rows.shape[0]
        self._delta_sum += delta
        self._n_shrinks += 1

    def _append_dense(self, X):
        """Copy the rows of a validated dense block into the buffer, shrinking when full."""
        with single_threaded_blas():
            self._fill(X)
        self.n_samples_seen_ += X.shape[0]

    def _fill(self, X):
        # One slice copy per shrink: the Python loop runs n / (rows freed per
        # shrink) times, never once per row.
        cap = self._buffer.shape[0]
        n = X.shape[0]
        start = 0
        while start < n:
            take = min(cap - self._n_rows, n - start)
            self._buffer[self._n_rows : self._n_rows + take, ...] = X[start : start + take, ...]
            self._squared_frobenius += _squared_norm(self._buffer[self._n_rows : self._n_rows + take, ...])
            self._n_rows += take
            start += take
            if self._n_rows == cap:
                self._shrink()

    def _append(self, X):
        self._compact = {}
        if (ns := namespace_of(self._buffer)) is not None:
            # a stream that lives on a device: host rows (dispatch off, a merge) join it there
            if namespace_of(X) is None:
                X = X.toarray() if sp.issparse(X) else X
                X = ns[0].asarray(np.ascontiguousarray(X), device=ns[1])
            self._append_dense(X)
            return
        if namespace_of(X) is not None:  # a device block (dispatch off) into a host sketch
            X = host_array(X)
        if sp.issparse(X):
            # Densify a bounded number of rows at a time: the dense copy is the
            # only temporary, d * itemsize bytes per row.
            row_bytes = X.shape[1] * self._dtype.itemsize
            chunk = get_chunk_n_rows(row_bytes, X.shape[0])
            for rows in gen_row_slices(X.shape[0], chunk):
                self._append_dense(X[rows].toarray())
        else:
            self._append_dense(X)

    # -------------------------------------------------------------- fitting
    def partial_fit(self, X: ArrayLike, y: object = None) -> Self:
        """Add a block of rows to the sketch.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            New rows.  CSR input is densified block by block.
        y : ignored

        Returns
        -------
        self : FrequentDirections
        """
        self._check_params()
        first = not hasattr(self, "n_features_in_")
        if not first:
            fitted_namespace(self, X, "partial_fit")  # under dispatch: the stream's namespace and device
        A, on_device = self._validate(X, reset=first)
        if first:
            self._reset(A.shape[1], A.dtype, on_device)
        else:
            self._check_unchanged()
            check_n_features(self, A)
            A = self._cast(A, on_device)
        self._append(A)
        return self

    def _validate(self, X, reset) -> tuple[Any, Any]:
        """(validated X, ``(xp, device)`` of a device array or None): device input is checked on its device."""
        if (ns := array_namespace(X)) is not None:
            return check_input_xp(X, ns[0], estimator=self, reset=reset), ns
        return check_input(X, estimator=self, reset=reset), None

    def _cast(self, X, on_device):
        if on_device is None:
            return cast_finite(X, self._dtype, stream="FrequentDirections sketch")
        xp = on_device[0]
        Y = xp.astype(X, getattr(xp, self._dtype.name))
        if not bool(xp.all(xp.isfinite(Y))):
            raise ValueError(
                f"X has a value beyond the range of {self._dtype}, the dtype this FrequentDirections sketch took "
                "from its first block; rescale the data or start the stream in float64"
            )
        return Y

    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Sketch ``X`` from scratch (same result as a stream of ``partial_fit``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : FrequentDirections
        """
        self._check_params()
        A, on_device = self._validate(X, reset=True)
        self._reset(A.shape[1], A.dtype, on_device)
        # Blocks only bound the temporaries of check/densify; the buffer state
        # does not depend on the split, so this equals any partial_fit stream.
        chunk = get_chunk_n_rows(A.shape[1] * self._dtype.itemsize, A.shape[0])
        for rows in gen_row_slices(A.shape[0], chunk):
            self._append(A[rows, ...])
        return self

    def merge(self, other: Self) -> Self:
        """Merge another sketch into this one (in place).

        The result sketches the concatenation of both streams with the same
        guarantee: the deltas add up.

        Parameters
        ----------
        other : FrequentDirections
            A sketch with the same ``sketch_size``, ``shrink``, number of
            features and dtype.

        Returns
        -------
        self : FrequentDirections
        """
        if not isinstance(other, FrequentDirections):
            raise TypeError(f"can only merge a FrequentDirections, got {type(other).__name__}")
        self._check_params()
        for name in ("sketch_size", "shrink"):
            if getattr(self, name) != getattr(other, name):
                raise ValueError(
                    f"cannot merge sketches with different {name}: {getattr(self, name)!r} != {getattr(other, name)!r}"
                )
        if not hasattr(other, "n_features_in_"):
            return self  # an empty sketch adds nothing
        other._check_unchanged()
        if not hasattr(self, "n_features_in_"):
            self._reset(other.n_features_in_, other._dtype, namespace_of(other._buffer))
        self._check_unchanged()
        if self.n_features_in_ != other.n_features_in_:
            raise ValueError(
                f"cannot merge sketches with different n_features_in_: {self.n_features_in_} != {other.n_features_in_}"
            )
        if self._dtype != other._dtype:
            raise ValueError(f"cannot merge sketches with different dtype: {self._dtype} != {other._dtype}")
        # Copy first: other may be self.
        rows = other._buffer[: other._n_rows, ...]
        other_ns = namespace_of(rows)
        rows = rows.copy() if other_ns is None else other_ns[0].asarray(rows, copy=True)
        delta, frob, n_seen = other._delta_sum, other._squared_frobenius, other.n_samples_seen_
        self._compact = {}
        rows = like(rows, self._buffer)  # another device's (or the host's) rows join this sketch where it lives
        self._append_dense(rows)
        # Appending recounted the rows' mass; the merged stream's ||A||_F^2 and
        # sample count are other's, and its shrinkage adds to ours.
        self._squared_frobenius += frob - _squared_norm(rows)
        self.n_samples_seen_ += n_seen - rows.shape[0]
        self._delta_sum += delta
        return self

    # ------------------------------------------------------------- results
    def _compacted(self):
        """(sketch l x d, singular values, components, compaction delta), memoised."""
        check_is_fitted(self)
        if not self._compact:
            ell, d = self.sketch_size, self.n_features_in_
            B = host_array(self._buffer[: self._n_rows, ...]).astype(np.float64)
            n_dirs = min(ell, d)
            if B.shape[0] < n_dirs:
                # Zero rows make the SVD return a full orthonormal set of n_dirs
                # right singular vectors (the extra ones with singular value 0).
                B = np.vstack([B, np.zeros((n_dirs - B.shape[0], d))])
            require_finite(B, "Frequent Directions sketch")
            with single_threaded_blas():
                _, s, vt = np.linalg.svd(B, full_matrices=False)
            # a basis fixed by the sketch alone (signs; null and tied directions): the same on every backend
            vt = canonical_eigenvectors(s * s, np.ascontiguousarray(vt.T)).T
            lam = s * s
            delta = 0.0
            if B.shape[0] > ell and not self._is_exact():
                delta = float(lam[ell - 1])
            lam = np.clip(lam[:n_dirs] - delta, 0.0, None)
            sv = np.sqrt(lam)
            sketch = np.zeros((ell, d), dtype=self._dtype)
            sketch[:n_dirs] = sv[:, None] * vt[:n_dirs]
            self._compact.update(
                sketch=sketch,
                singular_values=sv.astype(self._dtype),
                components=vt[:n_dirs].astype(self._dtype),
                delta=delta,
            )
        return self._compact

    def get_sketch(self):
        """The current ``l x d`` sketch ``B`` (rows ``sigma_i v_i^T``, descending).

        Returns
        -------
        B : ndarray of shape (sketch_size, n_features)
            Zero rows pad the sketch when it has rank below ``l``.
        """
        return self._like_state(self._compacted()["sketch"].copy())

    def _like_state(self, A):
        """A host result where the sketch lives (its device, for a device stream)."""
        return like(A, self._buffer)

    def _extend(self, Z):
        """Append an estimator's own rows (finite by construction: no validation), starting the sketch."""
        if not hasattr(self, "n_features_in_"):
            ns = namespace_of(Z)
            self._reset(Z.shape[1], Z.dtype if ns is None else _numpy_dtype_name(Z.dtype, ns[0]), ns)
        self._append(Z)

    @property
    def components_(self):
        return self._like_state(self._compacted()["components"])

    @property
    def singular_values_(self):
        return self._like_state(self._compacted()["singular_values"])

    @property
    def error_bound_(self):
        return self._delta_sum + self._compacted()["delta"]

    @property
    def squared_frobenius_(self):
        check_is_fitted(self)
        return self._squared_frobenius

    @property
    def _n_features_out(self):
        check_is_fitted(self)
        k = self.n_components if self.n_components is not None else self.sketch_size
        return min(k, self.n_features_in_)

    def transform(self, X: ArrayLike) -> FloatArray:
        """Project ``X`` on the leading right singular vectors of the sketch.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            ``X @ components_[:n_components].T``, in the dtype of ``X``.
        """
        if (Z := maybe_dask_transform(self, X)) is not None:  # a dask array: map over its blocks
            return Z
        check_is_fitted(self)
        if (ns := fitted_namespace(self, X, "transform")) is not None:  # a PyTorch / CuPy / ... array
            from ..kernels.array_api import linear_project_xp, to_device

            (C,) = to_device((self._compacted()["components"][: self._n_features_out],), *ns)
            return linear_project_xp(X, C, ns[0])
        X = check_input(X, estimator=self, reset=False)
        check_n_features(self, X)
        comps = self._compacted()["components"][: self._n_features_out].astype(X.dtype, copy=False)
        return np.asarray(X @ comps.T)

    # ----------------------------------------------------------- persistence
    def to_dict(self) -> dict:
        """Parameters and state as plain Python values and numpy arrays.

        Returns
        -------
        state : dict
            Round-trips through :meth:`from_dict` to a sketch that continues
            the stream exactly as this one would.
        """
        params = self.get_params()
        if not hasattr(self, "n_features_in_"):
            return {"params": params, "fitted": False}
        return {
            "params": params,
            "fitted": True,
            "n_features_in": int(self.n_features_in_),
            "n_samples_seen": int(self.n_samples_seen_),
            "dtype": self._dtype.name,
            "buffer": np.array(host_array(self._buffer[: self._n_rows, ...])),
            "delta_sum": float(self._delta_sum),
            "squared_frobenius": float(self._squared_frobenius),
            "n_shrinks": int(self._n_shrinks),
        }

    @classmethod
    def from_dict(cls, state: dict) -> FrequentDirections:
        """Rebuild a sketch from :meth:`to_dict` output.

        Parameters
        ----------
        state : dict

        Returns
        -------
        sketch : FrequentDirections
        """
        if not isinstance(state, dict) or "params" not in state:
            raise ValueError("state must be a dict produced by FrequentDirections.to_dict()")
        est = cls(**state["params"])
        est._check_params()
        if not state.get("fitted", False):
            return est
        buffer = np.asarray(state["buffer"])
        dtype = np.dtype(state["dtype"])
        n_features = int(state["n_features_in"])
        if dtype not in (np.float32, np.float64):
            raise ValueError(f"state dtype must be float32 or float64, got {dtype}")
        capacity = est._capacity(n_features)
        if buffer.ndim != 2 or buffer.shape[1] != n_features or buffer.shape[0] >= capacity:
            raise ValueError(f"state buffer has shape {buffer.shape}; expected (< {capacity}, {n_features})")
        est._reset(n_features, dtype)
        est._buffer[: buffer.shape[0]] = buffer
        est._n_rows = buffer.shape[0]
        est.n_samples_seen_ = int(state["n_samples_seen"])
        est._delta_sum = float(state["delta_sum"])
        est._squared_frobenius = float(state["squared_frobenius"])
        est._n_shrinks = int(state.get("n_shrinks", 0))
        return est

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = True  # PyTorch / CuPy / ... input under array_api_dispatch
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
