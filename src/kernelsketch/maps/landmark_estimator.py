"""What every landmark estimator shares: the fit prologue, its order of random draws, the map.

:class:`~kernelsketch.maps.Nystroem`, :class:`~kernelsketch.maps.KernelJL` and
:class:`~kernelsketch.decomposition.SubsampleKPCA` fit the same way up to the
landmarks -- validate X, resolve the kernel (a bandwidth heuristic may draw a
subsample), draw the landmarks -- and map the same way: ``K(X, landmarks_) @
projection_ + offset_``.

The order of random draws from ``random_state`` is part of the contract, so
that another fitting path (the Dask one, :mod:`kernelsketch.distributed`)
can reproduce a fit exactly: first the kernel's seed, then
``n_seeds_before_landmarks`` more seeds (:meth:`LandmarkMapMixin.draw_seeds`),
then the landmark indices from the same generator.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.utils.validation import check_is_fitted

from ..kernels.selection import make_kernel
from ..utils.dispatch import maybe_dask_transform
from ..utils.validation import check_input, check_random_state, derive_seed
from .landmarks import landmark_map


class LandmarkMapMixin:
    """Mixin for estimators that map data through ``K(X, landmarks_) @ projection_ + offset_``."""

    #: seeds drawn from ``random_state`` after the kernel's and before the landmarks
    n_seeds_before_landmarks = 0
    # parameters every subclass has (declared for the type checker)
    random_state: Any
    kernel: Any
    bandwidth: Any
    kernel_params: Any
    gamma: Any

    @classmethod
    def draw_seeds(cls, rng):
        """Draw, in fit's order, the seeds that come before the landmarks.

        Returns ``(kernel_seed, [extra seeds])``; ``rng`` is then positioned
        where fit draws the landmark indices.
        """
        kernel_seed = derive_seed(rng)
        return kernel_seed, [derive_seed(rng) for _ in range(cls.n_seeds_before_landmarks)]

    def _begin_fit(self, X) -> tuple[NDArray[Any] | sp.csr_matrix, np.random.Generator, list[int]]:
        """Validate X, resolve ``kernel_``; return ``(X, rng, extra_seeds)``."""
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=True)  # n_features_in_, feature_names_in_
        rng = check_random_state(self.random_state)
        kernel_seed, extra = self.draw_seeds(rng)
        self.kernel_ = make_kernel(
            self.kernel, self.bandwidth, self.kernel_params, X, random_state=kernel_seed, gamma=self.gamma
        )
        return X, rng, extra

    def _map(self, X):
        """``K(X, landmarks_) @ projection_ + offset_`` (a dask array: mapped over its blocks)."""
        if (Z := maybe_dask_transform(self, X)) is not None:
            return Z
        check_is_fitted(self)
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=False)  # same columns, same order
        return landmark_map(X, self.landmarks_, self.kernel_, self.projection_, getattr(self, "offset_", None))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
