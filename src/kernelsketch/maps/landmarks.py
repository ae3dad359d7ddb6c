"""Landmarks: drawing them uniformly, keeping them in a stream, mapping data through them.

Every landmark-based estimator (Nystroem, Kernel JL, subsample KPCA, Nystroem
kernel k-means) has the same three steps: pick ``n`` landmarks, compute a small
``(n, d)`` projection from their ``n x n`` Gram matrix, then map data with
``K(X, landmarks) @ projection``.  The first and last steps live here.

* :func:`sample_landmarks` draws row indices uniformly (without replacement
  by default), for dense and CSR data alike.
* :class:`ReservoirSampler` keeps a uniform sample of a stream of row blocks
  (Vitter's Algorithm L without replacement; independent size-1 reservoirs
  with replacement).  It backs :meth:`Nystroem.partial_fit`, the streaming
  Nystroem of Ghashami, Perry & Phillips.
* :func:`landmark_map` is the shared hot path: ``K(X, landmarks) @ P`` under
  the working-memory budget, fused tile by tile in cache for kernels of GEMM
  form, into a preallocated output, then a constant row offset.
"""

from __future__ import annotations

import heapq
import numbers
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from .._config import get_config
from ..kernels.blocks import kernel_blocks
from ..kernels.evaluation import compute_block
from ..kernels.tiled_gemm import gemm_map
from ..utils.array_api import host_rows, namespace_of
from ..utils.chunking import gen_row_slices, get_chunk_n_rows
from ..utils.validation import cast_finite, check_input, check_input_xp, check_random_state


def _check_count(name, value):
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be a positive int, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


def sample_landmarks(X, n_landmarks, rng=None, replace=False):
    """Indices of ``n_landmarks`` rows of ``X`` drawn uniformly at random.

    Parameters
    ----------
    X : array-like or CSR matrix of shape (n_samples, n_features), or int
        The data (only its number of rows is used), or that number itself.
    n_landmarks : int >= 1
        Number of landmarks; at most ``n_samples`` when ``replace=False``.
    rng : int, Generator or None
        Source of randomness.
    replace : bool, default=False
        Draw with replacement (i.i.d. uniform indices, duplicates possible).

    Returns
    -------
    indices : ndarray of int64, shape (n_landmarks,)
        Without replacement the indices are sorted (a uniformly random subset;
        sorted rows are cheaper to gather from CSR and keep the landmark order
        independent of the draw order).  With replacement they are in draw order.

    Examples
    --------
    >>> from kernelsketch.maps import sample_landmarks
    >>> idx = sample_landmarks(10, 4, rng=0)
    >>> idx.shape, len(set(idx.tolist()))
    ((4,), 4)
    """
    if isinstance(X, (numbers.Integral, np.integer)) and not isinstance(X, bool):
        n_samples = int(X)
        if n_samples < 1:
            raise ValueError(f"n_samples must be >= 1, got {n_samples}")
    else:
        shape = getattr(X, "shape", None)
        if shape is None or len(shape) != 2:
            raise ValueError("X must be a 2-D array or CSR matrix (or the number of samples)")
        n_samples = int(shape[0])
        if n_samples < 1:
            raise ValueError("X has no rows; cannot draw landmarks from an empty set")
    n_landmarks = _check_count("n_landmarks", n_landmarks)
    if not replace and n_landmarks > n_samples:
        raise ValueError(
            f"n_landmarks={n_landmarks} must be <= n_samples={n_samples} when sampling without "
            "replacement; lower n_landmarks or pass replace=True"
        )
    rng = check_random_state(rng)
    if replace:
        return rng.integers(0, n_samples, n_landmarks, dtype=np.int64)
    return np.sort(rng.choice(n_samples, n_landmarks, replace=False)).astype(np.int64, copy=False)


def sample_row_indices(n_samples, n_rows, seed):
    """Sorted indices of ``min(n_rows, n_samples)`` distinct rows, uniform; all rows when they fit.

    Parameters
    ----------
    n_samples : int
    n_rows : int
    seed : int, sequence of int or Generator
        Seeds ``numpy.random.default_rng`` (a Generator is drawn from as it is).

    Examples
    --------
    >>> sample_row_indices(5, 10, seed=0).tolist()
    [0, 1, 2, 3, 4]
    >>> len(sample_row_indices(1000, 10, seed=0))
    10
    """
    if n_rows >= n_samples:
        return np.arange(n_samples, dtype=np.int64)
    return sample_landmarks(n_samples, n_rows, np.random.default_rng(seed))


#: rows drawn a chunk at a time by :func:`uniform_sorted_indices` (its memory)
SAMPLE_CHUNK_ROWS = 1 << 20


def uniform_sorted_indices(rng, n_rows: int, n: int, chunk: int = SAMPLE_CHUNK_ROWS) -> np.ndarray:
    """A uniform sample of ``n`` of ``range(n_rows)`` without replacement, sorted, in ``O(n + chunk)`` memory:
    how many fall in each ``chunk`` of rows (one multivariate hypergeometric draw), then that many of the chunk.

    :func:`sample_row_indices` draws with ``Generator.choice``, which permutes all ``n_rows`` indices when ``n`` is
    more than a fiftieth of them (400 MB at 50,000,000 rows): fine for its samples of 100,000 rows, not for the
    spectral embedding's statistics' sample of 1,000,000 (``statistics_rows``).  A different draw from the same
    seed, so the two are not interchangeable for a sample already committed.

    Examples
    --------
    >>> import numpy as np
    >>> idx = uniform_sorted_indices(np.random.default_rng(0), 10_000_000, 5)
    >>> idx.size, bool((np.diff(idx) > 0).all())
    (5, True)
    """
    sizes = np.full(-(-n_rows // chunk), chunk, dtype=np.int64)
    sizes[-1] = n_rows - chunk * (sizes.size - 1)
    counts = rng.multivariate_hypergeometric(sizes, n, method="marginals")
    parts = [
        start + np.sort(rng.choice(size, k, replace=False))
        for start, size, k in zip(np.arange(sizes.size) * chunk, sizes, counts, strict=True)
        if k
    ]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


class ReservoirSampler:
    r"""A uniform sample of fixed size over a stream of row blocks.

    Parameters
    ----------
    n_samples : int >= 1
        Size ``k`` of the sample (the number of landmarks).
    replace : bool, default=False
        False: a uniformly random ``k``-subset of the rows seen so far
        (all rows while fewer than ``k`` were seen).  True: ``k`` independent
        uniform draws from the rows seen (``k`` reservoirs of size one, the
        Streaming KPCA paper's construction for Nystroem).
    random_state : int, Generator or None

    Attributes
    ----------
    n_seen_ : int
        Rows seen so far.
    indices_ : ndarray of int64, shape (min(k, n_seen_),) or (k,)
        Stream positions (0-based) of the sampled rows, slot by slot.
    sample_ : ndarray or CSR matrix
        The sampled rows, slot by slot (dtype of the first block).

    Notes
    -----
    *Without replacement* this is Li's Algorithm L (an optimal form of
    Vitter's Algorithm R): after the reservoir is full, with
    ``W <- W * U^{1/k}`` the gap to the next accepted row is
    ``floor(log U' / log(1 - W))`` and the accepted row replaces a uniformly
    random slot.  *With replacement* each of the ``k`` reservoirs holding the
    ``t``-th row as its current pick next switches at row
    ``floor(t / U) + 1`` (so that row ``s`` is kept with probability
    ``t / s``), Algorithm R's rule ``P(replace at s) = 1 / s`` in skip form.

    Random numbers are drawn only at acceptance events, in stream order (ties
    broken by slot), so the sample depends on the seed and the sequence of
    rows, never on how that sequence is cut into blocks.  Cost: O(k) per
    accepted row plus O(1) per block; expected ``k (1 + log(N / k))``
    acceptances over ``N`` rows.

    References
    ----------
    J. S. Vitter. Random sampling with a reservoir. ACM TOMS 11(1), 1985.
    K.-H. Li. Reservoir-sampling algorithms of time complexity
    O(n(1 + log(N/n))). ACM TOMS 20(4), 1994.
    M. Ghashami, D. Perry, J. M. Phillips. Streaming kernel principal
    component analysis. AISTATS 2016 (Nystroem with reservoir samplers).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.maps.landmarks import ReservoirSampler
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> rs = ReservoirSampler(3, random_state=0).partial_fit(X[:4]).partial_fit(X[4:])
    >>> rs.n_seen_, rs.sample_.shape
    (10, (3, 2))
    """

    #: the fitted state ks.save writes (beyond the parameters, n_features_in_ and feature_names_in_);
    #: an attribute not listed here makes save fail, so nothing is silently lost
    _persistent_state: ClassVar[tuple[str, ...]] = (
        "_heap",
        "_n_features",
        "_next",
        "_rng",
        "_slots",
        "_sparse",
        "_w",
        "indices_",
        "n_seen_",
    )

    #: constructor arguments a saved model records (persistence); the rest is fitted state
    _init_params = ("n_samples", "replace")

    def __init__(self, n_samples, *, replace=False, random_state=None):
        self.n_samples = _check_count("n_samples", n_samples)
        self.replace = bool(replace)
        self._rng = check_random_state(random_state)
        self.n_seen_ = 0
        self._slots = None  # dense: ndarray (k, d); sparse: list of 1-row CSR
        self._sparse = None
        self._n_features = None
        self.indices_ = np.empty(0, dtype=np.int64)
        # Algorithm L state (without replacement)
        self._w = None
        self._next = None
        # with replacement: heap of (next stream position, slot)
        self._heap = None

    # -- helpers ----------------------------------------------------------
    def _store(self, slots, rows, block, offset):
        """Copy ``block[rows - offset]`` into ``slots``."""
        local = np.asarray(rows, dtype=np.int64) - offset
        if self._sparse:
            for s, i in zip(slots, local, strict=True):
                self._slots[s] = block[int(i)]
        else:
            self._slots[slots] = host_rows(block, local)  # a device block: a gather there, then a copy
        self.indices_[slots] = rows

    def _skip(self):
        # Algorithm L: gap to the next accepted row given the current W.
        # 1 - random() lies in (0, 1]: log never sees 0.
        u = 1.0 - self._rng.random()
        return int(np.floor(np.log(u) / np.log1p(-self._w))) if self._w < 1.0 else 0

    def partial_fit(self, X):
        """Feed one block of rows (dense, CSR, or a device array: only the rows kept are copied). Returns self."""
        on_device = namespace_of(X)
        if on_device is not None:  # a PyTorch / CuPy / ... block: validated there, gathered by index
            X = check_input_xp(X, on_device[0], name="X")
        else:
            X = check_input(X, accept_sparse=("csr",), name="X")
        sparse = sp.issparse(X)
        if self._sparse is None:
            self._sparse = sparse
            self._n_features = X.shape[1]
            k = self.n_samples
            if sparse:
                self._slots = [None] * k
            else:
                dtype = X.dtype if on_device is None else ("float32" if X.dtype == on_device[0].float32 else "float64")
                self._slots = np.empty((k, X.shape[1]), dtype=dtype)
            self.indices_ = np.full(k, -1, dtype=np.int64)
        elif sparse != self._sparse:
            raise TypeError("all blocks of a stream must be either dense or CSR, not a mix")
        elif X.shape[1] != self._n_features:
            raise ValueError(f"X has {X.shape[1]} features, but the stream has {self._n_features}")
        if on_device is not None:
            xp = on_device[0]
            want = xp.float32 if self._slots.dtype == np.float32 else xp.float64
            if X.dtype != want:
                X = xp.astype(X, want)
                if not bool(xp.all(xp.isfinite(X))):
                    raise ValueError(
                        f"X has a value beyond the range of {self._slots.dtype}, the dtype this landmark reservoir "
                        "took from its first block; rescale the data or start the stream in float64"
                    )
        elif not sparse and X.dtype != self._slots.dtype:
            X = cast_finite(X, self._slots.dtype, stream="landmark reservoir")
        start, stop = self.n_seen_, self.n_seen_ + X.shape[0]
        k = self.n_samples
        if self.replace:
            self._update_with_replacement(X, start, stop)
        else:
            self._update_without_replacement(X, start, stop, k)
        self.n_seen_ = stop
        return self

    def _update_without_replacement(self, X, start, stop, k):
        # 1. fill the first k slots with the first k rows of the stream
        if start < k:
            fill = np.arange(start, min(stop, k))
            self._store(fill, fill, X, start)
            if fill[-1] == k - 1:
                # reservoir just became full: initialise Algorithm L
                self._w = np.exp(np.log(1.0 - self._rng.random()) / k)
                self._next = k + self._skip()
        # 2. accepted rows replace a uniformly random slot
        while self._next is not None and self._next < stop:
            slot = int(self._rng.integers(0, k))
            self._store([slot], [self._next], X, start)
            self._w *= np.exp(np.log(1.0 - self._rng.random()) / k)
            self._next = self._next + 1 + self._skip()

    def _update_with_replacement(self, X, start, stop):
        k = self.n_samples
        if start == 0:
            # every reservoir takes the first row (P(keep row 1) = 1)
            self._store(np.arange(k), np.zeros(k, dtype=np.int64), X, 0)
            self._heap = []
            for slot in range(k):
                heapq.heappush(self._heap, (self._next_switch(1), slot))
        heap = self._heap
        while heap and heap[0][0] < stop:
            pos, slot = heapq.heappop(heap)
            self._store([slot], [pos], X, start)
            heapq.heappush(heap, (self._next_switch(pos + 1), slot))

    def _next_switch(self, t):
        """0-based position of the next switch of a reservoir that has seen ``t`` rows."""
        # P(no switch at rows t+1..s) = t / s, so the next switch (1-based) is
        # floor(t / U) + 1; 1 - random() lies in (0, 1] (no division by 0).
        u = 1.0 - self._rng.random()
        return int(min(np.floor(t / u), 2.0**62))

    @property
    def sample_(self):
        if self._slots is None:
            raise AttributeError("the sampler has seen no rows yet")
        n = self.n_samples if self.replace else min(self.n_seen_, self.n_samples)
        if self._sparse:
            return sp.vstack(self._slots[:n], format="csr")
        return self._slots[:n].copy()

    @property
    def sample_indices_(self):
        n = self.n_samples if self.replace else min(self.n_seen_, self.n_samples)
        return self.indices_[:n].copy()


#: Largest landmark count ``n_landmarks="auto"`` resolves to.  Its ``n x n``
#: float64 Gram is 128 MiB and the fit's ``O(n^3)`` eigensolver (Nystroem,
#: SubsampleKPCA) takes seconds; the paper's ``N / 100`` would need a 32 GiB Gram
#: at N = 2,000,000 and 200,000 landmarks at N = 20,000,000.
AUTO_MAX_LANDMARKS = 4096
#: the floor of ``"auto"``, and what it means for a stream (whose length is unknown)
AUTO_MIN_LANDMARKS = 200


def auto_n_landmarks(n_samples: int) -> int:
    """``"auto"``: the Kernel JL paper's ``max(200, N // 100)``, capped at :data:`AUTO_MAX_LANDMARKS` and at ``N``.

    ``N`` is the number of rows of the whole data set -- in memory, in a file or
    on a Dask cluster alike -- so one seed and one data set give one ``n``
    whatever path fits the estimator.

    Examples
    --------
    >>> [auto_n_landmarks(N) for N in (150, 20_867, 2_000_000)]
    [150, 208, 4096]
    """
    return int(min(n_samples, max(AUTO_MIN_LANDMARKS, n_samples // 100), AUTO_MAX_LANDMARKS))


def resolve_n_landmarks(n_landmarks, n_samples, *, replace=False, name="n_landmarks"):
    """A landmark count from an int or ``"auto"`` (see :func:`auto_n_landmarks`)."""
    if isinstance(n_landmarks, str):
        if n_landmarks != "auto":
            raise ValueError(f"{name} must be an int >= 1 or 'auto', got {n_landmarks!r}")
        return auto_n_landmarks(n_samples)
    n_landmarks = _check_count(name, n_landmarks)
    if not replace and n_landmarks > n_samples:
        raise ValueError(
            f"{name}={n_landmarks} must be <= n_samples={n_samples} (landmarks are drawn from X without replacement)"
        )
    return n_landmarks


def given_landmarks(landmarks, X):
    """User-given ``landmarks`` (array-like or CSR) validated against ``X`` and in X's format.

    The feature counts must agree; the result has ``X``'s dtype and is CSR when X is
    CSR, dense otherwise -- always a copy, so the fitted state does not change when
    the caller reuses its array.
    """
    L = check_input(landmarks, accept_sparse=("csr",), name="landmarks")
    if L.shape[1] != X.shape[1]:
        raise ValueError(f"landmarks have {L.shape[1]} features but X has {X.shape[1]}")
    if sp.issparse(X) and not sp.issparse(L):
        L = sp.csr_matrix(L)
    elif not sp.issparse(X) and sp.issparse(L):
        L = L.toarray()
    return L.astype(X.dtype, copy=True)


def take_rows(X, idx):
    """The rows of X at ``idx``, in that order (C-contiguous when dense)."""
    L = X[idx]
    return L if sp.issparse(L) else np.ascontiguousarray(L)


def landmark_map(X, landmarks, kernel, projection, offset=None):
    """``K(X, landmarks) @ projection + offset``, block by block (the hot path).

    Parameters
    ----------
    X : validated ndarray or CSR (N, D)
    landmarks : ndarray or CSR (n, D)
    kernel : Kernel
    projection : ndarray (n, d), float64
    offset : ndarray (d,), optional
        Added to every row (centring terms).

    Returns
    -------
    Z : ndarray (N, d) in X's dtype (float32 stays float32).

    Notes
    -----
    For kernels of GEMM form (Gaussian, polynomial, linear) on dense data,
    each chunk of rows goes through :func:`kernelsketch.kernels.tiled_gemm.gemm_map`:
    the kernel exponent's GEMM, the ``exp`` and the product with the projection
    run tile by tile while the tile is in cache, on every core, so no block of
    ``K`` larger than a tile ever exists (a chunk falls back to a whole block
    when its rows need the accurate route, see
    :class:`~kernelsketch.kernels.GaussianKernel`).  Other kernels and CSR data
    go block by block through :func:`kernelsketch.kernels.kernel_blocks`.
    Everything runs in X's dtype -- the landmarks and the projection are cast
    once, not per block.  Cost: O(N n D) kernel work + O(N n d) for the GEMMs.
    """
    dtype = np.float32 if X.dtype == np.float32 else np.float64
    L = landmarks.astype(dtype, copy=False)
    P = np.ascontiguousarray(projection, dtype=dtype)
    out = np.empty((X.shape[0], P.shape[1]), dtype=dtype)
    if kernel.gemm_form and not sp.issparse(X):
        # Kernel of GEMM form: K(X, L) @ P tile by tile in cache -- no block
        # of K is ever stored (tiled_gemm).  Chunks bound the GEMM operand A.
        prepared = kernel.prepare(L, dtype)
        itemsize = np.dtype(dtype).itemsize
        # scratch of the GEMM route, or the block of the fallback route plus its scratch
        row_bytes = L.shape[0] * itemsize + kernel.temp_bytes_per_row(X.shape[1], L.shape[0], itemsize)
        for rows in gen_row_slices(X.shape[0], get_chunk_n_rows(row_bytes, X.shape[0])):
            Xr = X[rows]
            ops = kernel.gemm_operands(Xr, prepared, dtype)
            if ops is not None:
                gemm_map(*ops, kernel.elementwise, project=P, project_out=out[rows])
            else:  # a chunk needing another route (e.g. a tiny bandwidth): whole block, then GEMM
                Kb = np.empty((Xr.shape[0], L.shape[0]), dtype=dtype)
                compute_block(kernel, Xr, prepared, Kb)
                np.matmul(Kb, P, out=out[rows])
    else:
        # Blocks of ~16 MiB stay in the last-level cache between the kernel pass
        # and the GEMM that reads them (benchmarks/results/design-measurements.md).  The budget is
        # still an upper bound.
        row_mib = 16.0 * L.shape[0] / 2**20  # one block row + its scratch, generously
        cfg = get_config()
        wm = min(cfg["working_memory"], max(cfg["cache_block_mib"], 64 * row_mib))
        for rows, Kb in kernel_blocks(X, L, kernel, validate=False, working_memory=wm):
            np.matmul(Kb, P, out=out[rows])
    if offset is not None and np.any(offset):
        out += np.asarray(offset, dtype=dtype)[None, :]
    return out
