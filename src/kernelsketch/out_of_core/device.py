"""Where the drivers' searches run: the NumPy path, or PyTorch on a device (``device=``, ``--device``).

:func:`spectral_on_device` gives the spectral embedding of a run a
:class:`~kernelsketch.kernels.torch_search.TorchSearch`; the fitted model keeps it (a saved model searches on that
device when loaded), and :func:`searches_on` moves the searches of a fitted or loaded model to another device, or
back to the NumPy path, on a copy.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

__all__ = ["NUMPY", "host_data", "searches_on", "spectral_on_device"]


def host_data(data, device):
    """``(data, device)``: a PyTorch tensor copied to the host, its device the run's unless ``device`` is given
    (``"numpy"``: None, the NumPy path).  Anything else (files, NumPy, Dask arrays) is left as it is."""
    numpy = device == NUMPY
    if not type(data).__module__.startswith("torch"):
        return data, None if numpy else device
    from ..utils.array_api import host_array

    return host_array(data), None if numpy else (str(data.device) if device is None else device)


def _torch_search(device):
    from ..kernels.torch_search import TorchSearch, resolve_device

    resolve_device(device)  # (refused now, before anything is read: no PyTorch, no such device)
    return TorchSearch(str(device))


def spectral_on_device(embedding, device):
    """A copy of the (unfitted) spectral ``embedding`` whose searches run with PyTorch on ``device``; a clear
    error for an embedding without searches or one that already has a searcher object."""
    from sklearn.base import clone

    from ..maps.landmark_spectral import LandmarkSpectralEmbedding, user_searcher

    if not isinstance(embedding, LandmarkSpectralEmbedding):
        raise ValueError(
            f"device={device!r} runs the spectral embedding's searches on a device; embedding={embedding!r} has none"
        )
    if user_searcher(embedding.search) is not None:
        raise ValueError("give either device= or a searcher object as the embedding's search=, not both")
    return clone(embedding).set_params(search=_torch_search(device))


def _searching_parts(model) -> list[Any]:
    """The fitted spectral parts of ``model`` (a pipeline, a clustering or an embedding) that search."""
    from ..cluster.landmark_spectral_clustering import LandmarkSpectralClustering
    from ..maps.landmark_spectral import LandmarkSpectralEmbedding

    steps = [s for _, s in model.steps] if hasattr(model, "steps") else [model]
    parts = []
    for step in steps:
        if isinstance(step, LandmarkSpectralClustering):
            parts += [step, getattr(step, "embedding_", None), getattr(step, "kmeans_", None)]
        elif isinstance(step, LandmarkSpectralEmbedding):
            parts.append(step)
    return [p for p in parts if p is not None]


#: the ``device`` that names the NumPy path (no PyTorch)
NUMPY = "numpy"


def searches_on(model, device):
    """A copy of the fitted ``model`` whose spectral searches run with PyTorch on ``device`` (``"cuda"``,
    ``"cpu"``, ...), or on the exact NumPy search (``"numpy"``: the numbers a device gives, to rounding).  A model
    with no spectral part is refused.

    The labels are the exact search's: a model fitted with ``search="auto"`` (approximate for few columns) may
    label a few rows differently on a device than without one."""
    from ..cluster.streaming_kmeans import StreamingKMeans

    model = deepcopy(model)
    parts = _searching_parts(model)
    if not parts:
        raise ValueError(f"device={device!r}: {type(model).__name__} has no spectral embedding whose search could move")
    search = None if device == NUMPY else _torch_search(device)
    for part in parts:
        if isinstance(part, StreamingKMeans):  # (its search finds the centres: None is its own exact one)
            part.search = search
        else:
            part.search = "exact" if search is None else search
        vars(part).pop("_searcher_cache", None)
    return model
