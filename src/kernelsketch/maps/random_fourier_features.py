"""Random Fourier features (Rahimi & Recht, 2007) for shift-invariant kernels."""

from __future__ import annotations

import numbers
from typing import Any, ClassVar, Self

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils.validation import check_is_fitted

from .._typing import ArrayLike, BandwidthLike, FloatArray, KernelLike, RandomStateLike
from ..kernels.kernel_functions import KERNELS, SHIFT_INVARIANT, GaussianKernel, Kernel, ShiftInvariantKernel
from ..kernels.selection import FEATURE_KERNEL_CONSTRAINT, KERNEL_CONSTRAINTS, KernelEstimatorMixin, make_kernel
from ..kernels.tiled_gemm import gemm_map
from ..utils.array_api import array_namespace, fitted_namespace, host_array, move_state_to
from ..utils.chunking import gen_row_slices, get_chunk_n_rows
from ..utils.dispatch import maybe_dask_transform
from ..utils.estimator_checks import Interval, StrOptions, output_dtype
from ..utils.validation import check_input, check_input_xp, derive_seed
from .fast_cosine import fast_cos_sin, shifted_cos_tiles

VARIANTS = ("cos", "paired")


def check_shift_invariant(kernel, owner):
    """Raise a ValueError naming the problem unless ``kernel`` has a spectral measure."""
    if isinstance(kernel, Kernel):
        if not isinstance(kernel, ShiftInvariantKernel):
            raise ValueError(
                f"{owner} needs a shift-invariant kernel (gaussian, laplacian, cauchy) to sample random "
                f"Fourier features from; got {kernel!r}"
            )
        return
    if isinstance(kernel, str):
        cls = KERNELS.get(kernel.lower())
        if cls is not None and not issubclass(cls, ShiftInvariantKernel):
            raise ValueError(
                f"{owner} needs a shift-invariant kernel, one of {SHIFT_INVARIANT}; kernel={kernel!r} has no "
                "spectral measure to sample random Fourier features from"
            )


def sample_random_features(kernel, n_features, n_random_features, *, variant="cos", orthogonal=False, seed=0):
    """Draw the frequencies ``W`` (d, m or m/2) and phases ``b`` (m,) or None.

    Depends only on the arguments (never on data), so estimators that draw
    at their first ``partial_fit`` get the same map on every machine.

    Parameters
    ----------
    kernel : ShiftInvariantKernel
    n_features : int
        Input dimension d.
    n_random_features : int
        Output dimension m (even for ``variant="paired"``).
    variant : {"cos", "paired"}
    orthogonal : bool
        Orthogonal random features (Gaussian kernel only).
    seed : int

    Returns
    -------
    W : ndarray (d, n_freq), float64
    b : ndarray (m,) float64, or None for the paired variant
    """
    rng = np.random.default_rng(seed)
    n_freq = n_random_features // 2 if variant == "paired" else n_random_features
    if orthogonal:
        W = _orthogonal_frequencies(kernel, rng, n_features, n_freq)
    else:
        W = np.asarray(kernel.sample_frequencies(rng, n_features, n_freq), dtype=np.float64)
    b = None if variant == "paired" else rng.uniform(0.0, 2.0 * np.pi, n_random_features)
    return W, b


def _orthogonal_frequencies(kernel, rng, d, n_freq):
    """Orthogonal random features (Yu et al., 2016): W = [Q_1 S_1, Q_2 S_2, ...].

    Each d x d block has Haar-orthogonal directions (QR of a Gaussian matrix,
    sign-corrected) and lengths drawn from the radial law of the spectral
    measure (the norms of d i.i.d. draws of ``kernel.sample_frequencies``),
    so every column keeps the marginal law N(0, 2/h^2 I) while columns within
    a block are exactly orthogonal.
    """
    blocks = []
    for _ in range(-(-n_freq // d)):
        G = rng.standard_normal((d, d))
        Q, R = np.linalg.qr(G)
        Q *= np.sign(np.diag(R))[None, :]  # Haar measure needs the sign fix
        lengths = np.linalg.norm(kernel.sample_frequencies(rng, d, d), axis=0)
        blocks.append(Q * lengths[None, :])
    return np.ascontiguousarray(np.hstack(blocks)[:, :n_freq])


def rff_transform(X, W, b, scale, out=None):
    """``scale * cos(X W + b)`` (or ``scale * [cos(X W), sin(X W)]`` when ``b`` is None).

    The hot path (dense rows, the ``cos`` variant): the BLAS product and the
    offset, cosine and scale fused tile by tile on every core
    (:func:`~kernelsketch.kernels.tiled_gemm.gemm_map` with
    :func:`~kernelsketch.maps.fast_cosine.shifted_cos_tiles`), so each feature
    is written to memory once.  Otherwise one BLAS product per row chunk written
    straight into the output rows, then the offset, cosine and scale applied in
    place (:func:`~kernelsketch.maps.fast_cosine.fast_cos_sin`).
    X must be validated (float32/float64 dense or CSR); the output has X's
    dtype.
    """
    dtype = output_dtype(X)
    n = X.shape[0]
    n_freq = W.shape[1]
    m = n_freq if b is not None else 2 * n_freq
    if out is None:
        out = np.empty((n, m), dtype=dtype)
    Wd = W.astype(dtype, copy=False)
    bd = None if b is None else b.astype(dtype, copy=False)
    # Dense input: the GEMM writes into the output rows, so no temporary grows
    # with the rows (only the fixed cache tiles of fast_cos_sin).  CSR input:
    # scipy returns the product as a new (rows x n_freq) array, and the paired
    # variant needs the (rows x n_freq) arguments kept until both halves are
    # written: itemsize * n_freq bytes per row of temporaries.
    sparse = sp.issparse(X)
    if not sparse and b is not None and X.dtype == dtype:
        tile_cos = shifted_cos_tiles(bd, scale, dtype, n * m)
        if tile_cos is not None:  # GEMM and cosine tile by tile in cache: the features written to memory once
            return gemm_map(X, Wd, func=tile_cos, out=out)
    need_tmp = sparse or b is None
    row_bytes = np.dtype(dtype).itemsize * n_freq if need_tmp else 0
    chunk = get_chunk_n_rows(row_bytes, n) if need_tmp else max(n, 1)
    for rows in gen_row_slices(n, chunk):
        Xc = X[rows]
        if b is not None:
            block = out[rows]
            if sparse:
                block[...] = Xc @ Wd
            else:
                np.matmul(Xc, Wd, out=block)
            fast_cos_sin(block, cos_out=block, shift=bd, scale=scale)
        else:
            T = np.asarray(Xc @ Wd) if sparse else np.matmul(Xc, Wd)
            T = np.ascontiguousarray(T, dtype=dtype)
            fast_cos_sin(T, cos_out=None, sin_out=out[rows, n_freq:], scale=scale)
            fast_cos_sin(T, cos_out=T, scale=scale)
            out[rows, :n_freq] = T
    return out


class RandomFourierFeatures(KernelEstimatorMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Random Fourier features: an explicit map with ``z(x)^T z(y) ~= k(x, y)``.

    Parameters
    ----------
    n_random_features : int, default=100
        Output dimension ``m`` (even for ``variant="paired"``).
    kernel : {"gaussian", "laplacian", "cauchy"} or ShiftInvariantKernel, default="gaussian"
        Any other kernel raises a ValueError: only shift-invariant kernels
        have the spectral measure the frequencies are drawn from.
    bandwidth : float or {"percentile", "median", "mean_sq"}, default="percentile"
        ``h`` of the kernel (see :mod:`kernelsketch.kernels.kernel_functions`),
        or the heuristic that sets it from the data at fit time.
    variant : {"cos", "paired"}, default="cos"
        ``"cos"``: ``z(x) = sqrt(2/m) cos(W^T x + b)``, ``b ~ U[0, 2 pi)``.
        ``"paired"``: ``z(x) = sqrt(2/m) [cos(W^T x), sin(W^T x)]`` with
        ``m/2`` frequencies: lower variance for the same ``m``.
    orthogonal : bool, default=False
        Orthogonal random features (Yu et al., 2016): frequencies orthogonal
        within blocks of ``d``; lower variance for the Gaussian kernel (the only
        kernel allowed with it: the others' spectral measures are not
        rotation invariant).
    random_state : int, Generator or None
        Seeds the frequencies, the phases and the bandwidth heuristic.

    Attributes
    ----------
    kernel_ : ShiftInvariantKernel
        The kernel with its resolved bandwidth.
    random_weights_ : ndarray of shape (d, m) or (d, m / 2), d = ``n_features_in_``
        Frequencies ``W``, float64.
    random_offset_ : ndarray (m,) or None
        Phases ``b`` (None for the paired variant).
    seed_ : int
        The integer seed the map was drawn from (two maps are equal iff the
        seeds, kernels, dimensions and variants are).
    n_features_in_ : int

    Notes
    -----
    Bochner: ``k(x - y) = E_w[cos(w^T (x - y))]`` for ``w`` from the kernel's
    spectral measure, and ``E_b[2 cos(w^T x + b) cos(w^T y + b)] =
    cos(w^T (x - y))``; so ``z(x)^T z(y)`` is an unbiased estimate of
    ``k(x, y)`` whose error is ``O_P(m^{-1/2})`` for each pair (each term is
    bounded by ``2/m``; Hoeffding).  The paired variant averages
    ``cos(w^T (x - y))`` directly (no phase noise).  Cost: one GEMM
    ``O(n d m)`` plus ``O(n m)`` cosines per transform; memory ``O(d m)``.

    The float64 cosine runs through a vectorised Cody-Waite range reduction
    and a degree-8 polynomial (:mod:`kernelsketch.maps.fast_cosine`), with
    error <= 4e-16 against ``np.cos`` (its speed: ``benchmarks/results/rff-intel-host.md``).  float32
    input stays float32 (GEMM and ``np.cos`` in float32): its arguments then
    carry an absolute error of about ``1e-7 |W^T x + b|``.

    References
    ----------
    A. Rahimi, B. Recht. Random features for large-scale kernel machines.
    NIPS 2007.
    F. X. Yu, A. T. Suresh, K. Choromanski, D. Holtmann-Rice, S. Kumar.
    Orthogonal random features. NIPS 2016.
    B. Sriperumbudur, N. Sterge. Approximate kernel PCA using random features:
    computational vs. statistical trade-off. Annals of Statistics, 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.maps import RandomFourierFeatures
    >>> X = np.random.default_rng(0).normal(size=(5, 3))
    >>> rff = RandomFourierFeatures(n_random_features=20000, bandwidth=2.0, random_state=0).fit(X)
    >>> Z = rff.transform(X)
    >>> K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 4.0)
    >>> bool(np.abs(Z @ Z.T - K).max() < 0.05)
    True
    """

    #: the fitted state ks.save writes (beyond the parameters, n_features_in_ and feature_names_in_);
    #: an attribute not listed here makes save fail, so nothing is silently lost
    _persistent_state: ClassVar[tuple[str, ...]] = (
        "_n_features_out",
        "kernel_",
        "random_offset_",
        "random_weights_",
        "seed_",
    )

    #: how the out-of-core driver (files, Dask) fits it: only the bandwidth looks at the data
    _fit_strategy: ClassVar[str] = "random_features"
    #: the parameters that set the output dimension and the approximation"s size (the CLI"s -d and -n)
    _dim_param: ClassVar[str | None] = "n_random_features"
    _size_param: ClassVar[str | None] = "n_random_features"  # -n and -d: the output is the features

    _parameter_constraints: ClassVar[dict] = {
        "n_random_features": [Interval(numbers.Integral, 1, None, closed="left")],
        "kernel": FEATURE_KERNEL_CONSTRAINT,
        "bandwidth": KERNEL_CONSTRAINTS["bandwidth"],
        "gamma": KERNEL_CONSTRAINTS["gamma"],
        "variant": [StrOptions(set(VARIANTS))],
        "orthogonal": ["boolean"],
        "random_state": KERNEL_CONSTRAINTS["random_state"],
    }

    def __init__(
        self,
        n_random_features: int = 100,
        *,
        kernel: KernelLike = "gaussian",
        bandwidth: BandwidthLike = "percentile",
        gamma: float | None = None,
        variant: str = "cos",
        orthogonal: bool = False,
        random_state: RandomStateLike = None,
    ) -> None:
        self.n_random_features = n_random_features
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.gamma = gamma
        self.variant = variant
        self.orthogonal = orthogonal
        self.random_state = random_state

    def _check_feature_params(self, owner=None):
        owner = owner or type(self).__name__
        check_shift_invariant(self.kernel, owner)
        if self.variant == "paired" and self.n_random_features % 2:
            raise ValueError(
                f"variant='paired' needs an even n_random_features (m/2 frequencies give m features); "
                f"got {self.n_random_features}"
            )
        if self.orthogonal:
            is_gauss = isinstance(self.kernel, GaussianKernel) or (
                isinstance(self.kernel, str) and self.kernel.lower() in ("gaussian", "rbf")
            )
            if not is_gauss:
                raise ValueError(
                    "orthogonal=True is only valid for the Gaussian kernel: orthogonal random features need a "
                    f"rotation-invariant spectral measure, and kernel={self.kernel!r} is not isotropic"
                )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Draw the frequencies and phases (X sets the dimension and the heuristic bandwidth)."""
        self._check_feature_params()
        A: Any
        if (on_device := array_namespace(X)) is not None:  # validated on its device: no host copy
            A = check_input_xp(X, on_device[0], estimator=self, reset=True)
        else:
            A = check_input(X, accept_sparse=("csr",), estimator=self, reset=True)
        self.seed_ = derive_seed(self.random_state)
        self.kernel_ = make_kernel(self.kernel, self.bandwidth, None, A, random_state=self.seed_, gamma=self.gamma)
        self.random_weights_, self.random_offset_ = sample_random_features(
            self.kernel_,
            A.shape[1],
            self.n_random_features,
            variant=self.variant,
            orthogonal=self.orthogonal,
            seed=self.seed_,
        )
        self._n_features_out = self.n_random_features
        if on_device is not None:  # the model lives on the device of the data it was fitted on
            move_state_to(self, *on_device)
        return self

    def transform(self, X: ArrayLike) -> FloatArray:
        """Map X (n, d) to Z (n, m); float32 stays float32."""
        if (Z := maybe_dask_transform(self, X)) is not None:  # a dask array: map over its blocks
            return Z
        check_is_fitted(self)
        scale = np.sqrt(2.0 / self.n_random_features)
        if (ns := fitted_namespace(self, X, "transform")) is not None:  # a PyTorch / CuPy / ... array
            from ..kernels.array_api import rff_map_xp, to_device

            W, b = to_device((self.random_weights_, self.random_offset_), *ns)
            return rff_map_xp(X, W, b, float(scale), ns[0])
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=False)
        return rff_transform(X, host_array(self.random_weights_), host_array(self.random_offset_), scale)

    def gram_factor(self, X):
        """``Y = Z(X)``: the factor of the approximate Gram ``Z Z^T`` (never formed)."""
        return self.transform(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = True  # PyTorch / CuPy / ... input under array_api_dispatch
        tags.input_tags.sparse = True
        return tags


def make_feature_map(estimator, X, kernel=None):
    """The fitted :class:`RandomFourierFeatures` an RF estimator projects through.

    ``estimator`` carries ``n_random_features``, ``kernel``, ``bandwidth``,
    ``variant``, ``orthogonal`` and ``random_state``.  The seed is drawn once
    from ``random_state``; ``kernel`` (already resolved, e.g. on all of X by
    ``fit``) overrides the estimator's, otherwise a bandwidth heuristic is
    resolved on ``X`` (the first block of a stream).  The map never depends on
    anything else, so equal seeds and parameters give identical features.
    """
    seed = derive_seed(estimator.random_state)
    params = dict(
        n_random_features=estimator.n_random_features,
        kernel=estimator.kernel,
        bandwidth=estimator.bandwidth,
        gamma=estimator.gamma,
        variant=estimator.variant,
        orthogonal=estimator.orthogonal,
    )
    RandomFourierFeatures(**params)._check_feature_params(type(estimator).__name__)
    if kernel is None:
        kernel = make_kernel(estimator.kernel, estimator.bandwidth, None, X, random_state=seed, gamma=estimator.gamma)
    params["kernel"], params["gamma"] = kernel, None
    return RandomFourierFeatures(**params, random_state=seed).fit(X)


def same_feature_map(a, b) -> bool:
    """True when two fitted maps produce identical features (wherever each one lives)."""
    wa, wb = host_array(a.random_weights_), host_array(b.random_weights_)
    oa, ob = host_array(a.random_offset_), host_array(b.random_offset_)
    return (
        a.seed_ == b.seed_
        and a.kernel_ == b.kernel_
        and a.variant == b.variant
        and wa.shape == wb.shape
        and np.array_equal(wa, wb)
        and ((oa is None and ob is None) or (oa is not None and ob is not None and np.array_equal(oa, ob)))
    )
