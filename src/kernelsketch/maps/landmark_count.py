"""How many landmarks the data needs: the smallest count whose Nystroem error on held-out rows meets a target.

``n_landmarks="auto"`` picks a count from the number of rows alone (the Kernel JL
paper's ``max(200, N / 100)``).  The count a data set needs depends on its kernel
spectrum instead: a smooth kernel on low-dimensional data is captured by a few hundred
landmarks at any N, a narrow one on MNIST needs thousands.  :func:`choose_n_landmarks`
measures it on a sample:

1. the sample is split into ``n_eval`` held-out rows ``S`` and a pool ``P`` of
   candidate landmarks, both uniform (a prefix of a uniform permutation is a uniform
   sample, so the pool's first ``m`` rows are the landmarks a uniform draw of ``m``
   would give);
2. the pool holds as many candidates as the budget allows (``max_landmarks``, and
   ``memory_mib`` for the fit's ``m x m`` Gram and eigensolver: about ``24 m^2`` bytes);
   ``K(S, P)`` is computed as far as the grid reaches, and of ``K(P, P)`` only each draw's
   own block;
3. for ``m`` on a doubling grid from ``start``, the Nystroem approximation of the
   held-out Gram, ``K(S, P_m) K(P_m, P_m)^+ K(P_m, S)``, is compared with ``K(S, S)``
   for up to :data:`DRAWS` disjoint sets ``P_m`` of ``m`` candidates (the estimator draws
   its own landmarks, and a small set's error varies from draw to draw), and the worst
   is kept; the first ``m`` whose relative Frobenius error is at most ``target`` is chosen.
   When none is, the largest allowed count is, and the choice says so.

The error is the one ``kernelsketch diagnose`` reports for its landmark
recommendation (relative Frobenius norm of the Gram residual), measured on rows that
are not landmarks, so it estimates the error on the rest of the data.
"""

from __future__ import annotations

import math
import numbers
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from .landmarks import AUTO_MAX_LANDMARKS

__all__ = ["LandmarkChoice", "choose_n_landmarks"]

#: disjoint landmark sets each count is measured on (as many as the candidates hold); the worst counts
DRAWS = 3
#: bytes per ``m^2`` a landmark fit holds at its peak: the float64 Gram, its eigenvectors and LAPACK's workspace
FIT_BYTES_PER_M2 = 24


@dataclass
class LandmarkChoice:
    """What :func:`choose_n_landmarks` chose and why.

    Attributes
    ----------
    n_landmarks : int
        The chosen count.
    target : float
        The relative Frobenius error asked for.
    reached : bool
        Whether ``n_landmarks`` meets ``target`` (False: the largest allowed count, which does not).
    relative_frobenius : float
        The held-out error at ``n_landmarks``.
    limit : int
        The largest count the budget allowed, and ``limited_by`` what set it: ``"max_landmarks"``,
        ``"memory"`` or ``"rows"`` (the sample's rows outside the held-out set).
    grid : list of dict
        Every count measured: ``n_landmarks``, ``relative_frobenius`` (the worst of ``draws``
        disjoint landmark sets), ``draws``, ``seconds``.
    n_eval : int
        Held-out rows the error was measured on.
    """

    n_landmarks: int
    target: float
    reached: bool
    relative_frobenius: float
    limit: int
    limited_by: str
    n_eval: int
    grid: list = field(default_factory=list)

    @property
    def reason(self) -> str:
        """One sentence: the count, its error against the target, and what bounded the search."""
        err = f"a relative Gram error of {self.relative_frobenius:.3g} on {self.n_eval} held-out rows"
        if self.reached:
            smaller = [g for g in self.grid if g["n_landmarks"] < self.n_landmarks]
            below = f"; {smaller[-1]['n_landmarks']} gave {smaller[-1]['relative_frobenius']:.3g}" if smaller else ""
            return f"n_landmarks = {self.n_landmarks}: the fewest on the grid reaching {err} <= {self.target:g}{below}"
        return (
            f"n_landmarks = {self.n_landmarks}: {err}, above the target {self.target:g}; no more are allowed "
            f"(limited by {self.limited_by}: at most {self.limit}); a wider bandwidth or a larger target is needed"
        )

    def to_dict(self):
        return {
            "n_landmarks": self.n_landmarks,
            "target": self.target,
            "reached": self.reached,
            "relative_frobenius": self.relative_frobenius,
            "limit": self.limit,
            "limited_by": self.limited_by,
            "n_eval": self.n_eval,
            "grid": list(self.grid),
            "reason": self.reason,
        }


def _check(name, value, low, high=None, integral=False):
    ok_type = numbers.Integral if integral else numbers.Real
    if isinstance(value, bool) or not isinstance(value, ok_type) or not math.isfinite(value):
        raise TypeError(f"{name} must be {'an int' if integral else 'a number'}, got {value!r}")
    if value < low or (high is not None and value >= high) or (not integral and value <= low):
        span = f"> {low}" if not integral else f">= {low}"
        raise ValueError(f"{name} must be {span}{f' and < {high}' if high is not None else ''}, got {value!r}")


def memory_limit(memory_mib: float) -> int:
    """The largest landmark count whose fit (about ``24 m^2`` bytes) fits in ``memory_mib``."""
    return math.isqrt(int(memory_mib * 2**20) // FIT_BYTES_PER_M2)


def _nystroem_error(Kss, C, W):
    """``||Kss - C W^+ C^T||_F``: ``W``'s eigenpairs below round-off are dropped, as the estimators do."""
    lam, V = np.linalg.eigh(W)
    keep = lam > lam[-1] * W.shape[0] * np.finfo(np.float64).eps * 10
    F = C @ (V[:, keep] / np.sqrt(lam[keep]))
    return float(np.linalg.norm(Kss - F @ F.T))


def choose_n_landmarks(
    X,
    kernel,
    *,
    target: float = 0.05,
    max_landmarks: int = AUTO_MAX_LANDMARKS,
    memory_mib: float = 512.0,
    n_eval: int = 1000,
    start: int = 50,
    random_state=0,
) -> LandmarkChoice:
    """The fewest uniform landmarks whose Nystroem Gram error on held-out rows is at most ``target``.

    Parameters
    ----------
    X : ndarray (n, D)
        A uniform sample of the data (``n_eval`` rows are held out, the rest are candidate landmarks).
    kernel : Kernel
        The kernel the estimator will use, bandwidth resolved
        (:func:`kernelsketch.kernels.get_kernel`; :func:`kernelsketch.choose_landmarks`
        resolves an estimator's own on the data).
    target : float in (0, 1), default=0.05
        Relative Frobenius error ``||K - K_hat||_F / ||K||_F`` of the held-out rows' Gram.
    max_landmarks : int, default=4096
        The most the search may choose (the ``"auto"`` cap).
    memory_mib : float, default=512
        Memory the fit may use: the count is at most ``sqrt(memory_mib * 2^20 / 24)``.
    n_eval : int, default=1000
        Held-out rows (at most half the sample).
    start : int, default=50
        The grid's first count; it doubles up to the limit (which is measured last).
    random_state : int, RandomState or None
        Seeds the split of the sample.

    Returns
    -------
    LandmarkChoice
        ``.n_landmarks`` and ``.reason`` (what it reached, against what, and what limited it).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.kernels import get_kernel
    >>> from kernelsketch.maps.landmark_count import choose_n_landmarks
    >>> X = np.random.default_rng(0).normal(size=(3000, 2))
    >>> choice = choose_n_landmarks(X, get_kernel("gaussian", bandwidth=1.0), target=0.01, start=25)
    >>> choice.reached, choice.n_landmarks, [g["n_landmarks"] for g in choice.grid]
    (True, 200, [25, 50, 100, 200])
    """
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"choose_n_landmarks needs a 2-D sample, got shape {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError("the sample holds NaN or infinity")
    _check("target", target, 0.0, 1.0)
    _check("max_landmarks", max_landmarks, 1, integral=True)
    _check("memory_mib", memory_mib, 0.0)
    _check("n_eval", n_eval, 1, integral=True)
    _check("start", start, 1, integral=True)
    n = X.shape[0]
    if n < 4:
        raise ValueError(f"choose_n_landmarks needs at least 4 rows to hold some out, got {n}")
    n_eval = min(n_eval, n // 2)
    limits = {"max_landmarks": int(max_landmarks), "memory": memory_limit(memory_mib), "rows": n - n_eval}
    limited_by = min(limits, key=lambda k: (limits[k], k != "rows"))
    limit = limits[limited_by]
    if limit < 1:
        raise ValueError(f"memory_mib={memory_mib!r} leaves room for no landmark")
    perm = check_random_state(random_state).permutation(n)
    S, P = X[perm[:n_eval]], X[perm[n_eval : n_eval + limit]]
    Kss = kernel(S, S)
    norm = float(np.linalg.norm(Kss))
    if norm == 0:
        raise ValueError("the held-out rows' Gram is zero: the kernel gives no similarity to approximate")
    # K(S, P) grows with the grid, and each draw needs only its own m x m block of K(P, P): a search
    # that stops at m evaluates about 4 (n_eval + m) m entries, not (n_eval + limit) limit
    C = np.empty((S.shape[0], 0))
    grid, m = [], min(start, limit)
    while True:
        t = time.perf_counter()
        # the worst of up to DRAWS disjoint landmark sets: the estimator will draw its own, and a
        # small set's error varies from draw to draw (one draw of 50 can pass where the next fails)
        n_draws = max(1, min(DRAWS, limit // m))
        if C.shape[1] < n_draws * m:
            C = np.hstack([C, kernel(S, P[C.shape[1] : n_draws * m])])
        errs = []
        for k in range(n_draws):
            L = P[k * m : (k + 1) * m]
            errs.append(_nystroem_error(Kss, C[:, k * m : (k + 1) * m], kernel(L, L)) / norm)
        err = max(errs)
        grid.append(
            {"n_landmarks": int(m), "relative_frobenius": err, "draws": len(errs), "seconds": time.perf_counter() - t}
        )
        if err <= target or m >= limit:
            break
        m = min(2 * m, limit)
    last = grid[-1]
    return LandmarkChoice(
        n_landmarks=last["n_landmarks"],
        target=float(target),
        reached=last["relative_frobenius"] <= target,
        relative_frobenius=last["relative_frobenius"],
        limit=limit,
        limited_by=limited_by,
        n_eval=n_eval,
        grid=grid,
    )
