"""What every landmark estimator shares: the fit and its two seams, its order of random draws, the map.

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

``fit`` is three steps, and every fitting path runs the same ones (the
out-of-core driver on a file or on Dask calls the two seams itself, with the
rows gathered by index, so it cannot drift from the in-memory fit):

1. validate X and resolve the kernel (:meth:`LandmarkMapMixin._begin_fit`);
2. **select the landmarks** (:meth:`LandmarkMapMixin._draw_landmarks`): the class's
   ``landmark_selector`` (:mod:`kernelsketch.maps.landmark_selection`) returns the landmark
   points (and their row indices, when they are rows), or the user's ``landmarks`` are taken
   as given;
3. **fit from the landmarks** (``_fit_from_landmarks(L, idx, seeds)``, each
   estimator's own): the Gram of the landmark rows and the projection.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.utils.validation import check_is_fitted

from ..kernels.selection import make_kernel
from ..utils.array_api import array_namespace, fitted_namespace, host_array, host_rows, move_state_to, to_numpy
from ..utils.dispatch import maybe_dask_transform
from ..utils.validation import check_input, check_input_xp, check_random_state, derive_seed
from .landmark_selection import LandmarkData, LandmarkSelector, UniformLandmarks, select_landmarks
from .landmarks import given_landmarks, landmark_map, resolve_n_landmarks, take_rows


class LandmarkMapMixin:
    """Mixin for estimators that map data through ``K(X, landmarks_) @ projection_ + offset_``."""

    #: seeds drawn from ``random_state`` after the kernel's and before the landmarks
    n_seeds_before_landmarks = 0
    #: picks the landmark rows (:mod:`kernelsketch.maps.landmark_selection`); uniform, as in the papers
    landmark_selector: ClassVar[LandmarkSelector] = UniformLandmarks()
    #: how the out-of-core driver (files, Dask) fits it: landmark rows gathered by index
    _fit_strategy: ClassVar[str] = "landmarks"
    #: the parameters that set the output dimension and the approximation"s size (the CLI"s -d and -n)
    _dim_param: ClassVar[str | None] = "n_components"
    _size_param: ClassVar[str | None] = "n_landmarks"
    landmarks: Any
    n_landmarks: Any
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
        """Validate X, resolve ``kernel_``; return ``(X, rng, extra_seeds)``.

        A device array (PyTorch, CuPy, ... under ``array_api_dispatch``) is validated on its
        device and returned there; a heuristic bandwidth reads only its sampled rows from it.
        """
        if (ns := array_namespace(X)) is not None:
            X = check_input_xp(X, ns[0], estimator=self, reset=True)
        else:
            X = check_input(X, accept_sparse=("csr",), estimator=self, reset=True)  # n_features_in_, feature_names_in_
        rng = check_random_state(self.random_state)
        kernel_seed, extra = self.draw_seeds(rng)
        self.kernel_ = make_kernel(
            self.kernel, self.bandwidth, self.kernel_params, X, random_state=kernel_seed, gamma=self.gamma
        )
        return X, rng, extra

    def _check_fit_params(self):
        """Checks of the parameters that come before any work (a hook; nothing by default)."""

    def _draw_landmarks(self, n_rows, rng, kernel, rows):
        """Seam 1: ``(L, idx)``, the landmarks and their row indices (None: not rows), from ``landmark_selector``.

        ``rows(indices)`` returns the data rows at ``indices`` (in that order); ``rng`` is
        positioned after :meth:`draw_seeds`.  Used by ``fit`` and by the out-of-core driver.
        """
        replace = bool(getattr(self, "replace", False))
        m = resolve_n_landmarks(self.n_landmarks, n_rows, replace=replace)
        return select_landmarks(
            self.landmark_selector, LandmarkData(n_rows, rows), m, rng, kernel=kernel, replace=replace
        )

    def _fit_from_landmarks(self, L, idx, seeds, n_rows):  # pragma: no cover - each estimator defines it
        """Seam 2: fit from the landmark rows ``L`` (indices ``idx``, None when given), ``kernel_`` set.

        ``seeds`` are the ones :meth:`draw_seeds` drew before the landmarks; ``n_rows`` is the
        number of rows of the data they were drawn from.
        """
        raise NotImplementedError

    def _fit_landmarks_in_memory(self, X) -> NDArray[Any] | sp.csr_matrix:
        """``fit``'s body: validate, resolve the kernel, select the landmarks, fit from them; returns X."""
        self._check_fit_params()
        if (on_device := array_namespace(X)) is not None:  # a PyTorch / CuPy / ... array
            self._fit_landmarks_on_device(X, *on_device)
            return X
        X, rng, seeds = self._begin_fit(X)
        if self.landmarks is not None:
            L, idx = given_landmarks(self.landmarks, X), None
        else:
            L, idx = self._draw_landmarks(X.shape[0], rng, self.kernel_, lambda i: take_rows(X, i))
        self._fit_from_landmarks(L, idx, seeds, X.shape[0])
        return X

    def _fit_landmarks_on_device(self, X, xp, device):
        """``fit`` of a device array: validated on the device; only the landmark rows come to the host.

        The draws are the host fit's (the same ``random_state``, the same seeds in the same
        order), so the model equals a NumPy fit; a data-driven bandwidth reads only the rows
        of its sampled pairs. The fitted state then moves to X's device.
        """
        X, rng, seeds = self._begin_fit(X)
        host = to_numpy(X[:1, ...], xp)  # for given landmarks' feature check

        def rows(idx):
            return host_rows(X, idx)

        if self.landmarks is not None:
            L, idx = given_landmarks(self.landmarks, host), None
        else:
            L, idx = self._draw_landmarks(X.shape[0], rng, self.kernel_, rows)
        self._fit_from_landmarks(L, idx, seeds, X.shape[0])
        move_state_to(self, xp, device)  # the model lives on the device of the data it was fitted on

    def _map(self, X):
        """``K(X, landmarks_) @ projection_ + offset_`` (a dask array: mapped over its blocks)."""
        if (Z := maybe_dask_transform(self, X)) is not None:
            return Z
        check_is_fitted(self)
        if (ns := fitted_namespace(self, X, "transform")) is not None:
            return self._map_on_device(X, *ns)
        X = check_input(X, accept_sparse=("csr",), estimator=self, reset=False)  # same columns, same order
        return landmark_map(
            X,
            host_array(self.landmarks_),
            self.kernel_,
            host_array(self.projection_),
            host_array(getattr(self, "offset_", None)),
        )

    def _map_on_device(self, X, xp, device):
        """The map of a PyTorch / CuPy / ... array on its device (:mod:`kernelsketch.kernels.array_api`)."""
        from ..kernels.array_api import landmark_map_xp, to_device

        if sp.issparse(self.landmarks_):
            raise TypeError(
                f"{type(self).__name__} was fitted on sparse data: its sparse landmarks have no array-API route; "
                "transform NumPy or CSR input"
            )
        L, P, offset = to_device((self.landmarks_, self.projection_, getattr(self, "offset_", None)), xp, device)
        return landmark_map_xp(X, L, self.kernel_, P, offset, xp)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = True  # PyTorch / CuPy / ... input under array_api_dispatch
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
