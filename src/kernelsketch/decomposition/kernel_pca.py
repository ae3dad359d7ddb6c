"""Exact kernel PCA on the (centred) Gram matrix."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils.validation import check_is_fitted

from ..kernels.blocks import kernel_blocks, pairwise_kernel
from ..kernels.gram_operator import GramOperator
from ..kernels.selection import make_kernel
from ..utils.estimator_checks import KERNEL_CONSTRAINTS, Interval, StrOptions, output_dtype
from ..utils.eigen import canonical_eigenvectors, centered_gram, drop_noise_eigenpairs, top_eigenpairs
from ..utils.validation import check_input, check_random_state, derive_seed
from ..utils.dispatch import maybe_dask_transform

# Largest n for which the dense n x n Gram is formed by the "auto" solver
# (n^2 * 8 bytes = 2 GiB at n = 16384); above it the Gram stays an operator.
_DENSE_GRAM_MAX_N = 16384
_DENSE_EIGH_MAX_N = 1500


class KernelPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Exact kernel PCA (Schoelkopf, Smola & Mueller, 1998).

    Parameters
    ----------
    n_components : int or None
        Number of components; None keeps every component with a positive
        eigenvalue.
    kernel : str or Kernel, default="gaussian"
    bandwidth : float or {"percentile", "median", "mean_sq"}, default="percentile"
        Bandwidth ``h`` of ``exp(-||x-y||^2 / h^2)`` (and of the other
        shift-invariant kernels), or the heuristic that sets it at fit time.
    kernel_params : dict, optional
        ``degree``, ``gamma``, ``coef0`` for the polynomial kernel.
    covariance : {"empirical", "u_statistic"}, default="empirical"
        How :attr:`explained_variance_` scales the centred Gram eigenvalues:
        ``lambda / n`` (the empirical covariance operator) or
        ``lambda / (n - 1)`` (the unbiased U-statistic covariance of
        Sriperumbudur & Sterge, Proposition 1).  Embeddings do not change.
    eigen_solver : {"auto", "dense", "arpack", "randomized", "operator"}
        ``dense``: LAPACK ``eigh`` on the formed Gram; ``arpack``: Lanczos on
        the formed Gram; ``randomized``: randomized SVD of the formed Gram;
        ``operator``: Lanczos on :class:`GramOperator` (the Gram is never
        formed: O(chunk * n) memory, each product recomputes kernel blocks).
        ``auto`` picks dense for n <= 1500 or many components, arpack up to
        n = 16384, operator beyond.
    tol : float, default=0
        ARPACK tolerance (0 = machine precision).
    max_iter : int, optional
        ARPACK iteration cap.
    eigenvalue_tol : float, default=1e-10
        Components whose eigenvalue is below ``eigenvalue_tol * lambda_max``,
        or below the rounding-noise level ``10 n eps max|K_ij|`` of the centred
        Gram, are dropped (with a warning if ``n_components`` asked for them);
        if none is left, fit raises a ValueError.
    random_state : int, Generator or None
        Seeds the ARPACK start vector, randomized SVD, and bandwidth heuristics.

    Attributes
    ----------
    eigenvalues_ : ndarray (k,)
        Eigenvalues of the centred Gram ``H K H`` (scikit-learn's convention).
    eigenvectors_ : ndarray (n, k)
        Unit eigenvectors; each column's largest-magnitude entry is positive.
    explained_variance_ : ndarray (k,)
    explained_variance_ratio_ : ndarray (k,)
        Fraction of ``tr(H K H)``.
    kernel_ : Kernel
        The kernel with its resolved bandwidth.
    X_fit_ : ndarray or CSR (n, d)

    Notes
    -----
    With ``H K H = V diag(lambda) V^T``, the training embedding is
    ``V diag(sqrt(lambda))`` and a new point ``x`` maps to
    ``k_c(x)^T V diag(lambda^{-1/2})`` where ``k_c(x)_i = k(x, x_i) -
    mean_j k(x, x_j) - mean_j k(x_i, x_j) + mean_{jl} k(x_j, x_l)`` (centring
    in feature space with the training mean).  Cost: O(n^2 d) for the Gram,
    O(n^3) for a dense ``eigh`` or O(n^2 k) per Lanczos restart; transform is
    O(n d + n k) per point.

    References
    ----------
    B. Schoelkopf, A. Smola, K.-R. Mueller. Nonlinear component analysis as a
    kernel eigenvalue problem. Neural Computation 10(5), 1998.
    B. Sriperumbudur, N. Sterge. Approximate kernel PCA using random features:
    computational vs. statistical trade-off. Annals of Statistics, 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch import KernelPCA
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> Z = KernelPCA(n_components=2, bandwidth=2.0).fit_transform(X)
    >>> Z.shape
    (200, 2)
    """

    _parameter_constraints = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left"), None],
        **KERNEL_CONSTRAINTS,
        "covariance": [StrOptions({"empirical", "u_statistic"})],
        "eigen_solver": [StrOptions({"auto", "dense", "arpack", "randomized", "operator"})],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "eigenvalue_tol": [Interval(numbers.Real, 0, 1, closed="left")],
    }

    def __init__(self, n_components=None, *, kernel="gaussian", bandwidth="percentile", kernel_params=None,
                 covariance="empirical", eigen_solver="auto", tol=0.0, max_iter=None, eigenvalue_tol=1e-10,
                 random_state=None):
        self.n_components = n_components
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.kernel_params = kernel_params
        self.covariance = covariance
        self.eigen_solver = eigen_solver
        self.tol = tol
        self.max_iter = max_iter
        self.eigenvalue_tol = eigenvalue_tol
        self.random_state = random_state

    def _choose_solver(self, n, k):
        if self.eigen_solver != "auto":
            return self.eigen_solver
        if n <= _DENSE_EIGH_MAX_N or k >= n // 4:
            return "dense"
        return "arpack" if n <= _DENSE_GRAM_MAX_N else "operator"

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit on X (n_samples >= 2). Returns self."""
        # copy=True: X_fit_ is ours, as in scikit-learn (the caller may reuse its array after fit)
        X = check_input(X, accept_sparse=("csr",), ensure_min_samples=2, estimator=self, reset=True, copy=True)
        n = X.shape[0]
        rng = check_random_state(self.random_state)
        self.kernel_ = make_kernel(self.kernel, self.bandwidth, self.kernel_params, X,
                                   random_state=derive_seed(rng))
        k_req = self.n_components
        if k_req is not None and k_req > n:
            raise ValueError(f"n_components={k_req} must be <= n_samples={n}")
        solver = self._choose_solver(n, k_req or n)
        if k_req is None:
            solver, k = "dense", n
        else:
            k = k_req
        if solver in ("arpack", "operator") and k >= n:
            solver = "dense"
        if solver == "operator":
            A = GramOperator(X, self.kernel_, centered=True)
            self._fit_row_means = np.asarray(A._row_means, dtype=np.float64)
            self._fit_total_mean = A._total_mean
            trace = A.trace()
            # PSD kernel: max |K_ij| = max K_ii
            kmax = float(np.max(np.abs(self.kernel_.diag(X))))
        else:
            K = pairwise_kernel(X, kernel=self.kernel_).astype(np.float64, copy=False)
            # PSD kernel: max |K_ij| = max K_ii (O(n), no n x n temporary)
            kmax = float(np.max(np.abs(self.kernel_.diag(X))))
            A, self._fit_row_means, self._fit_total_mean = centered_gram(K)
            trace = float(np.trace(A))
        w, V = top_eigenpairs(A, k, solver, rng, tol=self.tol, max_iter=self.max_iter)
        w, V = drop_noise_eigenpairs(w, V, n=n, kmax=kmax, eigenvalue_tol=self.eigenvalue_tol,
                                     requested=k_req, owner="KernelPCA", what="centred Gram matrix")
        self.eigenvalues_ = w
        self.eigenvectors_ = canonical_eigenvectors(w, V)
        denom = n - 1 if self.covariance == "u_statistic" else n
        self.explained_variance_ = w / denom
        self.explained_variance_ratio_ = w / trace if trace > 0 else np.zeros_like(w)
        self.X_fit_ = X
        self.n_samples_fit_ = n
        self._n_features_out = len(w)
        self._solver_used = solver
        return self

    def fit_transform(self, X, y=None):
        """Fit, then return the training embedding ``V sqrt(lambda)``."""
        self.fit(X)
        Z = self.eigenvectors_ * np.sqrt(self.eigenvalues_)
        return Z.astype(output_dtype(self.X_fit_), copy=False)

    def transform(self, X):
        """Embed new points with training-mean centring."""
        if (Z := maybe_dask_transform(self, X)) is not None:  # a dask array: map over its blocks
            return Z
        check_is_fitted(self)
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=False)
        proj = self.eigenvectors_ / np.sqrt(self.eigenvalues_)
        out = np.empty((X.shape[0], proj.shape[1]), dtype=np.float64)
        for rows, Kb in kernel_blocks(X, self.X_fit_, self.kernel_, validate=False):
            Kb = Kb.astype(np.float64, copy=False)
            # centre: k(x, x_i) - mean_j k(x, x_j) - mean_j k(x_i, x_j) + mean(K)
            shift = Kb.mean(axis=1)
            out[rows] = Kb @ proj
            out[rows] -= (shift - self._fit_total_mean)[:, None] * proj.sum(axis=0)[None, :]
            out[rows] -= (self._fit_row_means @ proj)[None, :]
        return out.astype(output_dtype(X), copy=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
