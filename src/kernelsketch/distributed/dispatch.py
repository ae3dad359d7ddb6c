"""Kept for import compatibility: the hook lives in :mod:`kernelsketch.utils.dispatch`."""

from ..utils.dispatch import is_dask_array, maybe_dask_transform

__all__ = ["is_dask_array", "maybe_dask_transform"]
