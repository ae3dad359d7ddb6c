"""A PyTorch searcher: the nearest-landmark / nearest-centre search on a GPU (or PyTorch's CPU).

:class:`TorchSearch` is a searcher object (:mod:`kernelsketch.kernels.search`: ``build(points)``, then
``search(X, r) -> (squared distances, indices)``) that runs the search's hot loop -- one GEMM of a block of
rows against the points and a top-``r`` of each row -- with PyTorch on ``device``.  Passed as ``search=`` (or
chosen by ``device=`` of :func:`~kernelsketch.out_of_core.cluster_file` and ``kernelsketch cluster --device``),
it serves every search of the default clustering: the k-means landmark selection, the graph of the fit pass,
k-means' seeding and the assignment pass.  On CUDA it also does a landmark graph's whole block work there
(:meth:`TorchSearch.fused_routes`): the fit's graph statistics (search, Gaussian weights, ``Z^T Z``) and the
assignment (search, weights, embedding, nearest centre), only the rows sent and the ``m x m`` sums or the labels
returned, so the host's ``O(N r^2)`` sweeps do not wait on the card's ``O(N m d)`` search.  The ``m x m``
eigenproblem stays on the host.

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

__all__ = ["TorchSearch", "available_devices", "gaussian_weights", "resolve_device"]

#: the fraction of a CUDA device's free memory one sub-block's temporaries may take
CUDA_MEMORY_FRACTION = 0.25
#: ``select="auto"`` picks ``r`` row minima, not ``torch.topk``, on CUDA up to this many neighbours
MIN_SELECT_MAX_R = 16
#: the block routes a CUDA ``TorchSearch`` runs on its device (:meth:`TorchSearch.fused_routes`)
FUSED_ROUTES = ("landmark_statistics", "landmark_assign")
#: ``TorchSearch``'s ``select`` values
SELECTIONS = ("auto", "topk", "min")


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
    select : {"auto", "topk", "min"}, default="auto"
        How each row's ``r`` nearest are picked from its distances: ``"topk"`` (``torch.topk``), or ``"min"``
        (``r`` row minima, each found one masked before the next: ``r`` reads of the distance block, faster on a
        GPU than ``topk`` for few neighbours); ``"auto"``: ``"min"`` on CUDA for ``r <=``
        :data:`MIN_SELECT_MAX_R`, else ``"topk"``.  The same distances and neighbours (of tied distances at the
        ``r``-th place, either may be kept).

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
    _init_params = ("device", "block_rows", "select")
    _persistent_state: tuple[str, ...] = ()
    _transient_state = ("device_", "n_points_", "origin_", "_points", "_host_points", "_assign_kept")

    def __init__(self, device: Any = "cuda", block_rows: int | None = None, select: str = "auto") -> None:
        self.device = device
        self.block_rows = block_rows
        self.select = select

    def build(self, points):
        P = _points(points)  # (checked as every searcher's: a non-empty (m, d) float64 array)
        if self.select not in SELECTIONS:
            raise ValueError(f"select must be one of {SELECTIONS}, got {self.select!r}")
        self.device_ = resolve_device(self.device)
        self.n_points_ = P.shape[0]
        self.origin_ = search_origin(P)
        self._host_points = P if self.origin_ is None else P - self.origin_
        self._points = {}  # dtype -> (points, squared norms) on the device
        return self

    def fused_routes(self) -> tuple[str, ...]:
        """The routes that do a landmark graph's block work where this searcher searches
        (:meth:`~kernelsketch.maps.landmark_graph.LandmarkGraph.device_route`): on CUDA, the fit's graph statistics
        (:meth:`landmark_statistics`) and the assignment (:meth:`landmark_assign`), only the rows sent; none on
        PyTorch's CPU, where the host's compiled sweeps (a sparse ``Z^T Z``, the kept graph read back) cost less
        than a dense ``Z^T Z`` and a second search."""
        return FUSED_ROUTES if resolve_device(self.device).type == "cuda" else ()

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

    def _sub_block_rows(self, n, itemsize, extra_bytes=0):
        """Rows per sub-block: the ``(rows x points)`` distances and topk's scratch (``itemsize`` each), plus
        ``extra_bytes`` a row (what a fused route keeps beside them), in a quarter of the free CUDA memory or in
        ``working_memory``."""
        if self.block_rows is not None:
            return max(1, int(self.block_rows))
        per_row = itemsize * (2 * self.n_points_ + 8) + int(extra_bytes)
        if self.device_.type == "cuda":
            torch = _torch()
            free, _ = torch.cuda.mem_get_info(self.device_)
            return max(1, min(n, int(CUDA_MEMORY_FRACTION * free // per_row)))
        return get_chunk_n_rows(per_row, max(n, 1))

    def _checked_rows(self, X, r):
        """``(X as a tensor on the device, its NumPy dtype, the points and their squared norms)``, checked."""
        torch = _torch()
        if not hasattr(self, "device_"):
            raise RuntimeError("TorchSearch.search before build(points)")
        if not 1 <= r <= self.n_points_:
            raise ValueError(f"r must be in [1, {self.n_points_}] (the points built), got {r}")
        T = self._rows(X)
        if T.ndim != 2 or T.shape[1] != self._host_points.shape[1]:
            raise ValueError(f"X must have {self._host_points.shape[1]} columns, got shape {tuple(T.shape)}")
        np_dtype = np.float32 if T.dtype == torch.float32 else np.float64
        return T, np_dtype, self._on_device(np_dtype)

    def _nearest(self, B, r, P, p2):
        """The ``r`` nearest of the points ``P`` (squared norms ``p2``) to each row of the sub-block ``B``:
        ``(squared distances >= 0, indices)``, each row ascending (``select``'s way)."""
        torch = _torch()
        # |p|^2 - 2 x.p: a row's |x|^2 is the same for all its points, so it is added to the r kept only
        # (one pass over the (rows x points) block fewer; the same order, the same numbers)
        D = torch.addmm(p2.unsqueeze(0), B, P.T, beta=1.0, alpha=-2.0)
        select = self.select
        if select == "auto":
            select = "min" if self.device_.type == "cuda" and r <= MIN_SELECT_MAX_R else "topk"
        if select == "topk" or r == D.shape[1]:
            d2, idx = torch.topk(D, r, dim=1, largest=False, sorted=True)
        else:
            d2 = torch.empty((D.shape[0], r), dtype=D.dtype, device=D.device)
            idx = torch.empty((D.shape[0], r), dtype=torch.int64, device=D.device)
            for j in range(r):
                d2[:, j], idx[:, j] = D.min(dim=1)
                if j + 1 < r:  # (the one found leaves the row: the next minimum is the next nearest)
                    D.scatter_(1, idx[:, j : j + 1], float("inf"))
        d2 += (B * B).sum(dim=1, keepdim=True)
        return d2.clamp_min_(0.0), idx

    def search(self, X, r):
        torch = _torch()
        r = int(r)
        T, np_dtype, (P, p2) = self._checked_rows(X, r)
        n = T.shape[0]
        d2_out = np.empty((n, r), dtype=np_dtype)
        idx_out = np.empty((n, r), dtype=np.int32)
        step = self._sub_block_rows(n, np.dtype(np_dtype).itemsize)
        with torch.no_grad():
            for start in range(0, n, step):
                d2, idx = self._nearest(T[start : start + step], r, P, p2)
                d2_out[start : start + step] = d2.cpu().numpy()
                idx_out[start : start + step] = idx.to(torch.int32).cpu().numpy()
        return d2_out, idx_out

    # -- a landmark graph's block work on the device (LandmarkGraph's fused routes) -----------------------------
    def landmark_statistics(self, X, r, bandwidth):
        """The graph statistics ``(Z^T Z (m, m) float64, Z^T 1 (m,), rows)`` of the rows of ``X`` joined to their
        ``r`` nearest points (the landmarks this searcher was built on) with Gaussian weights, computed on the
        device: :meth:`~kernelsketch.maps.landmark_graph.LandmarkGraph.statistics` of its ``graph(X)``, to
        rounding, with only ``X`` sent and ``m x m`` numbers returned (each sub-block's ``Z`` dense, ``Z^T Z`` one
        float64 GEMM)."""
        torch = _torch()
        r = int(r)
        T, np_dtype, (P, p2) = self._checked_rows(X, r)
        n, m = T.shape[0], self.n_points_
        G = torch.zeros((m, m), dtype=torch.float64, device=self.device_)
        degrees = torch.zeros(m, dtype=torch.float64, device=self.device_)
        step = self._sub_block_rows(n, np.dtype(np_dtype).itemsize, extra_bytes=8 * m)
        with torch.no_grad():
            for start in range(0, n, step):
                d2, idx = self._nearest(T[start : start + step], r, P, p2)
                Z = torch.zeros((d2.shape[0], m), dtype=torch.float64, device=self.device_)
                Z.scatter_(1, idx, gaussian_weights(d2, bandwidth).to(torch.float64))
                G.addmm_(Z.T, Z)
                degrees += Z.sum(dim=0)
        return G.cpu().numpy(), degrees.cpu().numpy(), n

    def landmark_assign(self, X, r, bandwidth, projection, centers, dtype, unit_rows=False):
        """k-means' assignment of the rows of ``X`` embedded by a landmark graph, on the device:
        ``(labels int64, squared distances float64, per-centre sums float64, counts float64)``.

        Each row's ``r`` nearest points (the landmarks), their Gaussian weights (:func:`gaussian_weights`), its
        embedding ``sum_a w_a P[j_a]`` in float64 (``projection``'s rows; unit length with ``unit_rows``),
        rounded to ``dtype``, and its nearest centre in ``dtype``: the numbers of
        :meth:`~kernelsketch.maps.landmark_graph.LandmarkGraph.assign_graph` of ``graph(X)`` with this searcher
        finding the centres, to rounding (summation order), with only ``X`` sent and the labels returned.
        """
        torch = _torch()
        r = int(r)
        T, np_dtype, (P, p2) = self._checked_rows(X, r)
        n = T.shape[0]
        proj, centre_search = self._assign_state(projection, centers)
        k = proj.shape[1]
        dt = np.dtype(dtype)
        t_dtype = torch.float32 if dt == np.float32 else torch.float64
        Pc, pc2 = centre_search._on_device(np.float32 if dt == np.float32 else np.float64)
        n_centres = centre_search.n_points_
        labels = np.empty(n, dtype=np.int64)
        sq = np.empty(n)
        sums = torch.zeros((n_centres, k), dtype=torch.float64, device=self.device_)
        counts = torch.zeros(n_centres, dtype=torch.float64, device=self.device_)
        step = self._sub_block_rows(n, np.dtype(np_dtype).itemsize, extra_bytes=8 * (2 * r * k + k + n_centres))
        with torch.no_grad():
            for start in range(0, n, step):
                d2, idx = self._nearest(T[start : start + step], r, P, p2)
                w = gaussian_weights(d2, bandwidth).to(torch.float64)
                E = (w.unsqueeze(2) * proj[idx]).sum(dim=1)  # (rows, k): sum_a w_a P[j_a]
                if unit_rows:  # (as the host's: a zero row stays 0)
                    norms = torch.sqrt((E * E).sum(dim=1, keepdim=True))
                    E = torch.where(norms > 0, E / norms, E)
                E = E.to(t_dtype)  # (the embedding a run in dtype keeps)
                d1, lab = self._nearest(centre_search._rows(E), 1, Pc, pc2)
                lab = lab[:, 0]
                both = torch.stack([lab.to(torch.float64), d1[:, 0].to(torch.float64)]).cpu().numpy()  # (one copy)
                labels[start : start + step] = both[0]
                sq[start : start + step] = both[1]
                onehot = torch.zeros((E.shape[0], n_centres), dtype=torch.float64, device=self.device_)
                onehot.scatter_(1, lab.unsqueeze(1), 1.0)
                sums.addmm_(onehot.T, E.to(torch.float64))
                counts += onehot.sum(dim=0)
        both = torch.cat([sums.ravel(), counts]).cpu().numpy()  # (one copy)
        return labels, sq, both[:-n_centres].reshape(n_centres, k), both[-n_centres:]

    def _assign_state(self, projection, centers):
        """``(the projection on the device (float64), a TorchSearch built on the centres)`` for
        :meth:`landmark_assign`, made once for the blocks of a pass (they share both) and kept while they are the
        same numbers."""
        P = np.ascontiguousarray(projection, dtype=np.float64)
        C = np.asarray(centers)
        if C.ndim != 2 or C.shape[1] != P.shape[1]:
            raise ValueError(f"centers must have {P.shape[1]} columns (the embedding's), got shape {C.shape}")
        kept = getattr(self, "_assign_kept", None)
        if kept is None or not (
            kept[0].shape == P.shape
            and kept[1].shape == C.shape
            and np.array_equal(kept[0], P)
            and np.array_equal(kept[1], C)
        ):
            torch = _torch()
            proj = torch.as_tensor(P, device=self.device_)
            kept = (P.copy(), C.copy(), proj, TorchSearch(self.device_).build(C))
            self._assign_kept = kept
        return kept[2], kept[3]

    def __getstate__(self):  # tensors stay where they are: rebuilt from the host copy after unpickling
        state = dict(vars(self))
        state.pop("_points", None)
        state.pop("_assign_kept", None)
        return state

    def __setstate__(self, state):
        vars(self).update(state)
        if "_host_points" in state:
            self._points = {}


def gaussian_weights(d2, bandwidth):
    """A landmark graph's Gaussian weights of rows at squared distances ``d2`` (a tensor, each row ascending),
    each row summing to 1, in ``d2``'s dtype: the operations of
    :meth:`~kernelsketch.maps.landmark_graph.LandmarkGraph.weights_into`, step for step, in PyTorch."""
    torch = _torch()
    W = d2.clone()
    if bandwidth is None:
        scale = W[:, -1:].clone()  # the r-th nearest point's squared distance
        at_zero = scale[:, 0] <= 0  # every neighbour at distance 0: equal weights
        scale[at_zero] = 1.0
        W[at_zero] = 0.0
        W = torch.neg(W / scale)
    else:
        W = torch.neg(W - W[:, :1]) / bandwidth**2
    W.exp_()
    return W / W.sum(dim=1, keepdim=True)
