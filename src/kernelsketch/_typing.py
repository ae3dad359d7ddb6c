"""Type aliases of the public API (foundation layer: imports nothing from the package)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: ``None``, a seed, or a NumPy generator: every random choice flows from it
RandomStateLike: TypeAlias = int | np.random.Generator | np.random.RandomState | None
#: a kernel name (``"gaussian"``, ...), a :class:`~kernelsketch.kernels.Kernel` instance, or ``f(X, Y) -> K``
KernelLike: TypeAlias = str | Callable[..., Any]
#: a bandwidth ``h > 0`` or the name of a heuristic (``"percentile"``, ``"median"``, ...)
BandwidthLike: TypeAlias = float | str
#: extra keyword parameters of a kernel (``degree``, ``gamma``, ``coef0``, a callable's own)
KernelParams: TypeAlias = Mapping[str, Any] | None
#: a 2-D float array: the outputs of ``transform``
FloatArray: TypeAlias = NDArray[np.floating]

#: a file path
PathLike: TypeAlias = str | os.PathLike[str]
#: what the out-of-core driver reads: a path (csv/tsv/libsvm/npy/parquet/binary), an array,
#: a :class:`~kernelsketch.io.MatrixSource` or a dask array
DataLike: TypeAlias = PathLike | ArrayLike | Any

__all__ = [
    "ArrayLike",
    "BandwidthLike",
    "DataLike",
    "FloatArray",
    "KernelLike",
    "KernelParams",
    "NDArray",
    "PathLike",
    "RandomStateLike",
]
