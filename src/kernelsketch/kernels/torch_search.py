"""A PyTorch searcher: the nearest-landmark / nearest-centre search on a GPU (or PyTorch's CPU).

:class:`TorchSearch` is a searcher object (:mod:`kernelsketch.kernels.search`: ``build(points)``, then
``search(X, r) -> (squared distances, indices)``) that runs the search's hot loop -- one GEMM of a block of
rows against the points and a top-``r`` of each row -- with PyTorch on ``device``.  Passed as ``search=`` (or
chosen by ``device=`` of :func:`~kernelsketch.out_of_core.cluster_file` and ``kernelsketch cluster --device``),
it serves every search of the default clustering: the k-means landmark selection, the graph of the fit pass,
k-means' seeding and the assignment pass.  The graph's weights, ``Z^T Z`` and the ``m x m`` eigenproblem stay on
the host (``O(N r^2)`` and ``O(m^3)``: small beside the ``O(N m d)`` search).

Rows arrive as NumPy blocks (a file read block by block) or as PyTorch tensors already on the device; each is cut
into sub-blocks whose ``(rows x points)`` distance matrix fits in a quarter of the device's free memory (CUDA), or
in ``working_memory`` (the CPU), so memory stays bounded at any N.  The answer is the exact search's, computed in
float32 for float32 rows and float64 otherwise (as :class:`~kernelsketch.kernels.search.ExactSearch`): neighbours
at near-equal distances may differ in the last digits' order; the tests hold it to the exact search's labels
(ARI >= .99 on well-separated data) and report the neighbour recall.

Needs PyTorch (``pip install torch``; ``kernelsketch[gpu]``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..utils.chunking import get_chunk_n_rows
from .neighbors import search_origin
from .search import _points

__all__ = ["TorchSearch", "available_devices", "resolve_device"]

#: the fraction of a CUDA device's free memory one sub-block's temporaries may take
CUDA_MEMORY_FRACTION = 0.25


def _torch():
    try:
        import torch
    except ImportError as exc:
        raise ImportError(
            "the PyTorch search (device=..., TorchSearch) needs PyTorch: pip install torch (or kernelsketch[gpu])"
        ) from exc
    return torch


def available_devices() -> dict:
    """What ``device=`` / ``--device`` can name here: ``{"pytorch": version or None, "devices": {name: what}}``.

    ``"numpy"`` (the NumPy path) always; with PyTorch installed, ``"cpu"`` and each CUDA device by name
    (``"cuda:0": "NVIDIA H200, 139.8 GiB"``).  PyTorch is imported only when it is installed.
    """
    import importlib.util

    devices = {"numpy": "the NumPy path (the default)"}
    if importlib.util.find_spec("torch") is None:
        return {"pytorch": None, "devices": devices}
    torch = _torch()
    devices["cpu"] = "PyTorch on the CPU"
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(i)
            devices[f"cuda:{i}"] = f"{props.name}, {props.total_memory / 2**30:.1f} GiB"
    return {"pytorch": torch.__version__, "devices": devices}


def resolve_device(device) -> Any:
    """``device`` as a ``torch.device``, checked: a CUDA device must exist (a clear error where it does not).

    ``"cuda"``, ``"cuda:1"``, ``"cpu"``, ``"mps"`` or a ``torch.device``.
    """
    torch = _torch()
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device must name a PyTorch device ('cuda', 'cuda:1', 'cpu'), got {device!r}") from exc
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(
                f"device={device!r}: PyTorch finds no CUDA device here (torch.cuda.is_available() is False); "
                "use device='cpu' or no device (the NumPy path)"
            )
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"device={device!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    return dev


class TorchSearch:
    """Exact nearest-point search with PyTorch on ``device``: GEMM distances, then ``topk``.

    Parameters
    ----------
    device : str or torch.device, default="cuda"
        Where the search runs (``"cpu"``: PyTorch's CPU, the tests' twin of the GPU path).
    block_rows : int, optional
        Rows per sub-block; default: as many as a quarter of the device's free memory holds (CUDA) or the
        ``working_memory`` budget (CPU).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.kernels.torch_search import TorchSearch
    >>> s = TorchSearch("cpu").build(np.array([[0.0, 0.0], [1.0, 0.0], [5.0, 5.0]]))  # doctest: +SKIP
    >>> d2, idx = s.search(np.array([[0.9, 0.1]]), 2)  # doctest: +SKIP
    >>> idx.tolist()  # doctest: +SKIP
    [[1, 0]]
    """

    accepts_sparse = False
    exact = True
    #: its answers are checked and each row ascending (topk's order; of tied distances at the r-th place, any is a
    #: correct search): :func:`~kernelsketch.kernels.search.checked_search` takes them as they are, with no per-row
    #: sort on the host (0.7 s per million rows of 10 neighbours on 2 cores, more than the search on a GPU)
    _sorted_rows = True
    #: a model file keeps the parameters; what build() makes is rebuilt where the model is used
    _init_params = ("device", "block_rows")
    _persistent_state: tuple[str, ...] = ()
    _transient_state = ("device_", "n_points_", "origin_", "_points", "_host_points")

    def __init__(self, device: Any = "cuda", block_rows: int | None = None) -> None:
        self.device = device
        self.block_rows = block_rows

    def build(self, points):
        P = _points(points)  # (checked as every searcher's: a non-empty (m, d) float64 array)
        self.device_ = resolve_device(self.device)
        self.n_points_ = P.shape[0]
        self.origin_ = search_origin(P)
        self._host_points = P if self.origin_ is None else P - self.origin_
        self._points = {}  # dtype -> (points, squared norms) on the device
        return self

    def _on_device(self, dtype):
        torch = _torch()
        if dtype not in self._points:
            P = torch.as_tensor(self._host_points.astype(dtype), device=self.device_)
            self._points[dtype] = (P, (P * P).sum(dim=1))
        return self._points[dtype]

    def _rows(self, X):
        """``X`` as a tensor on the device (float32 for float32 rows, else float64), moved to the origin."""
        torch = _torch()
        if isinstance(X, torch.Tensor):
            T = X.to(self.device_)
            T = T if T.dtype in (torch.float32, torch.float64) else T.to(torch.float64)
        else:
            X = X.toarray() if sp.issparse(X) else np.asarray(X)
            if X.dtype != np.float32:
                X = X.astype(np.float64, copy=False)
            T = torch.as_tensor(np.ascontiguousarray(X), device=self.device_)
        if self.origin_ is not None:
            T = T - torch.as_tensor(self.origin_, dtype=T.dtype, device=self.device_)
        return T

    def _sub_block_rows(self, n, itemsize):
        if self.block_rows is not None:
            return max(1, int(self.block_rows))
        per_row = itemsize * (2 * self.n_points_ + 8)  # the distance row, topk's scratch
        if self.device_.type == "cuda":
            torch = _torch()
            free, _ = torch.cuda.mem_get_info(self.device_)
            return max(1, min(n, int(CUDA_MEMORY_FRACTION * free // per_row)))
        return get_chunk_n_rows(per_row, max(n, 1))

    def search(self, X, r):
        torch = _torch()
        if not hasattr(self, "device_"):
            raise RuntimeError("TorchSearch.search before build(points)")
        r = int(r)
        if not 1 <= r <= self.n_points_:
            raise ValueError(f"r must be in [1, {self.n_points_}] (the points built), got {r}")
        T = self._rows(X)
        if T.ndim != 2 or T.shape[1] != self._host_points.shape[1]:
            raise ValueError(f"X must have {self._host_points.shape[1]} columns, got shape {tuple(T.shape)}")
        np_dtype = np.float32 if T.dtype == torch.float32 else np.float64
        P, p2 = self._on_device(np_dtype)
        n = T.shape[0]
        d2_out = np.empty((n, r), dtype=np_dtype)
        idx_out = np.empty((n, r), dtype=np.int32)
        step = self._sub_block_rows(n, np.dtype(np_dtype).itemsize)
        with torch.no_grad():
            for start in range(0, n, step):
                B = T[start : start + step]
                # |p|^2 - 2 x.p: a row's |x|^2 is the same for all its points, so it is added to the r kept only
                # (one pass over the (rows x points) block fewer; the same order, the same numbers)
                D = torch.addmm(p2.unsqueeze(0), B, P.T, beta=1.0, alpha=-2.0)
                d2, idx = torch.topk(D, r, dim=1, largest=False, sorted=True)
                d2 += (B * B).sum(dim=1, keepdim=True)
                d2_out[start : start + step] = d2.clamp_min_(0.0).cpu().numpy()
                idx_out[start : start + step] = idx.to(torch.int32).cpu().numpy()
        return d2_out, idx_out

    def __getstate__(self):  # tensors stay where they are: rebuilt from the host copy after unpickling
        state = dict(vars(self))
        state.pop("_points", None)
        return state

    def __setstate__(self, state):
        vars(self).update(state)
        if "_host_points" in state:
            self._points = {}
