"""The rows' labels from their landmark graph: k-means on the embedding, or Genie on the landmarks, by normalized cut.

Both are approximations of one objective, the normalized cut of the landmark graph ``W = Z D^-1 Z^T`` (``Z``: each
row's ``r`` Gaussian weights to its nearest landmarks, summing to 1; ``D = Z^T 1``), which the spectral
embedding relaxes: k-means on the embedded rows rounds the relaxation, and Genie's hierarchy on the landmarks
(:func:`~kernelsketch.cluster.genie.genie_labels`), each row then taking the landmarks' labels by the weighted
vote of its graph row, follows chains and thin bridges that the rounding cuts.  The default clustering keeps
whichever partition has the lower cut on the rows k-means was seeded on (:func:`choose_labeling`): the candidate
``F1`` of ``benchmarks/cluster_pool.py``, chosen there by leave-one-group-out on 48 labelled sets.

Every row of ``W`` has degree 1 (``W 1 = Z D^-1 Z^T 1 = Z 1 = 1``), so for clusters ``A_c`` with indicator ``y_c``,
``Ncut = sum_c cut(A_c) / vol(A_c) = k - sum_c (Z^T y_c)^T D^-1 (Z^T y_c) / |A_c|``: one sweep over the rows' graph.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "LABELINGS",
    "choose_labeling",
    "empty_cluster_message",
    "landmark_vote_projection",
    "normalized_cut",
    "vote_labels",
]

#: ``assign_labels`` of :class:`~kernelsketch.cluster.LandmarkSpectralClustering`: the lower cut of the two, or one
LABELINGS = ("auto", "kmeans", "genie")


def _check_graph(indices, weights):
    indices, weights = np.asarray(indices), np.asarray(weights, dtype=np.float64)
    if indices.ndim != 2 or indices.shape != weights.shape:
        raise ValueError(
            f"a graph's indices and weights must be (rows, r) alike, got {indices.shape} and {weights.shape}"
        )
    return indices, weights


def normalized_cut(indices, weights, n_landmarks, labels):
    """The normalized cut of the partition ``labels`` of the rows of a landmark graph (lower is better; in
    ``[0, k - 1]`` for ``k`` non-empty clusters).

    Parameters
    ----------
    indices, weights : ndarray (n, r)
        Each row's landmarks and its weights (summing to 1), as the landmark spectral embedding's graph.
    n_landmarks : int
    labels : array-like (n,)

    Examples
    --------
    >>> import numpy as np
    >>> indices = np.array([[0, 1], [1, 0], [2, 3], [3, 2]])  # two pairs of rows on two pairs of landmarks
    >>> weights = np.full((4, 2), 0.5)
    >>> normalized_cut(indices, weights, 4, [0, 0, 1, 1]), round(normalized_cut(indices, weights, 4, [0, 1, 0, 1]), 3)
    (0.0, 1.0)
    """
    indices, weights = _check_graph(indices, weights)
    labels = np.unique(np.asarray(labels), return_inverse=True)[1].ravel()
    if labels.shape[0] != indices.shape[0]:
        raise ValueError(f"{labels.shape[0]} labels for a graph of {indices.shape[0]} rows")
    k = int(labels.max()) + 1 if labels.size else 0
    flat = (indices.astype(np.int64) * k + labels[:, None]).ravel()
    ZtY = np.bincount(flat, weights=weights.ravel(), minlength=int(n_landmarks) * k).reshape(int(n_landmarks), k)
    degrees = ZtY.sum(axis=1)
    inv = np.divide(1.0, degrees, out=np.zeros_like(degrees), where=degrees > 0)
    assoc = np.einsum("mc,m,mc->c", ZtY, inv, ZtY)
    sizes = np.bincount(labels, minlength=k).astype(np.float64)
    return float(max(k - np.sum(assoc / sizes), 0.0))


def landmark_vote_projection(landmark_labels, n_clusters):
    """The ``(m, k)`` one-hot matrix of the landmarks' labels: ``Z @ it`` is each row's vote (its graph weights summed
    per cluster), and the vote's largest entry is its nearest corner of the simplex, so the nearest-centre
    assignment of these votes to the identity's rows is the weighted vote (the assignment pass of k-means, reused)."""
    landmark_labels = np.asarray(landmark_labels, dtype=np.int64)
    Y = np.zeros((landmark_labels.shape[0], int(n_clusters)))
    Y[np.arange(landmark_labels.shape[0]), landmark_labels] = 1.0
    return Y


def vote_labels(indices, weights, landmark_labels, n_clusters):
    """Each row's label: the landmarks' label with the largest total weight in its graph row (ties: the smaller),
    the largest entry of its vote ``Z @ landmark_vote_projection(...)``."""
    from ..kernels.neighbors import graph_embed

    indices, weights = _check_graph(indices, weights)
    return graph_embed(indices, weights, landmark_vote_projection(landmark_labels, n_clusters)).argmax(axis=1)


def choose_labeling(indices, weights, landmarks, kmeans_labels, n_clusters, assign_labels="auto"):
    """``(labeling, landmark_labels, cuts)``: which partition of the rows given by their graph to keep.

    ``"kmeans"`` keeps ``kmeans_labels``; ``"genie"`` Genie's partition of ``landmarks`` into ``n_clusters``
    with every row following its graph's vote; ``"auto"`` the one with more non-empty clusters on these rows
    (a partition that leaves a cluster empty is never kept while the other has all ``n_clusters``: an empty
    cluster has no term in the cut, so the cut would favour it), then the one of lower :func:`normalized_cut`
    (ties: k-means).  ``landmark_labels`` is Genie's (None for ``"kmeans"``); ``cuts`` maps each partition
    computed to its cut.
    """
    from .genie import genie_labels

    if assign_labels not in LABELINGS:
        raise ValueError(f"assign_labels must be one of {LABELINGS}, got {assign_labels!r}")
    if assign_labels == "kmeans":
        return "kmeans", None, {}
    k = int(n_clusters)
    genie = genie_labels(landmarks, min(k, np.asarray(landmarks).shape[0]))
    m = genie.shape[0]
    votes = vote_labels(indices, weights, genie, k)
    cuts = {"genie": normalized_cut(indices, weights, m, votes)}
    if assign_labels == "genie":
        return "genie", genie, cuts
    cuts["kmeans"] = normalized_cut(indices, weights, m, kmeans_labels)
    filled = {"genie": np.unique(votes).size, "kmeans": np.unique(np.asarray(kmeans_labels)).size}
    if filled["genie"] != filled["kmeans"]:
        return max(filled, key=filled.__getitem__), genie, cuts
    return ("genie" if cuts["genie"] < cuts["kmeans"] else "kmeans"), genie, cuts


#: what each labeling is, in a message
_LABELING_NAMES = {
    "kmeans": "k-means on the spectral embedding",
    "genie": "Genie's partition of the landmarks (each row following its graph's vote)",
}


def empty_cluster_message(sizes, n_clusters, labeling=None, assign_labels=None):
    """The message for clusters without a row (None when every one of ``n_clusters`` has one): how many and
    which, the labeling that left them empty, and what to try."""
    sizes = np.asarray(sizes)
    sizes = np.pad(sizes, (0, max(0, int(n_clusters) - sizes.size)))
    empty = np.flatnonzero(sizes == 0)
    if not empty.size:
        return None
    by = _LABELING_NAMES.get(labeling, labeling) if labeling else "the labels"
    other = {"kmeans": "genie", "genie": "kmeans"}.get(labeling)
    # ("auto" kept this labeling because the other left as many clusters empty, or more, on k-means' sample)
    instead = f", or the other labeling (assign_labels={other!r})" if other and assign_labels != "auto" else ""
    return (
        f"{empty.size} of {int(n_clusters)} clusters are empty (clusters {empty.tolist()}): {by} gave rows to "
        f"{int(n_clusters) - empty.size} clusters.  The data may hold fewer groups than n_clusters, or many "
        f"identical rows; try a smaller n_clusters, more landmarks (n_landmarks){instead}"
    )
