"""Exact kernel PCA on the (centred) Gram matrix."""

from __future__ import annotations

import numbers
from typing import Any, ClassVar, Self, cast

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils.validation import check_is_fitted

from .._typing import ArrayLike, BandwidthLike, FloatArray, KernelLike, KernelParams, RandomStateLike
from ..kernels.blocks import pairwise_kernel
from ..kernels.gram_operator import GramOperator
from ..kernels.kernel_functions import Kernel
from ..kernels.selection import KERNEL_CONSTRAINTS, KernelEstimatorMixin, make_kernel
from ..maps.landmarks import landmark_map
from ..utils.array_api import array_namespace, fitted_namespace, host_array, like_state, move_state_to, to_numpy
from ..utils.chunking import check_allocation
from ..utils.dispatch import maybe_dask_transform
from ..utils.eigen import canonical_eigenvectors, centered_gram, drop_noise_eigenpairs, top_eigenpairs
from ..utils.estimator_checks import Interval, StrOptions, output_dtype
from ..utils.validation import check_input, check_random_state, derive_seed

# Largest n for which the dense n x n Gram is formed by the "auto" solver
# (n^2 * 8 bytes = 2 GiB at n = 16384); above it the Gram stays an operator.
_DENSE_GRAM_MAX_N = 16384
_DENSE_EIGH_MAX_N = 1500


class KernelPCA(KernelEstimatorMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Exact kernel PCA (Schoelkopf, Smola & Mueller, 1998).

    Parameters
    ----------
    n_components : int or None
        Number of components; None keeps every component with a positive
        eigenvalue.
    kernel : str, Kernel, callable or "precomputed", default="gaussian"
        A kernel name (see the user guide's common parameters), a
        :class:`~kernelsketch.kernels.Kernel`, a callable or ``"precomputed"``.
        ``"precomputed"``: ``fit`` takes the ``n x n`` Gram matrix and
        ``transform`` the ``m x n`` kernel values between new points and the
        training points, as in scikit-learn.  A callable ``f(X, Y)`` returns
        the kernel block of two sets of rows.
    bandwidth : float or {"percentile", "median", "mean_sq"}, default="percentile"
        Bandwidth ``h`` of ``exp(-||x-y||^2 / h^2)`` (and of the other
        shift-invariant kernels), or the heuristic that sets it at fit time.
    gamma : float, optional
        scikit-learn's ``gamma``, in place of ``bandwidth`` (gaussian:
        ``h = 1 / sqrt(gamma)``; laplacian: ``h = 1 / gamma``; polynomial and
        sigmoid: their ``gamma``).
    kernel_params : dict, optional
        ``degree``, ``gamma``, ``coef0`` for the polynomial kernel, ``gamma``,
        ``coef0`` for the sigmoid kernel, keyword arguments of a callable.
    fit_inverse_transform : bool, default=False
        Also learn the pre-image map of :meth:`inverse_transform` (kernel ridge
        regression from the training embedding back to X, scikit-learn's method).
    alpha : float, default=1.0
        Ridge penalty of that regression.
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
    X_fit_ : ndarray or CSR (n, d), or None with ``kernel="precomputed"``
    dual_coef_ : ndarray (n, d)
        With ``fit_inverse_transform``: the ridge coefficients of the pre-image map.
    X_transformed_fit_ : ndarray (n, k)
        With ``fit_inverse_transform``: the training embedding the pre-image map reads.

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

    #: the fitted state ks.save writes (beyond the parameters, n_features_in_ and feature_names_in_);
    #: an attribute not listed here makes save fail, so nothing is silently lost
    #: the fitted arrays' shapes against each other, checked when a model file is loaded ("d": n_features_in_)
    _state_shapes: ClassVar[dict[str, tuple[str, ...]]] = {
        "X_fit_": ("n", "d"),
        "_fit_row_means": ("n",),
        "eigenvectors_": ("n", "k"),
        "eigenvalues_": ("k",),
        "explained_variance_": ("k",),
        "explained_variance_ratio_": ("k",),
    }
    _persistent_state: ClassVar[tuple[str, ...]] = (
        "X_fit_",
        "X_transformed_fit_",
        "_fit_dtype",
        "_fit_row_means",
        "_fit_total_mean",
        "_n_features_out",
        "_solver_used",
        "dual_coef_",
        "eigenvalues_",
        "eigenvectors_",
        "explained_variance_",
        "explained_variance_ratio_",
        "kernel_",
        "n_samples_fit_",
    )

    #: the parameters that set the output dimension and the approximation"s size (the CLI"s -d and -n)
    _dim_param: ClassVar[str | None] = "n_components"
    _size_param: ClassVar[str | None] = None

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left"), None],
        **KERNEL_CONSTRAINTS,
        "kernel": [StrOptions(set(KERNEL_CONSTRAINTS["kernel"][0].options) | {"precomputed"}), Kernel, callable],
        "fit_inverse_transform": ["boolean"],
        "alpha": [Interval(numbers.Real, 0, None, closed="neither")],
        "covariance": [StrOptions({"empirical", "u_statistic"})],
        "eigen_solver": [StrOptions({"auto", "dense", "arpack", "randomized", "operator"})],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "eigenvalue_tol": [Interval(numbers.Real, 0, 1, closed="left")],
    }

    def __init__(
        self,
        n_components: int | None = None,
        *,
        kernel: KernelLike = "gaussian",
        bandwidth: BandwidthLike = "percentile",
        gamma: float | None = None,
        kernel_params: KernelParams = None,
        covariance: str = "empirical",
        eigen_solver: str = "auto",
        tol: float = 0.0,
        max_iter: int | None = None,
        eigenvalue_tol: float = 1e-10,
        fit_inverse_transform: bool = False,
        alpha: float = 1.0,
        random_state: RandomStateLike = None,
    ) -> None:
        self.n_components = n_components
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.gamma = gamma
        self.kernel_params = kernel_params
        self.covariance = covariance
        self.eigen_solver = eigen_solver
        self.tol = tol
        self.max_iter = max_iter
        self.eigenvalue_tol = eigenvalue_tol
        self.fit_inverse_transform = fit_inverse_transform
        self.alpha = alpha
        self.random_state = random_state

    def _choose_solver(self, n, k):
        if self.eigen_solver != "auto":
            return self.eigen_solver
        if n <= _DENSE_EIGH_MAX_N or k >= n // 4:
            return "dense"
        return "arpack" if n <= _DENSE_GRAM_MAX_N else "operator"

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Fit on X (n_samples >= 2). Returns self."""
        # copy=True: X_fit_ is ours, as in scikit-learn (the caller may reuse its array after fit)
        precomputed = isinstance(self.kernel, str) and self.kernel == "precomputed"
        on_device = None if precomputed else array_namespace(X)  # a PyTorch / CuPy / ... array
        X_device = X
        X = check_input(
            X, accept_sparse=not precomputed and ("csr",), ensure_min_samples=2, estimator=self, reset=True, copy=True
        )
        n = X.shape[0]
        rng = check_random_state(self.random_state)
        if precomputed:
            if X.shape[1] != n:
                raise ValueError(f"kernel='precomputed' needs the square n x n Gram matrix; got shape {X.shape}")
            if self.fit_inverse_transform:
                raise ValueError("fit_inverse_transform needs the kernel itself, not kernel='precomputed'")
            self.kernel_ = None
        else:
            self.kernel_ = make_kernel(
                self.kernel, self.bandwidth, self.kernel_params, X, random_state=derive_seed(rng), gamma=self.gamma
            )
        k_req = self.n_components
        if k_req is not None and k_req > n:
            raise ValueError(f"n_components={k_req} must be <= n_samples={n}")
        solver, k = self._solver_and_rank(n, k_req, precomputed, on_device)
        A, w, V, kmax, trace = self._centred_gram(X, X_device, solver, k, precomputed, on_device)
        if on_device is None or solver != "dense":
            w, V = top_eigenpairs(A, k, solver, rng, tol=self.tol, max_iter=self.max_iter)
        w, V = drop_noise_eigenpairs(
            w,
            V,
            n=n,
            kmax=kmax,
            eigenvalue_tol=self.eigenvalue_tol,
            requested=k_req,
            owner="KernelPCA",
            what="centred Gram matrix",
        )
        self.eigenvalues_ = w
        self.eigenvectors_ = canonical_eigenvectors(w, V)
        denom = n - 1 if self.covariance == "u_statistic" else n
        self.explained_variance_ = w / denom
        self.explained_variance_ratio_ = w / trace if trace > 0 else np.zeros_like(w)
        self.X_fit_ = None if precomputed else X
        self._fit_dtype = np.dtype(output_dtype(X))
        self.n_samples_fit_ = n
        self._n_features_out = len(w)
        if self.fit_inverse_transform:
            self._fit_preimage_map(X)
        self._solver_used = solver
        if on_device is not None:  # the model lives on the device of the data it was fitted on
            move_state_to(self, *on_device)
        return self

    def _solver_and_rank(self, n, k_req, precomputed, on_device):
        """The eigensolver and the number of pairs to compute; refuses a Gram matrix that cannot fit."""
        solver = self._choose_solver(n, k_req or n)
        if k_req is None:
            solver, k = "dense", n
        else:
            k = k_req
        if solver in ("arpack", "operator") and k >= n:
            solver = "dense"
        if precomputed and solver == "operator":
            solver = "arpack"  # the Gram is given: nothing to recompute
        if not precomputed and solver != "operator" and on_device is None:
            # the formed Gram (n x n float64) and, for "dense" without n_components, as many eigenvectors
            copies = 2 if solver == "dense" and k == n else 1
            check_allocation(
                8.0 * n * n * copies,
                f"KernelPCA(eigen_solver={solver!r}) forms the {n} x {n} Gram matrix and",
                "use eigen_solver='operator' (Lanczos on the Gram operator: O(chunk x n) memory, "
                "recomputing kernel blocks) with a small n_components, or an approximation that "
                "never forms it (SubsampleKPCA, Nystroem, RFKPCA)",
            )
        if on_device is not None and solver in ("dense", "arpack"):
            from ..kernels.array_api import check_device_allocation

            check_device_allocation(
                8.0 * n * n * (2 if solver == "dense" else 1),
                *on_device,
                f"KernelPCA(eigen_solver={solver!r}) forms the {n} x {n} Gram matrix:",
                "use eigen_solver='operator' (Lanczos, the Gram's blocks recomputed on the device)",
            )
        return solver, k

    def _centred_gram(self, X, X_device, solver, k, precomputed, on_device):
        """The centred Gram (a matrix, operator or device matrix) ``A`` -- or, for the dense device path, its top
        ``k`` pairs ``w, V`` -- with the largest ``|K_ij|`` and the trace; sets the centring means."""
        kern = self.kernel_
        A = w = V = None
        if precomputed:
            K = np.array(X, dtype=np.float64)
            kmax = float(np.max(np.abs(np.diag(K))))
            A, self._fit_row_means, self._fit_total_mean = centered_gram(K)
            trace = float(np.trace(A))
        elif on_device is not None and solver == "arpack":
            # Lanczos on the host, every product with the centred Gram formed on the device
            kmax = float(np.max(np.abs(kern.diag(X))))
            Ad, r, self._fit_total_mean = _centred_gram_on_device(X_device, kern, *on_device)
            self._fit_row_means = to_numpy(r, on_device[0])
            trace = float(on_device[0].sum(on_device[0].linalg.diagonal(Ad)))
            A = _DeviceMatrix(Ad, on_device[0])
        elif solver == "operator":
            # (device input: the operator's blocks on the device, its products for ARPACK on the host)
            A = GramOperator(X if on_device is None else X_device, self.kernel_, centered=True)
            self._fit_row_means = np.asarray(A._row_means, dtype=np.float64)
            self._fit_total_mean = A._total_mean
            trace = A.trace()
            # PSD kernel: max |K_ij| = max K_ii
            kmax = float(np.max(np.abs(kern.diag(X))))
        elif on_device is not None and solver == "dense":
            # the Gram, its centring and eigh on the device; the top k pairs come to the host
            kmax = float(np.max(np.abs(kern.diag(X))))
            w, V, self._fit_row_means, self._fit_total_mean, trace = _dense_eigh_on_device(
                X_device, kern, k, *on_device
            )
        else:
            K = pairwise_kernel(X, kernel=self.kernel_).astype(np.float64, copy=False)
            # PSD kernel: max |K_ij| = max K_ii (O(n), no n x n temporary)
            kmax = float(np.max(np.abs(kern.diag(X))))
            A, self._fit_row_means, self._fit_total_mean = centered_gram(K)
            trace = float(np.trace(A))
        return A, w, V, kmax, trace

    def fit_transform(self, X: ArrayLike, y: object = None) -> FloatArray:
        """Fit, then return the training embedding ``V sqrt(lambda)``."""
        self.fit(X)
        w, V = host_array(self.eigenvalues_), host_array(self.eigenvectors_)
        Z = (V * np.sqrt(w)).astype(self._fit_dtype, copy=False)
        return like_state(self, Z)  # a device-fitted model answers on its device

    def transform(self, X: ArrayLike) -> FloatArray:
        """Embed new points with training-mean centring."""
        if (Z := maybe_dask_transform(self, X)) is not None:  # a dask array: map over its blocks
            return Z
        check_is_fitted(self)
        precomputed = self.X_fit_ is None
        if not precomputed and (ns := fitted_namespace(self, X, "transform")) is not None:
            # a PyTorch / CuPy / ... array: the same landmark map, on its device
            from ..kernels.array_api import landmark_map_xp, to_device

            L, Pd, off = to_device((self.X_fit_, *self._centred_map()), *ns)
            return landmark_map_xp(X, L, self.kernel_, Pd, off, ns[0])
        X = check_input(X, accept_sparse=not precomputed and ("csr",), estimator=self, reset=False)
        if precomputed:
            proj = host_array(self.eigenvectors_) / np.sqrt(host_array(self.eigenvalues_))
            # centre the given kernel values: k(x, x_i) - mean_j k(x, x_j) - mean_j k(x_i, x_j) + mean(K)
            Kb = np.asarray(X, dtype=np.float64)
            out = Kb @ proj
            out -= (Kb.mean(axis=1) - self._fit_total_mean)[:, None] * proj.sum(axis=0)[None, :]
            out -= (self._fit_row_means @ proj)[None, :]
            return out.astype(output_dtype(X), copy=False)
        X64 = X.astype(np.float64) if X.dtype != np.float64 else X
        out = landmark_map(X64, host_array(self.X_fit_), self.kernel_, *self._centred_map())
        return out.astype(output_dtype(X), copy=False)

    def _centred_map(self):
        """``(P, offset)`` with ``k_c(x)^T proj = k(x)^T P + offset``: the shared landmark map's form.

        With ``P = H proj`` (columns summing to zero; the centred eigenvectors do up to rounding)
        the row-mean term of the centring vanishes, so ``k_c(x)^T proj = k(x)^T P - r^T P`` with
        ``r`` the training Gram's row means -- one fused kernel-times-projection pass, no block of
        ``K(X, X_fit)`` held.
        """
        proj = host_array(self.eigenvectors_) / np.sqrt(host_array(self.eigenvalues_))
        P = proj - proj.mean(axis=0)
        return P, -(host_array(self._fit_row_means) @ P)

    def _fit_preimage_map(self, X):
        """Kernel ridge regression from the training embedding to X (scikit-learn's ``_fit_inverse_transform``)."""
        import scipy.linalg

        Z = self.eigenvectors_ * np.sqrt(self.eigenvalues_)
        K = pairwise_kernel(Z, kernel=self.kernel_).astype(np.float64, copy=True)
        K.flat[:: K.shape[0] + 1] += self.alpha
        target = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        try:
            self.dual_coef_ = scipy.linalg.solve(K, target, assume_a="pos", check_finite=False)
        except np.linalg.LinAlgError:  # an indefinite kernel (sigmoid): a symmetric solve of the same system
            self.dual_coef_ = scipy.linalg.solve(K, target, assume_a="sym", check_finite=False)
        self.X_transformed_fit_ = Z

    def inverse_transform(self, X: ArrayLike) -> FloatArray:
        """Approximate pre-images of embedded points (needs ``fit_inverse_transform=True``).

        ``K(X, X_transformed_fit_) @ dual_coef_``: kernel ridge regression,
        learned at fit, from the embedding back to the input space (the same
        kernel, applied to embeddings).  As in scikit-learn, it is an
        approximation: the embedding forgets what its components do not span.
        """
        check_is_fitted(self)
        if not hasattr(self, "dual_coef_"):
            raise ValueError("inverse_transform needs a KernelPCA fitted with fit_inverse_transform=True")
        if (ns := fitted_namespace(self, X, "inverse_transform")) is not None:  # on the model's device
            from ..kernels.array_api import pairwise_kernel_xp

            Z, Xd = self.X_transformed_fit_, cast(Any, X)
            if Xd.ndim != 2 or Xd.shape[1] != Z.shape[1]:
                raise ValueError(f"X has shape {tuple(Xd.shape)}; the embedding has {Z.shape[1]} components")
            K = pairwise_kernel_xp(self.kernel_, ns[0].astype(Xd, ns[0].float64), Z, *ns)
            return K @ self.dual_coef_
        X = check_input(X, name="X")
        Zfit = host_array(self.X_transformed_fit_)
        k = Zfit.shape[1]
        if X.shape[1] != k:
            raise ValueError(f"X has {X.shape[1]} columns; the embedding has {k} components")
        K = pairwise_kernel(X, Zfit, kernel=self.kernel_).astype(np.float64, copy=False)
        return K @ host_array(self.dual_coef_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = True  # PyTorch / CuPy / ... input under array_api_dispatch
        tags.input_tags.sparse = self.kernel != "precomputed" if isinstance(self.kernel, str) else True
        tags.input_tags.pairwise = isinstance(self.kernel, str) and self.kernel == "precomputed"
        return tags


class _DeviceMatrix(LinearOperator):
    """A formed symmetric matrix on a device as a LinearOperator: host vectors in and out (ARPACK's view)."""

    def __init__(self, A, xp):
        self._A, self._xp = A, xp
        super().__init__(dtype=np.float64, shape=tuple(A.shape))

    def _matmat(self, V):
        V = np.asarray(V, dtype=np.float64)
        V = V[:, None] if V.ndim == 1 else V
        return to_numpy(self._A @ self._xp.asarray(np.ascontiguousarray(V), device=self._A.device), self._xp)

    def _matvec(self, v):
        return self._matmat(np.asarray(v).reshape(-1, 1)).ravel()

    def _adjoint(self):
        return self


def _centred_gram_on_device(X, kern, xp, device):
    """``(H K H, row means of K, their mean)`` formed on ``X``'s device, in float64."""
    from ..kernels.array_api import pairwise_kernel_xp

    K = pairwise_kernel_xp(kern, xp.astype(X, xp.float64), None, xp, device)
    r = xp.mean(K, axis=1)
    total = xp.mean(r)
    return K - r[:, None] - r[None, :] + total, r, float(total)


def _dense_eigh_on_device(X, kern, k, xp, device):
    """Top-``k`` eigenpairs of the centred Gram of ``X``, formed and diagonalised on ``X``'s device.

    Returns host arrays ``(w descending, V, row_means, total_mean, trace)``: the same quantities
    as the host route (:func:`~kernelsketch.utils.eigen.centered_gram`, then a dense ``eigh``).
    """
    A, r, total = _centred_gram_on_device(X, kern, xp, device)
    trace = float(xp.sum(xp.linalg.diagonal(A)))
    w, V = xp.linalg.eigh(A)  # ascending
    n = A.shape[0]
    del A
    top = xp.flip(w[n - k :], axis=0)
    Vt = xp.flip(V[:, n - k :], axis=1)
    return to_numpy(top, xp), to_numpy(Vt, xp), to_numpy(r, xp), total, trace
