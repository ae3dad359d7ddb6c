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

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "CANDIDATES",
    "CHOOSERS",
    "LABELINGS",
    "RULES",
    "Labeling",
    "LabelingContext",
    "choose_labeling",
    "empty_cluster_message",
    "landmark_vote_projection",
    "near_neighbor_dunn",
    "normalized_cut",
    "vote_labels",
]

#: the labelings a rule can choose among (each a function of a :class:`LabelingContext`; see :class:`Labeling`)
CANDIDATES: dict[str, Any] = {}

#: the choosers: each scores a candidate's labels of the judged rows (higher is better)
CHOOSERS: dict[str, Any] = {}

#: ``assign_labels`` -> (candidates, chooser): one candidate needs no chooser.  ``"auto"`` is the rule the pool
#: protocol chose (``benchmarks/cluster_pool.py``); the others are what it chose among, by name.
RULES = {
    "kmeans": (("kmeans",), None),
    "genie": (("genie",), None),
    "cut": (("kmeans", "genie"), "cut"),
    "dunn": (("kmeans", "genie"), "dunn"),
    "dunn_sample": (("kmeans", "genie", "genie_sample"), "dunn"),
}
#: the rule ``assign_labels="auto"`` runs
AUTO_RULE = "cut"
RULES["auto"] = RULES[AUTO_RULE]

#: ``assign_labels`` of :class:`~kernelsketch.cluster.LandmarkSpectralClustering`
LABELINGS = ("auto", *(name for name in RULES if name != "auto"))

#: rows of the judged sample that Genie (``"genie_sample"``) and the near-neighbour Dunn index see: a bound, so
#: that their cost does not grow with N (``O(S^2 d)`` each)
JUDGED_ROWS = 5000
#: the Dunn index's near neighbours (Gagolewski, Bartoszuk & Cena 2021, their ``M = 25``)
DUNN_NEIGHBORS = 25


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


@dataclass
class LabelingContext:
    """What a candidate labeling and a chooser see: the rows k-means was seeded on (all rows in memory).

    ``indices``, ``weights``: each row's landmark graph; ``landmarks``: the ``(m, d)`` landmarks;
    ``kmeans_labels``: k-means' labels of these rows; ``rows``: the rows' features as clustered (None where a
    rule needs none); ``random_state``: the fit's seed (the judged subsample of :data:`JUDGED_ROWS` rows).
    """

    indices: np.ndarray
    weights: np.ndarray
    landmarks: Any
    kmeans_labels: np.ndarray
    n_clusters: int
    rows: Any = None
    random_state: Any = 0
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def judged(self):
        """Indices of at most :data:`JUDGED_ROWS` of the rows (a seeded uniform draw, sorted; all when fewer)."""
        if "judged" not in self._cache:
            from ..utils.validation import derive_seed

            n = self.indices.shape[0]
            rng = np.random.default_rng(derive_seed(self.random_state) + 2)
            idx = np.arange(n) if n <= JUDGED_ROWS else np.sort(rng.choice(n, JUDGED_ROWS, replace=False))
            self._cache["judged"] = idx
        return self._cache["judged"]

    def judged_rows(self):
        """The judged rows' features, dense float64."""
        if "rows" not in self._cache:
            import scipy.sparse as sp

            if self.rows is None:
                raise ValueError("this labeling rule needs the rows' features, and none were given")
            R = self.rows[self.judged]
            R = R.toarray() if sp.issparse(R) else np.asarray(R)
            self._cache["rows"] = np.asarray(R, dtype=np.float64)
        return self._cache["rows"]


@dataclass
class Labeling:
    """A partition of the judged rows and how every other row follows it.

    ``landmark_labels`` None: each row's label is its nearest k-means centre in the embedding; else the landmarks'
    labels, each row taking the label of largest total weight in its graph (:func:`vote_labels`).  ``labels``:
    the judged rows' labels as that assignment gives them.
    """

    name: str
    landmark_labels: np.ndarray | None
    labels: np.ndarray


def _kmeans(ctx):
    return Labeling("kmeans", None, np.asarray(ctx.kmeans_labels))


def _genie(ctx):
    from .genie import genie_labels

    genie = genie_labels(ctx.landmarks, min(ctx.n_clusters, np.asarray(ctx.landmarks).shape[0]))
    return Labeling("genie", genie, vote_labels(ctx.indices, ctx.weights, genie, ctx.n_clusters))


def _genie_sample(ctx):
    """Genie on the judged rows (up to :data:`JUDGED_ROWS`: finer than the landmarks), each landmark taking the
    label of its nearest judged row, each row following its graph's vote (the same assignment as ``"genie"``)."""
    import scipy.sparse as sp
    from sklearn.neighbors import NearestNeighbors

    from .genie import genie_labels

    R = ctx.judged_rows()
    sample = genie_labels(R, min(ctx.n_clusters, R.shape[0]))
    L = ctx.landmarks.toarray() if sp.issparse(ctx.landmarks) else np.asarray(ctx.landmarks, dtype=np.float64)
    nearest = NearestNeighbors(n_neighbors=1).fit(R).kneighbors(L, return_distance=False)[:, 0]
    landmark_labels = sample[nearest]
    return Labeling(
        "genie_sample", landmark_labels, vote_labels(ctx.indices, ctx.weights, landmark_labels, ctx.n_clusters)
    )


CANDIDATES.update(kmeans=_kmeans, genie=_genie, genie_sample=_genie_sample)


def _cut_score(ctx, labeling):
    return -normalized_cut(ctx.indices, ctx.weights, np.asarray(ctx.landmarks).shape[0], labeling.labels)


def _dunn_score(ctx, labeling):
    return near_neighbor_dunn(ctx.judged_rows(), labeling.labels[ctx.judged], DUNN_NEIGHBORS)


CHOOSERS.update(cut=_cut_score, dunn=_dunn_score)


def near_neighbor_dunn(X, labels, n_neighbors=DUNN_NEIGHBORS):
    """The near-neighbour generalised Dunn index with the Min / Max operators (higher is better).

    Gagolewski, Bartoszuk & Cena (2021): over every row's ``M = n_neighbors`` nearest neighbours (exact), the
    smallest distance of a pair in different clusters, divided by the largest distance of a pair in the same
    cluster.  ``inf`` when no near-neighbour pair crosses clusters (or none lies inside one); ``-inf`` when a
    cluster has at most ``M`` rows (too few to hold a row's near neighbours: the reference's convention, so a
    partition that splits off a handful of rows scores below any other).  Written from the
    paper; equal to ``genieclust.cluster_validity.dunnowa_index(X, y, M, "Min", "Max")`` (a test compares them).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [5.5], [6.5], [7.5], [8.5]])
    >>> round(near_neighbor_dunn(X, [0, 0, 0, 0, 1, 1, 1, 1], n_neighbors=3), 4)  # 3 -> 5.5 crosses: 2.5 / 3
    0.8333
    """
    from sklearn.neighbors import NearestNeighbors

    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels)
    if X.shape[0] != labels.shape[0]:
        raise ValueError(f"{labels.shape[0]} labels for {X.shape[0]} rows")
    M = min(int(n_neighbors), X.shape[0] - 1)
    if M < 1:
        return np.inf
    sizes = np.unique(labels, return_counts=True)[1]
    if sizes.min() <= M:
        return -np.inf
    d, idx = NearestNeighbors(n_neighbors=M + 1).fit(X).kneighbors(X)
    d, idx = d[:, 1:], idx[:, 1:]  # (each row without itself; a duplicate row may take its place: distance 0)
    cross = labels[idx] != labels[:, None]
    separation = d[cross].min() if cross.any() else np.inf
    spread = d[~cross].max() if (~cross).any() else 0.0
    return float(separation / spread) if spread > 0 else np.inf


def choose_labeling(ctx, assign_labels="auto"):
    """``(labeling, scores)``: the :class:`Labeling` rule ``assign_labels`` keeps (:data:`RULES`), and each
    candidate's scores (``{"cut": {name: normalized cut}, "clusters": {name: non-empty clusters among the
    judged rows}, chooser: {name: score}}``).

    A candidate with more non-empty clusters among the judged rows is kept first (an empty cluster has no term in
    the cut, so the cut would favour it; no rule keeps fewer clusters while another candidate has ``k``); then the
    chooser's higher score; then the lower normalized cut; then the first listed.
    """
    if assign_labels not in RULES:
        raise ValueError(f"assign_labels must be one of {LABELINGS}, got {assign_labels!r}")
    names, chooser = RULES[assign_labels]
    candidates = [CANDIDATES[name](ctx) for name in names]
    m = np.asarray(ctx.landmarks).shape[0]
    cuts = {c.name: normalized_cut(ctx.indices, ctx.weights, m, c.labels) for c in candidates}
    filled = {c.name: int(np.unique(c.labels).size) for c in candidates}
    preferred = {c.name: CHOOSERS[chooser](ctx, c) for c in candidates} if chooser is not None else {}
    scores = {"cut": cuts, "clusters": filled} | ({chooser: preferred} if chooser not in (None, "cut") else {})

    def rank(i):
        c = candidates[i]
        return (filled[c.name], preferred.get(c.name, 0.0), -cuts[c.name], -i)

    return candidates[max(range(len(candidates)), key=rank)], scores


#: what each labeling is, in a message
_LABELING_NAMES = {
    "kmeans": "k-means on the spectral embedding",
    "genie": "Genie's partition of the landmarks (each row following its graph's vote)",
    "genie_sample": "Genie's partition of a sample of rows (each row following its landmarks' vote)",
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
    other = None if not labeling else ("genie" if labeling == "kmeans" else "kmeans")
    # ("auto" kept this labeling because the other left as many clusters empty, or more, on k-means' sample)
    instead = f", or the other labeling (assign_labels={other!r})" if other and assign_labels != "auto" else ""
    return (
        f"{empty.size} of {int(n_clusters)} clusters are empty (clusters {empty.tolist()}): {by} gave rows to "
        f"{int(n_clusters) - empty.size} clusters.  The data may hold fewer groups than n_clusters, or many "
        f"identical rows; try a smaller n_clusters, more landmarks (n_landmarks){instead}"
    )
