"""``fit`` / ``partial_fit`` shared by the streaming random-feature estimators (RFKPCA, RNCA, StreamingKPCA)."""

from __future__ import annotations

from typing import Any, ClassVar, Self

import numpy as np
from sklearn.base import _fit_context

from .._typing import ArrayLike
from ..kernels.selection import make_kernel
from ..maps.random_fourier_features import same_feature_map
from ..utils.array_api import array_namespace, fitted_namespace, like, move_state_to
from ..utils.chunking import gen_row_slices, get_chunk_n_rows
from ..utils.validation import check_input, check_input_xp, derive_seed


class RandomFeatureStreamMixin:
    """Streams of row blocks through a random-feature map drawn once.

    Subclasses define ``_start(X, kernel=None)`` (draw the features, reset the
    statistics), ``_accumulate(X)`` (add a block), ``_stream_attr`` (the
    attribute that exists once a stream has started) and may override
    ``_finish_fit``.  ``fit`` resolves a heuristic bandwidth on all of X;
    ``partial_fit`` on the first block only (documented on each estimator).
    """

    #: how the out-of-core driver (files, Dask) fits it: per-block sketches, merged
    _fit_strategy: ClassVar[str] = "sketch"
    #: the parameters that set the output dimension and the approximation"s size (the CLI"s -d and -n)
    _dim_param: ClassVar[str | None] = "n_components"
    _size_param: ClassVar[str | None] = "n_random_features"
    #: the attribute that exists once a stream has started
    _stream_attr: ClassVar[str]
    # parameters every subclass has (declared for the type checker)
    random_state: Any
    kernel: Any
    bandwidth: Any
    gamma: Any
    #: rows ``fit`` needs at least (a clear error before any work)
    _min_samples = 1

    def _start(self, X, kernel=None):  # pragma: no cover - defined by every subclass
        raise NotImplementedError

    def _accumulate(self, X):  # pragma: no cover - defined by every subclass
        raise NotImplementedError

    def _finish_fit(self):
        """Work done at the end of ``fit`` (e.g. an eigendecomposition)."""

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Reset, then add every row of X block by block. Returns self."""
        A: Any
        if (on_device := array_namespace(X)) is not None:  # a PyTorch / CuPy / ... array: on its device
            A = check_input_xp(X, on_device[0], estimator=self, reset=True, ensure_min_samples=self._min_samples)
        else:
            A = check_input(X, accept_sparse=("csr",), ensure_min_samples=self._min_samples, estimator=self, reset=True)
        seed = derive_seed(self.random_state)
        # the heuristic bandwidth sees all of X (on a device: only its sampled rows leave it), not just the
        # first block
        self._start(A, kernel=make_kernel(self.kernel, self.bandwidth, None, A, random_state=seed, gamma=self.gamma))
        if on_device is not None:  # the statistics live where the data does
            move_state_to(self, *on_device)
        self._accumulate(A)
        self._finish_fit()
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: ArrayLike, y: object = None) -> Self:
        """Add a block of rows; the first call draws the random features. Returns self."""
        first = not hasattr(self, self._stream_attr)
        if not first:
            fitted_namespace(self, X, "partial_fit")  # under dispatch: the stream's namespace and device
        A: Any
        if (on_device := array_namespace(X)) is not None:
            A = check_input_xp(X, on_device[0], estimator=self, reset=first)
        else:
            A = check_input(X, accept_sparse=("csr",), estimator=self, reset=first)
        if first:
            # (a heuristic bandwidth on a device block reads only its sampled rows; the map's fit stays there)
            self._start(A)
            if on_device is not None:  # the statistics live where the data does
                move_state_to(self, *on_device)
        self._accumulate(A)
        return self

    def _features_on_device(self, X, xp):
        """``z(X)`` in float64 on X's device (the map's state lives there), chunk by chunk."""
        from ..kernels.array_api import _rff_block

        fm, m = self.feature_map_, self.n_random_features
        W, b = like(fm.random_weights_, X), like(fm.random_offset_, X)
        scale = float(np.sqrt(2.0 / m))
        for rows in gen_row_slices(X.shape[0], get_chunk_n_rows(4 * 8 * m, X.shape[0])):
            Xc = X[rows, ...]
            yield xp.astype(
                _rff_block(Xc, xp.astype(W, Xc.dtype), None if b is None else xp.astype(b, Xc.dtype), scale, xp),
                xp.float64,
            )

    def _check_mergeable(self, other, params):
        """Refuse to merge with a stream of other parameters or other random features."""
        name = type(self).__name__
        for p in params:
            if getattr(self, p) != getattr(other, p):
                raise ValueError(
                    f"cannot merge {name} sketches with different {p}: {getattr(self, p)!r} != {getattr(other, p)!r}"
                )
        if self.n_features_in_ != other.n_features_in_:
            raise ValueError(
                f"cannot merge {name} sketches of {self.n_features_in_} and {other.n_features_in_} input features"
            )
        if not same_feature_map(self.feature_map_, other.feature_map_):
            raise ValueError(
                f"cannot merge {name} sketches built with different random features (seeds "
                f"{self.feature_map_.seed_} vs {other.feature_map_.seed_}, kernels {self.kernel_!r} vs "
                f"{other.kernel_!r}); build both with the same integer random_state and bandwidth"
            )
