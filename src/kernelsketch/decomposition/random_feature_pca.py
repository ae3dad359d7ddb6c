"""Linear PCA on random Fourier features: RF-KPCA (U-statistic) and streaming RNCA."""

from __future__ import annotations

import numbers
from typing import ClassVar, Self

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from .._typing import ArrayLike, BandwidthLike, FloatArray, KernelLike, RandomStateLike
from ..kernels.selection import FEATURE_KERNEL_CONSTRAINT, KERNEL_CONSTRAINTS, KernelEstimatorMixin
from ..maps.random_fourier_features import VARIANTS, make_feature_map, rff_transform
from ..utils.array_api import fitted_namespace, host_array, like, like_state, namespace_of
from ..utils.chunking import gen_row_slices, get_chunk_n_rows
from ..utils.dispatch import maybe_dask_transform
from ..utils.eigen import canonical_eigenvectors
from ..utils.estimator_checks import Interval, StrOptions, output_dtype
from ..utils.validation import check_input, require_finite
from ._feature_stream import RandomFeatureStreamMixin


def _chunk_rows(m, n):
    # per row: the features in X's dtype, their float64 copy and the centred
    # copy (3 * 8 * m bytes bounds all three), plus the paired variant's arguments
    return get_chunk_n_rows(4 * 8 * m, n)


class _RandomFeaturePCA(
    KernelEstimatorMixin, RandomFeatureStreamMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    """Shared machinery: features, the centred scatter (Chan et al. updates), eigh, transform, merge."""

    #: the fitted state ks.save writes (beyond the parameters, n_features_in_ and feature_names_in_);
    #: an attribute not listed here makes save fail, so nothing is silently lost
    _persistent_state: ClassVar[tuple[str, ...]] = (
        "_decomposition",
        "_scatter",
        "feature_map_",
        "kernel_",
        "mean_",
        "n_samples_seen_",
    )

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_random_features": [Interval(numbers.Integral, 1, None, closed="left")],
        "kernel": FEATURE_KERNEL_CONSTRAINT,
        "bandwidth": KERNEL_CONSTRAINTS["bandwidth"],
        "gamma": KERNEL_CONSTRAINTS["gamma"],
        "variant": [StrOptions(set(VARIANTS))],
        "orthogonal": ["boolean"],
        "random_state": KERNEL_CONSTRAINTS["random_state"],
    }
    #: eigenvalues of the scatter are divided by n - _ddof for the covariance
    _ddof = 0
    #: rows needed before the covariance is defined
    _min_samples = 1
    _stream_attr = "_scatter"

    def __init__(
        self,
        n_components: int | None = None,
        *,
        n_random_features: int = 100,
        kernel: KernelLike = "gaussian",
        bandwidth: BandwidthLike = "percentile",
        gamma: float | None = None,
        variant: str = "cos",
        orthogonal: bool = False,
        random_state: RandomStateLike = None,
    ) -> None:
        self.n_components = n_components
        self.n_random_features = n_random_features
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.gamma = gamma
        self.variant = variant
        self.orthogonal = orthogonal
        self.random_state = random_state

    # -- accumulation ----------------------------------------------------
    def _check_params(self):
        if self.n_components is not None and self.n_components > self.n_random_features:
            raise ValueError(
                f"n_components={self.n_components} must be <= n_random_features={self.n_random_features} "
                "(the features span at most that many directions)"
            )

    def _start(self, X, kernel=None):
        self._check_params()
        self.feature_map_ = make_feature_map(self, X, kernel=kernel)
        self.kernel_ = self.feature_map_.kernel_
        m = self.n_random_features
        self.n_samples_seen_ = 0
        self.mean_ = np.zeros(m)
        self._scatter = np.zeros((m, m))
        self._decomposition = None

    def _features(self, X):
        fm = self.feature_map_
        W, b = host_array(fm.random_weights_), host_array(fm.random_offset_)
        return rff_transform(X, W, b, np.sqrt(2.0 / self.n_random_features))

    def _combine(self, n_b, mean_b, scatter_b):
        """Chan, Golub & LeVeque's pairwise update of (n, mean, centred scatter)."""
        n_a = self.n_samples_seen_
        n = n_a + n_b
        delta = mean_b - self.mean_
        # S = S_a + S_b + (n_a n_b / n) delta delta^T: no Z^T Z - n zbar zbar^T
        # cancellation, and merging two sketches is the same formula.
        if isinstance(self._scatter, np.ndarray):
            self._scatter += scatter_b
            self._scatter += np.outer(delta, delta * (n_a * n_b / n))
            self.mean_ += delta * (n_b / n)
        else:  # statistics on a device: the same formula in its namespace
            self._scatter = self._scatter + scatter_b + delta[:, None] * (delta * (n_a * n_b / n))[None, :]
            self.mean_ = self.mean_ + delta * (n_b / n)
        self.n_samples_seen_ = n
        self._decomposition = None

    def _accumulate(self, X):
        if (ns := namespace_of(self._scatter)) is not None:  # a stream on a device: the scatter is summed there
            xp = ns[0]
            for Z in self._features_on_device(like(X, self._scatter), xp):
                mean_b = xp.mean(Z, axis=0)
                Zc = Z - mean_b[None, :]
                self._combine(Z.shape[0], mean_b, xp.matrix_transpose(Zc) @ Zc)
            return
        for rows in gen_row_slices(X.shape[0], _chunk_rows(self.n_random_features, X.shape[0])):
            Z = self._features(X[rows]).astype(np.float64, copy=False)
            mean_b = Z.mean(axis=0)
            Z -= mean_b
            self._combine(Z.shape[0], mean_b, Z.T @ Z)

    # -- eigendecomposition (lazy: partial_fit only accumulates) ---------
    def _decompose(self):
        if self.n_samples_seen_ < self._min_samples:
            raise ValueError(
                f"{type(self).__name__} needs at least {self._min_samples} samples for its "
                f"covariance; {self.n_samples_seen_} seen so far"
            )
        if self._decomposition is None:
            m = self.n_random_features
            k = m if self.n_components is None else self.n_components
            # the m x m eigenproblem runs on the host, for a device stream too (small next to the
            # O(n m^2) scatter; the canonical basis makes both routes agree)
            S = host_array(self._scatter)
            require_finite(S, "random-feature covariance")
            w, V = scipy.linalg.eigh(S, subset_by_index=[m - k, m - 1], check_finite=False)
            order = np.argsort(w)[::-1]
            w = np.maximum(w[order], 0.0)  # rounding can leave tiny negatives
            V = canonical_eigenvectors(w, np.ascontiguousarray(V[:, order]))
            trace = float(np.trace(S))
            self._decomposition = (w, V, trace)
        return self._decomposition

    def _fitted_check(self):
        if not hasattr(self, "_scatter"):
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet; call fit first.")

    @property
    def components_(self):
        """Principal axes in feature space, shape (k, m); rows are unit eigenvectors."""
        self._fitted_check()
        return like_state(self, self._decompose()[1].T)

    @property
    def eigenvalues_(self):
        """Eigenvalues of the centred scatter ``sum_i (z_i - zbar)(z_i - zbar)^T``, descending.

        They are the nonzero eigenvalues of the centred approximate Gram
        ``H Z Z^T H``, comparable with :attr:`KernelPCA.eigenvalues_`.
        """
        self._fitted_check()
        return like_state(self, self._decompose()[0])

    @property
    def explained_variance_(self):
        """Eigenvalues of the covariance: ``eigenvalues_ / (n - ddof)``."""
        self._fitted_check()
        return like_state(self, self._decompose()[0] / max(self.n_samples_seen_ - self._ddof, 1))

    @property
    def explained_variance_ratio_(self):
        self._fitted_check()
        w, _, trace = self._decompose()
        return like_state(self, w / trace if trace > 0 else np.zeros_like(w))

    @property
    def _n_features_out(self):
        return self.n_random_features if self.n_components is None else self.n_components

    # -- outputs ----------------------------------------------------------
    def _project(self, X, centered):
        check_is_fitted(self)
        if (ns := fitted_namespace(self, X, "transform")) is not None:  # a PyTorch / CuPy / ... array
            from ..kernels.array_api import rff_project_xp, to_device

            V = self._decompose()[1]
            fm = self.feature_map_
            offset = host_array(self.mean_) @ V if centered else None
            W, b, Vd, off = to_device((fm.random_weights_, fm.random_offset_, V, offset), *ns)
            return rff_project_xp(X, W, b, float(np.sqrt(2.0 / self.n_random_features)), Vd, off, ns[0])
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=False)
        V = self._decompose()[1]
        out = np.empty((X.shape[0], V.shape[1]), dtype=np.float64)
        offset = host_array(self.mean_) @ V if centered else None
        for rows in gen_row_slices(X.shape[0], _chunk_rows(self.n_random_features, X.shape[0])):
            np.matmul(self._features(X[rows]).astype(np.float64, copy=False), V, out=out[rows])
            if offset is not None:
                out[rows] -= offset
        return out.astype(output_dtype(X), copy=False)

    def transform(self, X: ArrayLike) -> FloatArray:
        """Principal-component scores ``(z(x) - mean_) @ components_.T``, shape (n, k)."""
        if (Z := maybe_dask_transform(self, X)) is not None:  # a dask array: map over its blocks
            return Z
        return self._project(X, centered=True)

    def gram_factor(self, X, centered=False):
        """Factor ``Y = Z(X) V_k`` of the approximate Gram ``Y Y^T = Z V_k V_k^T Z^T``.

        ``V_k`` holds the top-k eigenvectors of the covariance of the features.
        With ``centered=True`` the features are centred on the training mean
        first, so ``Y Y^T`` approximates the centred Gram ``H K H``.  The
        ``n x n`` matrix is never formed.
        """
        return self._project(X, centered=bool(centered))

    def _finish_fit(self):
        self._decompose()

    def merge(self, other: Self) -> Self:
        """Add another sketch's statistics to this one (in place); returns self.

        Both must be of the same class, with the same parameters and the same
        random features (the same ``random_state`` and a numeric or equally
        resolved bandwidth); anything else raises a ValueError naming the
        mismatch.  Merged and one-pass results agree to rounding.
        """
        name = type(self).__name__
        if type(other) is not type(self):
            raise TypeError(f"can only merge another {name}, got {type(other).__name__}")
        self._fitted_check()
        other._fitted_check()
        self._check_mergeable(other, ("n_components", "n_random_features", "variant", "orthogonal"))
        # another device's (or the host's) statistics join this sketch where it lives
        mean_b = like(other.mean_, self.mean_)
        self._combine(
            other.n_samples_seen_,
            mean_b.copy() if isinstance(mean_b, np.ndarray) else mean_b,
            like(other._scatter, self._scatter),
        )
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = True  # PyTorch / CuPy / ... input under array_api_dispatch
        tags.input_tags.sparse = True
        return tags


_DOC_PARAMS = """
    Parameters
    ----------
    n_components : int or None, default=None
        Number of components ``k <= n_random_features``; None keeps all ``m``.
    n_random_features : int, default=100
        Number ``m`` of random Fourier features.
    kernel : {"gaussian", "laplacian", "cauchy"} or ShiftInvariantKernel, default="gaussian"
        Other kernels raise a ValueError (no spectral measure to sample).
    bandwidth : float or {"percentile", "median", "mean_sq"}, default="percentile"
    variant : {"cos", "paired"}, default="cos"
        Feature map of :class:`~kernelsketch.maps.RandomFourierFeatures`.
    orthogonal : bool, default=False
        Orthogonal random features (Gaussian kernel only).
    random_state : int, Generator or None
        Seeds the features (drawn once, at the first fit/partial_fit).
"""

_DOC_ATTRS = """
    Attributes
    ----------
    components_ : ndarray (k, m)
        Unit eigenvectors of the feature covariance, each with its
        largest-magnitude entry positive.
    eigenvalues_ : ndarray (k,)
        Eigenvalues of the centred scatter of the features (= eigenvalues of
        the centred approximate Gram ``H Z Z^T H``).
    explained_variance_ : ndarray (k,)
    explained_variance_ratio_ : ndarray (k,)
        Fraction of the trace of the covariance.
    mean_ : ndarray (m,)
        Mean feature vector.
    feature_map_ : RandomFourierFeatures
        The fitted map (frequencies, phases, seed).
    kernel_ : ShiftInvariantKernel
        The kernel with its resolved bandwidth.
    n_samples_seen_ : int
"""


class RFKPCA(_RandomFeaturePCA):
    __doc__ = (
        r"""Approximate kernel PCA with random features (RF-EKPCA, Sriperumbudur & Sterge).
"""
        + _DOC_PARAMS
        + _DOC_ATTRS
        + r"""
    Notes
    -----
    With ``z_i = z(x_i)`` the random Fourier features, the RF-EKPCA operator is
    the U-statistic centred covariance

    .. math:: \hat\Sigma_m = \frac{1}{2n(n-1)} \sum_{i \ne j} (z_i - z_j)(z_i - z_j)^T
              = \frac{1}{n-1} \sum_i (z_i - \bar z)(z_i - \bar z)^T,

    an unbiased estimator of the population covariance of ``z(X)``, and the
    components are its top-k eigenvectors; :attr:`explained_variance_` are its
    eigenvalues.  As ``m`` grows they converge to the eigenvalues of the
    U-statistic kernel covariance, i.e. exact
    ``KernelPCA(covariance="u_statistic").explained_variance_``, with an
    error of order ``m^{-1/2}`` (the paper shows ``m`` growing slower than
    ``n`` suffices for the same statistical rate as exact KPCA).  Cost:
    ``O(n m (d + m) + m^3)`` time, ``O(m^2 + d m)`` memory; X is read in row
    chunks sized from the working-memory budget.

    The scatter ``sum_i (z_i - zbar)(z_i - zbar)^T`` is accumulated with the
    pairwise update of Chan, Golub & LeVeque, so ``partial_fit`` over blocks,
    :meth:`merge` of sketches of parts of the data (also the Dask path) and
    ``fit`` give the same operator to rounding; a stream of ``partial_fit``
    calls resolves a heuristic bandwidth on its first block.  The
    U-statistic needs ``n >= 2``.

    References
    ----------
    B. Sriperumbudur, N. Sterge. Approximate kernel PCA using random features:
    computational vs. statistical trade-off. Annals of Statistics 50(5), 2022.
    A. Rahimi, B. Recht. Random features for large-scale kernel machines. NIPS 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.decomposition import RFKPCA
    >>> X = np.random.default_rng(0).normal(size=(300, 4))
    >>> est = RFKPCA(n_components=3, n_random_features=200, bandwidth=2.0, random_state=0).fit(X)
    >>> est.transform(X).shape
    (300, 3)
    """
    )

    _ddof = 1
    _min_samples = 2


class RNCA(_RandomFeaturePCA):
    __doc__ = (
        r"""Randomized nonlinear component analysis (Lopez-Paz et al.), streaming and mergeable.
"""
        + _DOC_PARAMS
        + _DOC_ATTRS
        + r"""
    Notes
    -----
    Linear PCA on the random Fourier features ``Z`` (n x m) with the empirical
    covariance ``C = (1/n) sum_i (z_i - zbar)(z_i - zbar)^T``.  ``partial_fit``
    accumulates the exact ``m x m`` centred scatter and the mean with the
    pairwise update of Chan, Golub & LeVeque
    (``S = S_a + S_b + n_a n_b / n (zbar_b - zbar_a)(zbar_b - zbar_a)^T``),
    which is the same as ``Z^T Z - n zbar zbar^T`` without its cancellation;
    :meth:`merge` applies the same formula to two sketches, so merged and
    one-pass results agree to rounding.  The eigendecomposition runs when
    components are first needed after new data.  ``fit`` is a loop of
    ``partial_fit`` over row chunks (heuristic bandwidths resolved on all of
    ``X``; a stream of ``partial_fit`` calls resolves them on its first
    block).

    Guarantee (Lopez-Paz et al.): ``E ||Z Z^T - K||_2 = O(n log n / m)``.
    Cost: ``O(n m (d + m))`` to accumulate, ``O(m^3)`` per eigendecomposition,
    ``O(m^2 + d m)`` memory, transform ``O(d m + m k)`` per point.

    References
    ----------
    D. Lopez-Paz, S. Sra, A. Smola, Z. Ghahramani, B. Schoelkopf. Randomized
    nonlinear component analysis. ICML 2014.
    M. Ghashami, D. Perry, J. M. Phillips. Streaming kernel principal
    component analysis. AISTATS 2016 (RNCA as a streaming baseline).
    T. F. Chan, G. H. Golub, R. J. LeVeque. Updating formulae and a pairwise
    algorithm for computing sample variances. 1979.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.decomposition import RNCA
    >>> X = np.random.default_rng(0).normal(size=(400, 4))
    >>> a = RNCA(n_components=2, n_random_features=64, bandwidth=2.0, random_state=0)
    >>> for block in np.array_split(X, 4):
    ...     a = a.partial_fit(block)
    >>> b = RNCA(n_components=2, n_random_features=64, bandwidth=2.0, random_state=0).fit(X)
    >>> bool(np.allclose(a.explained_variance_, b.explained_variance_))
    True
    """
    )

    _ddof = 0
