"""How a landmark estimator chooses its landmarks: the selector seam.

Every landmark estimator (:class:`~kernelsketch.maps.Nystroem`,
:class:`~kernelsketch.maps.KernelJL`, :class:`~kernelsketch.decomposition.SubsampleKPCA`,
and the embedding of :class:`~kernelsketch.cluster.NystroemKernelKMeans`) asks its
``landmark_selector`` for the indices of its landmarks, in memory and on every
engine of the out-of-core driver alike.  A selector is any object with::

    select(n_rows, n_landmarks, rng, *, kernel, replace, rows) -> indices

- ``n_rows``: rows of the data (all of it: a file, a dask array);
- ``rng``: the estimator's generator, positioned after the seeds drawn before the
  landmarks (:meth:`~kernelsketch.maps.landmark_estimator.LandmarkMapMixin.draw_seeds`);
- ``kernel``: the resolved :class:`~kernelsketch.kernels.Kernel` (its bandwidth fixed), so a
  data-dependent selector (ridge leverage scores, pivoted Cholesky) can evaluate it;
- ``rows(indices)``: the data rows at ``indices`` (a gather: cheap in memory and for
  ``.npy`` files, one pass over a text file), for selectors that look at the data.

and returns ``n_landmarks`` row indices (int64) in draw order.  Uniform sampling
(the papers') is :class:`UniformLandmarks`; a new strategy is one class here (or
in user code) and a subclass of the estimator that sets ``landmark_selector``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from .landmarks import sample_landmarks


@runtime_checkable
class LandmarkSelector(Protocol):
    """What a landmark estimator needs from a selector (see the module docstring)."""

    def select(
        self,
        n_rows: int,
        n_landmarks: int,
        rng: np.random.Generator,
        *,
        kernel: Any,
        replace: bool,
        rows: Callable[[NDArray[np.int64]], Any],
    ) -> NDArray[np.int64]: ...


class UniformLandmarks:
    """Uniform sampling of the rows, with or without replacement (the papers' choice).

    Uses neither the kernel nor the data: the indices are
    :func:`~kernelsketch.maps.sample_landmarks`'s, so every engine draws the same ones.

    Examples
    --------
    >>> import numpy as np
    >>> UniformLandmarks().select(10, 3, np.random.default_rng(0), kernel=None, replace=False, rows=None)
    array([5, 6, 9])
    """

    def select(self, n_rows, n_landmarks, rng, *, kernel=None, replace=False, rows=None):
        return sample_landmarks(n_rows, n_landmarks, rng, replace=replace)

    def __repr__(self):
        return "UniformLandmarks()"
