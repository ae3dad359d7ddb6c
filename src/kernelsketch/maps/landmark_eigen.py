"""The landmark spectral embedding's maths: graph statistics in, projection and eigenvalues out.

A landmark graph ``Z`` (``N x m``: each row joined to its ``r`` nearest landmarks, weights summing to 1)
enters spectral clustering only through three sums over its rows, :class:`GraphStatistics`:
``Z^T Z`` (``m x m``), the landmark degrees ``D = Z^T 1`` and the row count ``N``.  From them,
:func:`landmark_embedding` solves the ``m x m`` eigenproblem of the normalized affinity and gives the
projection ``P`` with ``embedding(x) = z(x) @ P``, in the style of scikit-learn's
``_spectral_embedding(adjacency, ...)``: no data, no estimator.  The statistics do not depend on the
number of components, so a fitted embedding keeps them and re-solves for another ``k`` without a pass
over the rows (:meth:`~kernelsketch.maps.LandmarkSpectralEmbedding.with_components`).

Every consumer of the eigenproblem calls this module: ``LandmarkSpectralEmbedding`` (its fit),
``LandmarkSpectralClustering.eigengap_score`` (:func:`landmark_spectrum`), the stability ranking and
``diagnose`` (through the embedding they fit).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

__all__ = ["GraphStatistics", "LandmarkEigen", "landmark_embedding", "landmark_spectrum"]

#: an eigenvalue of the normalized affinity this close to 1 marks a connected component
COMPONENT_TOL = 1e-9
#: eigenvalues kept beyond ``n_components`` (for the eigengap)
EXTRA_EIGENVALUES = 10
#: the normalizations the statistics allow (``"symmetric"``: ``D^{-1/2} Z^T Z D^{-1/2}``, normalized cut)
NORMALIZATIONS = ("symmetric",)
TRIVIAL = ("keep", "drop")


class GraphStatistics(NamedTuple):
    """The sums over rows that a landmark spectral embedding needs: blocks of rows add up (:meth:`merge`).

    ``gram``: ``Z^T Z`` (``(m, m)``, dense or CSR, float64); ``degrees``: ``Z^T 1`` (``(m,)``); ``n_rows``: ``N``.
    """

    gram: Any
    degrees: np.ndarray
    n_rows: int

    @classmethod
    def merge(cls, parts) -> GraphStatistics:
        """The statistics of the union of the blocks ``parts`` (folded left, in order; ``None`` skipped)."""
        parts = [p for p in parts if p is not None]
        G, s, n = parts[0]
        return cls.add([(G.copy(), s.copy(), n), *parts[1:]])

    @classmethod
    def add(cls, parts) -> GraphStatistics:
        """:meth:`merge`, added into the first part's arrays (a fold's own running sums: no copy a block)."""
        parts = [p for p in parts if p is not None]
        G, s, n = parts[0]
        for G2, s2, n2 in parts[1:]:
            if sp.issparse(G) and not sp.issparse(G2):
                G = G.toarray()
            if sp.issparse(G):
                G = G + G2
            else:
                G += G2.toarray() if sp.issparse(G2) else G2
            s += s2
            n += n2
        return cls(G, s, n)


class LandmarkEigen(NamedTuple):
    """:func:`landmark_embedding`'s answer.

    ``projection``: ``(m, n_components)``, ``embedding(x) = z(x) @ projection``; ``eigenvalues``: the
    normalized affinity's largest eigenvalues, decreasing (``n_components`` and up to
    :data:`EXTRA_EIGENVALUES` more: the eigengap); ``n_connected_components``: eigenvalues equal to 1
    (to :data:`COMPONENT_TOL`), the graph's connected parts.
    """

    projection: np.ndarray
    eigenvalues: np.ndarray
    n_connected_components: int


def _normalized(statistics):
    """``(S, D^{-1/2})``: ``S = D^{-1/2} Z^T Z D^{-1/2}`` dense, a landmark of degree 0 left out (0)."""
    G, degrees, _ = statistics
    G = G.toarray() if sp.issparse(G) else np.asarray(G, dtype=np.float64)
    degrees = np.asarray(degrees, dtype=np.float64)
    inv_sqrt = np.zeros(degrees.shape[0])
    used = degrees > 0
    inv_sqrt[used] = 1.0 / np.sqrt(degrees[used])
    return G * inv_sqrt[:, None] * inv_sqrt[None, :], inv_sqrt


def _check(statistics):
    G, degrees, n_rows = statistics
    m = np.shape(degrees)[0]
    if np.ndim(degrees) != 1 or G.shape != (m, m):
        raise ValueError(f"graph statistics: Z^T Z must be (m, m) for m = {m} degrees, got shape {G.shape}")
    if int(n_rows) < 1:
        raise ValueError(f"graph statistics of {n_rows} rows: fit on at least one row")


def landmark_spectrum(statistics: GraphStatistics) -> np.ndarray:
    """All ``m`` eigenvalues of the normalized affinity of these statistics, decreasing (in ``[0, 1]``).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.maps.landmark_eigen import GraphStatistics, landmark_spectrum
    >>> Z = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])  # three rows, two landmarks
    >>> np.round(landmark_spectrum(GraphStatistics(Z.T @ Z, Z.sum(axis=0), 3)), 3).tolist()
    [1.0, 0.667]
    """
    _check(statistics)
    S, _ = _normalized(statistics)
    return np.clip(np.linalg.eigvalsh(S)[::-1], 0.0, None)


def landmark_embedding(
    statistics: GraphStatistics,
    n_components: int,
    *,
    normalization: str = "symmetric",
    trivial: str = "keep",
    n_eigenvalues: int | None = None,
) -> LandmarkEigen:
    """The spectral embedding of a landmark graph from its statistics: ``(projection, eigenvalues, components)``.

    With ``S = D^{-1/2} Z^T Z D^{-1/2} = V Lambda V^T`` (the ``m x m`` matrix whose top eigenvectors are those
    of the normalized row affinity ``W = Z D^{-1} Z^T``, Chen & Cai 2011), the projection is
    ``P = sqrt(N) D^{-1/2} V_k Lambda_k^{-1/2}``: the rows ``Z P`` are the top ``k`` eigenvectors of ``W``
    scaled to mean square 1 over the fitted rows (the Nystroem extension for new rows).

    Parameters
    ----------
    statistics : GraphStatistics
        ``(Z^T Z, Z^T 1, N)`` of the graph's rows.
    n_components : int >= 1
        ``k``, the eigenvectors kept.
    normalization : {"symmetric"}
        ``D^{-1/2} Z^T Z D^{-1/2}`` (normalized cut); the only one these statistics define with a trivial
        eigenvector known in closed form.
    trivial : {"keep", "drop"}
        The top eigenvector (``sqrt(D)``, eigenvalue 1: a constant column of the embedding) is one of the
        ``k`` (``"keep"``), or removed exactly (deflated, also when the graph has several parts) and the
        next ``k`` kept (``"drop"``).
    n_eigenvalues : int, optional
        Eigenvalues returned (default ``k + 10``, at most ``m``).

    Raises
    ------
    ValueError
        When the graph's rank is below the eigenvectors needed (too few distinct rows or landmarks).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.maps.landmark_eigen import GraphStatistics, landmark_embedding
    >>> Z = np.array([[1.0, 0.0, 0.0], [0.6, 0.4, 0.0], [0.0, 0.5, 0.5], [0.0, 0.0, 1.0]])
    >>> P, lam, parts = landmark_embedding(GraphStatistics(Z.T @ Z, Z.sum(axis=0), 4), 2)
    >>> U = Z @ P  # the embedding of the fitted rows: columns of mean square 1
    >>> np.round((U**2).mean(axis=0), 6).tolist(), parts
    ([1.0, 1.0], 1)
    """
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"normalization must be one of {NORMALIZATIONS}, got {normalization!r}")
    if trivial not in TRIVIAL:
        raise ValueError(f"trivial must be one of {TRIVIAL}, got {trivial!r}")
    _check(statistics)
    _, degrees, n_rows = statistics
    S, inv_sqrt = _normalized(statistics)
    m, k = S.shape[0], int(n_components)
    drop = trivial == "drop"
    if k < 1:
        raise ValueError(f"n_components must be >= 1, got {k}")
    if k > m:
        raise ValueError(
            f"the landmark graph has {m} landmark(s), fewer than the {k} eigenvectors needed for {k} clusters: "
            "too few distinct rows or landmarks for this many clusters"
        )
    if drop:
        # the trivial eigenvector of S (eigenvalue 1) is known exactly: sqrt(degrees), normalized; with
        # several connected parts it is one direction of the eigenvalue-1 space, not "column 0"
        v0 = np.sqrt(np.clip(np.asarray(degrees, dtype=np.float64), 0.0, None))
        v0 /= np.linalg.norm(v0)
        S = S - np.outer(v0, v0)
    lam, V = np.linalg.eigh(S)
    lam, V = lam[::-1], V[:, ::-1]
    lam = np.clip(lam, 0.0, None)
    # S's own eigenvalues: S' and S share all but v0's (0 in S', 1 in S), and 1 is S's largest
    lam_S = np.concatenate([[1.0], lam[:-1]]) if drop else lam
    if not lam[k - 1] > 1e-12 * max(lam_S[0], 1e-300):
        raise ValueError(
            f"the landmark graph has rank {int(np.sum(lam_S > 1e-12 * lam_S[0]))}, fewer than the "
            f"{k + drop} eigenvectors needed for {k} clusters: too few distinct rows or landmarks for this "
            "many clusters"
        )
    projection = np.sqrt(n_rows) * inv_sqrt[:, None] * V[:, :k] / np.sqrt(lam[:k])[None, :]
    n_eig = min(m, k + EXTRA_EIGENVALUES if n_eigenvalues is None else int(n_eigenvalues))
    return LandmarkEigen(projection, lam_S[:n_eig].copy(), int(np.sum(lam_S > 1.0 - COMPONENT_TOL)))
