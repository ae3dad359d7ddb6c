"""Streaming kernel PCA (SKPCA): random Fourier features sketched by Frequent Directions."""

from __future__ import annotations

import numbers
from typing import ClassVar, Self

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from .._typing import ArrayLike, BandwidthLike, FloatArray, KernelLike, RandomStateLike
from ..kernels.selection import FEATURE_KERNEL_CONSTRAINT, KERNEL_CONSTRAINTS, KernelEstimatorMixin
from ..maps.random_fourier_features import VARIANTS, make_feature_map, rff_transform
from ..sketches.frequent_directions import FrequentDirections
from ..utils.array_api import fitted_namespace, host_array, like, like_state, namespace_of
from ..utils.chunking import gen_row_slices, get_chunk_n_rows
from ..utils.dispatch import maybe_dask_transform
from ..utils.eigen import canonical_eigenvectors
from ..utils.estimator_checks import Interval, StrOptions, output_dtype
from ..utils.validation import check_input, require_finite
from ..utils.warnings import warn as _warn
from ._feature_stream import RandomFeatureStreamMixin


class StreamingKPCA(
    KernelEstimatorMixin, RandomFeatureStreamMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    r"""Streaming kernel PCA (Ghashami, Perry & Phillips): RFF rows fed to Frequent Directions.

    Parameters
    ----------
    n_components : int or None, default=None
        Output dimension ``k <= sketch_size`` (and ``<= n_random_features``);
        None means every direction of the basis with a nonzero singular
        value.  A Frequent Directions sketch that has shrunk has at most
        ``sketch_size - 1`` of them (the shrink zeroes its last row), so with
        ``basis="sketch"`` None gives ``sketch_size - 1`` columns on a long
        stream; ``basis="last_full_buffer"`` gives ``sketch_size``.  The
        number returned is ``n_components_``.
    n_random_features : int, default=100
        Number ``m`` of random Fourier features.
    sketch_size : int, default=20
        Rows ``l >= 2`` of the Frequent Directions sketch of the ``n x m``
        feature matrix ``Z``.
    shrink : {"l", "half"}, default="l"
        Frequent Directions rule (see
        :class:`~kernelsketch.sketches.FrequentDirections`); ``"half"`` is the
        paper's Algorithm 1 (shrink by the ``l/2``-th squared singular value),
        ``"l"`` the later rule with twice the buffer and half the error bound.
    kernel : {"gaussian", "laplacian", "cauchy"} or ShiftInvariantKernel, default="gaussian"
        Other kernels raise a ValueError (no random Fourier features).
    bandwidth : float or {"percentile", "median", "mean_sq"}, default="percentile"
        A heuristic is resolved on all of X by ``fit`` and on the first block
        by a stream of ``partial_fit`` calls; give a number when sketches are
        to be merged.
    variant : {"cos", "paired"}, default="cos"
        ``"cos"``: ``sqrt(2/m) cos(W^T x + b)``; ``"paired"``: ``[cos, sin]`` pairs (lower variance).
    basis : {"sketch", "last_full_buffer"}, default="sketch"
        Where ``W`` comes from.  ``"sketch"``: the right singular vectors of the
        final Frequent Directions sketch ``B`` with a nonzero singular value:
        the row space of ``B`` that Lemmas 2.1 and 2.2 of the paper bound
        (``||y^T Z||^2 <= ||Z||_F^2 / l`` for every direction outside it), and
        it covers every row of the stream.  ``"last_full_buffer"``: Algorithm 1
        as printed, the right singular vectors of the last *full* buffer, taken
        just before its shrink (up to ``sketch_size`` of them); the rows that
        arrived after that shrink do not shape it.  A stream shorter than one
        buffer has had no shrink: both are then the sketch's row space.
        Neither ever returns a direction with zero singular value.  Measured
        on cpu_act with ``shrink="half"``, the last full buffer (``l``
        directions against the shrunk sketch's ``l/2 - 1`` plus the newest
        rows) had the lower spectral error at 37 of 44 sizes; the default
        keeps the basis the guarantee is about (``docs/results/streaming_kpca.md``).
    orthogonal : bool, default=False
        Orthogonal random features (Gaussian kernel only).
    random_state : int, Generator or None
        Seeds the random features (drawn once, at the first fit/partial_fit).
    buffer_size : "auto", "paper", int or None, default="auto"
        Rows of the Frequent Directions buffer (see
        :class:`~kernelsketch.sketches.FrequentDirections`): ``"auto"`` a
        32 MiB buffer of at most 4096 rows for up to 512 random features (fewer,
        larger shrinks: faster, with the same guarantee), the paper's beyond;
        ``"paper"`` (or None) the paper's.  With
        ``basis="last_full_buffer"`` (Algorithm 1's ``W``, defined on the
        paper's buffer) ``"auto"`` is the paper's buffer.

    Attributes
    ----------
    components_ : ndarray (k, m)
        ``W^T``: the top-k right singular vectors of the sketch ``B`` (or of
        the last full buffer, see ``basis``), each with its largest-magnitude
        entry positive.  Only directions with a nonzero singular value: ``k``
        is ``n_components``, or fewer when the sketch has lower rank (a
        ``RuntimeWarning`` says so when ``n_components`` asked for more;
        ``n_components=None`` takes them all).
    n_components_ : int
        ``k``, the number of output columns.
    singular_values_ : ndarray (k,)
        Singular values of ``B`` (of the last full buffer with that ``basis``).
    eigenvalues_ : ndarray (k,)
        ``singular_values_ ** 2``: approximate top eigenvalues of the
        (uncentred) approximate Gram ``Z Z^T``, i.e. of the kernel Gram.
    explained_variance_ : ndarray (k,)
        ``eigenvalues_ / n_samples_seen_`` (uncentred second moments).
    error_bound_ : float
        Frequent Directions' certificate:
        ``0 <= Z^T Z - B^T B <= error_bound_`` (in the PSD order).
    sketch_ : FrequentDirections
        The sketch of the feature rows (float64).
    feature_map_ : RandomFourierFeatures
    kernel_ : ShiftInvariantKernel
    n_samples_seen_ : int

    Notes
    -----
    Algorithm 1 of the paper: every row ``x_i`` is mapped to
    ``z_i = sqrt(2/m) cos(W^T x_i + b)`` and appended to a Frequent Directions
    sketch ``B`` (``l x m``); ``W`` (``m x k``) holds the top right singular
    vectors of ``B``.  The approximate Gram is
    ``G_tilde = Z W W^T Z^T = Y Y^T`` with ``Y = Z W``
    (:meth:`gram_factor`, never forming the ``n x n`` matrix), and a point
    maps to ``z(x)^T W`` (:meth:`transform`, ``O(d m + m k)``).

    Guarantee: for every unit ``x`` orthogonal to ``W``,
    ``||Z x||^2 <= ||B x||^2 + Delta``, so
    ``||Z Z^T - Y Y^T||_2 <= sigma_{k+1}(B)^2 + Delta`` with
    ``Delta = error_bound_ <= ||Z||_F^2 / l`` (``shrink="l"``;
    ``||Z||_F^2 / floor(l / 2)`` for ``"half"``, which shrinks by the
    ``floor(l / 2)``-th squared singular value: for odd ``l`` more than
    ``2 ||Z||_F^2 / l``, e.g. ``||Z||_F^2`` at ``l = 3``) and ``||Z||_F^2 <= 2n``
    (random Fourier features have ``||z(x)||^2 <= 2``): Lemma 2.2's ``eps n``
    with ``l = 2 / eps`` for ``"l"``, ``floor(l / 2) = 2 / eps`` for ``"half"``.  With ``m = O(eps^-2 log(n / delta))``
    features, ``||G - G_tilde||_2 <= eps n`` with probability ``1 - delta``
    (Theorem 2.1).  Cost: ``O(n m (d + l))`` time and ``O(m (d + l))`` memory.

    **No centring.**  Like the paper, the features are not centred: a
    running mean cannot be subtracted from rows already folded into the
    sketch, and centring would break mergeability.  ``G_tilde`` therefore
    approximates the uncentred Gram ``K`` (the leading component carries the
    mean); use :class:`RNCA` for centred components from a stream.

    Mergeable like Frequent Directions: :meth:`merge` of sketches of two
    streams (same parameters and seed) sketches their concatenation with the
    summed error bound.

    References
    ----------
    M. Ghashami, D. J. Perry, J. M. Phillips. Streaming kernel principal
    component analysis. AISTATS 2016.
    A. Rahimi, B. Recht. Random features for large-scale kernel machines. NIPS 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.decomposition import StreamingKPCA
    >>> X = np.random.default_rng(0).normal(size=(500, 4))
    >>> skpca = StreamingKPCA(5, n_random_features=100, sketch_size=10, bandwidth=2.0, random_state=0)
    >>> for block in np.array_split(X, 5):
    ...     skpca = skpca.partial_fit(block)
    >>> skpca.transform(X).shape
    (500, 5)
    >>> Z, B = skpca.feature_map_.transform(X), skpca.sketch_.get_sketch()
    >>> bool(np.linalg.norm(Z.T @ Z - B.T @ B, 2) <= skpca.error_bound_ + 1e-9)
    True
    """

    #: the fitted state ks.save writes (beyond the parameters, n_features_in_ and feature_names_in_);
    #: an attribute not listed here makes save fail, so nothing is silently lost
    _persistent_state: ClassVar[tuple[str, ...]] = (
        "_basis_memo",
        "feature_map_",
        "kernel_",
        "sketch_",
    )

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_random_features": [Interval(numbers.Integral, 1, None, closed="left")],
        "sketch_size": [Interval(numbers.Integral, 2, None, closed="left")],
        "shrink": [StrOptions({"l", "half"})],
        "buffer_size": [Interval(numbers.Integral, 2, None, closed="left"), StrOptions({"auto", "paper"}), None],
        "kernel": FEATURE_KERNEL_CONSTRAINT,
        "bandwidth": KERNEL_CONSTRAINTS["bandwidth"],
        "gamma": KERNEL_CONSTRAINTS["gamma"],
        "variant": [StrOptions(set(VARIANTS))],
        "basis": [StrOptions({"sketch", "last_full_buffer"})],
        "orthogonal": ["boolean"],
        "random_state": KERNEL_CONSTRAINTS["random_state"],
    }

    def __init__(
        self,
        n_components: int | None = None,
        *,
        n_random_features: int = 100,
        sketch_size: int = 20,
        shrink: str = "l",
        kernel: KernelLike = "gaussian",
        bandwidth: BandwidthLike = "percentile",
        gamma: float | None = None,
        variant: str = "cos",
        basis: str = "sketch",
        orthogonal: bool = False,
        random_state: RandomStateLike = None,
        buffer_size: int | str | None = "auto",
    ) -> None:
        self.n_components = n_components
        self.n_random_features = n_random_features
        self.sketch_size = sketch_size
        self.shrink = shrink
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.gamma = gamma
        self.variant = variant
        self.basis = basis
        self.orthogonal = orthogonal
        self.random_state = random_state
        self.buffer_size = buffer_size

    # -- fitting ----------------------------------------------------------
    def _check_params(self):
        k = self.n_components
        if k is not None and k > self.sketch_size:
            raise ValueError(f"n_components={k} must be <= sketch_size={self.sketch_size}")
        if k is not None and k > self.n_random_features:
            raise ValueError(f"n_components={k} must be <= n_random_features={self.n_random_features}")

    _stream_attr = "sketch_"

    def _start(self, X, kernel=None):
        self._check_params()
        self.feature_map_ = make_feature_map(self, X, kernel=kernel)
        self.kernel_ = self.feature_map_.kernel_
        self.sketch_ = FrequentDirections(
            sketch_size=self.sketch_size,
            shrink=self.shrink,
            # Algorithm 1's W is the last full buffer *of the paper's size*
            buffer_size="paper"
            if self.buffer_size == "auto" and self.basis == "last_full_buffer"
            else self.buffer_size,
        )
        self.sketch_._check_params()  # a buffer_size below the papers' buffer: a clear error before any work
        self.sketch_._record_last_full = True
        self._basis_memo = {}

    def _accumulate(self, X):
        if (ns := namespace_of(self.feature_map_.random_weights_)) is not None:
            # a stream on a device: features and the Frequent Directions sketch stay there
            for Z in self._features_on_device(like(X, self.feature_map_.random_weights_), ns[0]):
                self.sketch_._extend(Z)
            return
        fm, m = self.feature_map_, self.n_random_features
        # per row: the features (m values) and their float64 copy
        chunk = get_chunk_n_rows(2 * 8 * m, X.shape[0])
        for rows in gen_row_slices(X.shape[0], chunk):
            Z = rff_transform(X[rows], fm.random_weights_, fm.random_offset_, np.sqrt(2.0 / m))
            # the sketch is kept in float64 whatever the input dtype, so
            # sketches of float32 and float64 streams merge
            self.sketch_.partial_fit(Z.astype(np.float64, copy=False))

    def merge(self, other: Self) -> Self:
        """Merge another StreamingKPCA's sketch into this one (in place); returns self.

        Refuses (ValueError) sketches with other parameters or other random
        features (a different ``random_state`` or resolved bandwidth).
        """
        if not isinstance(other, StreamingKPCA):
            raise TypeError(f"can only merge another StreamingKPCA, got {type(other).__name__}")
        for est in (self, other):
            if not hasattr(est, "sketch_"):
                raise NotFittedError("both StreamingKPCA sketches must be fitted before merging")
        self._check_mergeable(
            other, ("n_components", "n_random_features", "sketch_size", "shrink", "variant", "orthogonal")
        )
        self.sketch_.merge(other.sketch_)
        return self

    # -- results ----------------------------------------------------------
    def _fitted(self):
        if not hasattr(self, "sketch_"):
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet; call fit first.")
        return self.sketch_

    def _basis(self):
        """(singular values, W as m x k) of the chosen basis, nonzero directions only; memoised per state."""
        sk = self._fitted()
        key = (self.basis, self.n_components, int(sk.n_samples_seen_), int(sk._n_shrinks))
        memo = vars(self).get("_basis_memo")
        if memo is not None and memo.get("key") == key:
            return memo["value"]
        last_full = getattr(sk, "_last_full", None)
        if self.basis == "last_full_buffer" and last_full is not None:
            B = np.asarray(host_array(last_full), dtype=np.float64)
            require_finite(B, "Frequent Directions buffer")
            _, s, vt = np.linalg.svd(B, full_matrices=False)
            s, vt = s[: self.sketch_size], vt[: self.sketch_size]
        else:
            compact = sk._compacted()  # host arrays, wherever the sketch lives
            s = np.asarray(compact["singular_values"], dtype=np.float64)
            vt = np.asarray(compact["components"], dtype=np.float64)
        # directions with a zero singular value are arbitrary (null space): never components
        floor = max(s.shape[0], 1) * np.finfo(np.float64).eps * (s[0] if s.size else 0.0)
        rank = int(np.count_nonzero(s > floor))
        k = rank if self.n_components is None else min(self.n_components, rank)
        if self.n_components is not None and self.n_components > rank:
            _warn(
                f"StreamingKPCA: n_components={self.n_components} but the "
                f"{'last full buffer' if self.basis == 'last_full_buffer' and last_full is not None else 'sketch'} "
                f"has rank {rank}; returning {rank} components (the rest would be arbitrary null-space "
                "directions)",
                RuntimeWarning,
            )
        s = s[:k].copy()
        W = canonical_eigenvectors(s**2, np.ascontiguousarray(vt[:k].T))
        if memo is not None:  # filled in place: transform never rebinds an attribute
            memo.update(key=key, value=(s, W))
        return s, W

    @property
    def components_(self):
        return like_state(self, self._basis()[1].T.copy())

    @property
    def singular_values_(self):
        return like_state(self, self._basis()[0].copy())

    @property
    def eigenvalues_(self):
        return like_state(self, self._basis()[0] ** 2)

    @property
    def explained_variance_(self):
        return like_state(self, self._basis()[0] ** 2 / max(self.n_samples_seen_, 1))

    @property
    def error_bound_(self):
        return float(self._fitted().error_bound_)

    @property
    def n_samples_seen_(self):
        return int(self._fitted().n_samples_seen_)

    @property
    def n_components_(self):
        """Number of output columns: ``n_components``, or fewer when the basis has lower rank."""
        return int(self._basis()[1].shape[1])

    @property
    def _n_features_out(self):
        return self._basis()[1].shape[1]

    def transform(self, X: ArrayLike) -> FloatArray:
        """``Y = Z(X) W``: coordinates on the top-k sketched directions, shape (n, k)."""
        if (Z := maybe_dask_transform(self, X)) is not None:  # a dask array: map over its blocks
            return Z
        check_is_fitted(self)
        if (ns := fitted_namespace(self, X, "transform")) is not None:  # a PyTorch / CuPy / ... array
            from ..kernels.array_api import rff_project_xp, to_device

            fm = self.feature_map_
            Wf, b, Wb = to_device((fm.random_weights_, fm.random_offset_, self._basis()[1]), *ns)
            return rff_project_xp(X, Wf, b, float(np.sqrt(2.0 / self.n_random_features)), Wb, None, ns[0])
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=False)
        W = self._basis()[1]
        fm, m = self.feature_map_, self.n_random_features
        out = np.empty((X.shape[0], W.shape[1]), dtype=np.float64)
        for rows in gen_row_slices(X.shape[0], get_chunk_n_rows(2 * 8 * m, X.shape[0])):
            Z = rff_transform(X[rows], host_array(fm.random_weights_), host_array(fm.random_offset_), np.sqrt(2.0 / m))
            np.matmul(Z.astype(np.float64, copy=False), W, out=out[rows])
        return out.astype(output_dtype(X), copy=False)

    def gram_factor(self, X):
        """Factor ``Y = Z(X) W`` of ``G_tilde = Z W W^T Z^T = Y Y^T`` (the n x n matrix is never formed)."""
        return self.transform(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = True  # PyTorch / CuPy / ... input under array_api_dispatch
        tags.input_tags.sparse = True
        return tags
