"""Choosing the number of clusters without labels: stability of the default clustering under resampling.

Lange, Roth, Braun & Buhmann, "Stability-based validation of clustering solutions", Neural
Computation 16 (2004): split the rows into two random halves A and B; cluster A and carry its
clustering over to B (here with the fitted model's own out-of-sample map: A's spectral embedding
and A's k-means centres label B's rows); cluster B on its own; compare the two labelings of B.  A
``k`` that matches structure in the data gives the same partition from either half; a ``k`` that
cuts a group in two, or merges two, does not.  Two agreement measures are computed for every pair:

- ``ari``: the adjusted Rand index of the two labelings of B (chance-corrected, so comparable across
  ``k``; Ben-Hur, Elisseeff & Guyon 2002 use a similar matching score between subsamples);
- ``lange``: Lange et al.'s instability ``min over label permutations of the fraction of B's rows
  labelled differently``, divided by the same quantity for two random labelings with ``k`` groups
  (which removes its growth with ``k``); lower is more stable.

The clustering is the default spectral clustering's (:class:`~kernelsketch.maps.LandmarkSpectralEmbedding`
with its defaults, then k-means with 3 starts).  Its embedding for ``k`` clusters is the first ``k``
columns of the embedding for more (the top eigenvectors of one normalized affinity), so each half is
embedded once, at the largest ``k``, and k-means runs on the first ``k`` columns for every candidate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["StabilityResult", "clustering_stability", "estimator_stability", "permutation_disagreement"]


def permutation_disagreement(a, b):
    """The fraction of rows labelled differently by ``a`` and ``b``, under the best matching of their labels."""
    from scipy.optimize import linear_sum_assignment

    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"two non-empty 1-D labelings of one length are needed, got shapes {a.shape} and {b.shape}")
    _, ai = np.unique(a, return_inverse=True)
    _, bi = np.unique(b, return_inverse=True)
    table = np.zeros((ai.max() + 1, bi.max() + 1))
    np.add.at(table, (ai, bi), 1.0)
    rows, cols = linear_sum_assignment(-table)
    return 1.0 - table[rows, cols].sum() / a.size


def _halves(n, rng):
    """Two disjoint random halves of ``range(n)``, each sorted (one row left out when ``n`` is odd)."""
    perm = rng.permutation(n)
    half = n // 2
    return np.sort(perm[:half]), np.sort(perm[half : 2 * half])


def _random_disagreement(n, k, rng, draws=20):
    """The mean permutation disagreement of two uniform random labelings of ``n`` rows with ``k`` groups."""
    return float(
        np.mean([permutation_disagreement(rng.integers(0, k, n), rng.integers(0, k, n)) for _ in range(draws)])
    )


@dataclass
class StabilityResult:
    """Per candidate ``k``: the two halves' agreement, over ``n_pairs`` random splits.

    Attributes
    ----------
    ks : list of int
    ari : ndarray (n_pairs, len(ks))
        Adjusted Rand index of half B's two labelings (carried over from A, and its own).
    instability : ndarray (n_pairs, len(ks))
        Lange et al.'s permutation disagreement of the same two labelings.
    random_instability : ndarray (len(ks),)
        The disagreement of two random labelings with ``k`` groups (the normalization).
    """

    ks: list
    ari: np.ndarray
    instability: np.ndarray
    random_instability: np.ndarray
    params: dict = field(default_factory=dict)

    @property
    def mean_ari(self):
        return self.ari.mean(axis=0)

    @property
    def normalized_instability(self):
        """Lange et al.'s ``S(k) / S(R_k)``: lower is more stable."""
        return self.instability.mean(axis=0) / self.random_instability

    def best_k(self, criterion="ari"):
        """The most stable ``k``: the largest mean ARI (``"ari"``) or the lowest normalized instability
        (``"lange"``); ties go to the smaller ``k``."""
        if criterion == "ari":
            return int(self.ks[int(np.argmax(self.mean_ari))])
        if criterion == "lange":
            return int(self.ks[int(np.argmin(self.normalized_instability))])
        raise ValueError(f"criterion must be 'ari' or 'lange', got {criterion!r}")

    def ranking(self, criterion="ari"):
        """``[{"k", "stability"}]`` best first (``stability`` the mean ARI, or 1 - normalized instability)."""
        score = self.mean_ari if criterion == "ari" else 1.0 - self.normalized_instability
        order = sorted(range(len(self.ks)), key=lambda i: (-score[i], self.ks[i]))
        return [{"k": int(self.ks[i]), "stability": float(score[i])} for i in order]


def clustering_stability(X, ks, *, n_pairs=5, n_landmarks=1000, n_neighbors=10, n_init=3, random_state=0):
    """How stable the default spectral clustering of ``X`` is for each ``k`` in ``ks`` (in memory).

    Parameters
    ----------
    X : ndarray (n_samples, n_features)
        The rows (a sample of a larger set is enough: each half holds ``n_samples // 2`` of them),
        already preprocessed as the clustering will see them (standardized, codes replaced).
    ks : iterable of int >= 2
        The candidate numbers of clusters.
    n_pairs : int >= 1, default=5
        Random splits into two halves.
    n_landmarks, n_neighbors : int
        The embedding's (capped at the half's rows).
    n_init : int, default=3
        k-means starts, as ``cluster``'s default.
    random_state : int, default=0
        Seeds the splits, the landmarks and k-means: the same value gives the same result.

    Returns
    -------
    StabilityResult

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from kernelsketch.cluster.stability import clustering_stability
    >>> X, _ = make_blobs(800, centers=4, cluster_std=0.6, random_state=1)
    >>> clustering_stability(X, range(2, 8), n_pairs=3).best_k()
    4
    """
    import warnings

    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_rand_score

    from ..maps.landmark_spectral import LandmarkSpectralEmbedding

    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or not np.all(np.isfinite(X)):
        raise ValueError("X must be a 2-D array of finite values")
    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 2:
        raise ValueError(f"candidate numbers of clusters must be >= 2, got {ks}")
    if n_pairs < 1:
        raise ValueError(f"n_pairs must be >= 1, got {n_pairs}")
    half = X.shape[0] // 2
    if ks[-1] >= half:
        raise ValueError(
            f"k = {ks[-1]} needs more than {2 * ks[-1]} rows (two halves of more than k rows); got {X.shape[0]}"
        )
    rng = np.random.default_rng(random_state)
    k_max = ks[-1]
    m = int(min(n_landmarks, half))
    ari = np.empty((n_pairs, len(ks)))
    dis = np.empty((n_pairs, len(ks)))
    from ..utils.progress import progress

    for p in progress(range(n_pairs), total=n_pairs, desc="stability over random halvings", unit="halvings"):
        A, B = _halves(X.shape[0], rng)
        seeds = rng.integers(0, 2**31 - 1, size=3)
        with warnings.catch_warnings():  # a disconnected graph is the data's answer here, not a warning
            warnings.simplefilter("ignore")
            emb_a = LandmarkSpectralEmbedding(
                n_components=k_max, n_landmarks=m, n_neighbors=min(n_neighbors, m), random_state=int(seeds[0])
            ).fit(X[A])
            emb_b = LandmarkSpectralEmbedding(
                n_components=k_max, n_landmarks=m, n_neighbors=min(n_neighbors, m), random_state=int(seeds[1])
            ).fit(X[B])
            Ua, Uba, Ub = emb_a.transform(X[A]), emb_a.transform(X[B]), emb_b.transform(X[B])
        for j, k in enumerate(ks):
            km_a = KMeans(k, n_init=n_init, random_state=int(seeds[2])).fit(Ua[:, :k])
            carried = km_a.predict(np.ascontiguousarray(Uba[:, :k]))
            own = KMeans(k, n_init=n_init, random_state=int(seeds[2])).fit_predict(Ub[:, :k])
            ari[p, j] = adjusted_rand_score(own, carried)
            dis[p, j] = permutation_disagreement(own, carried)
    norm = np.array([_random_disagreement(half, k, np.random.default_rng([random_state, k])) for k in ks])
    params = dict(n_pairs=n_pairs, n_landmarks=m, n_neighbors=n_neighbors, n_init=n_init, random_state=random_state)
    return StabilityResult(ks=ks, ari=ari, instability=dis, random_instability=norm, params=params)


def estimator_stability(estimator, X, *, n_pairs=3, random_state=0):
    """Mean ARI between clones of a clusterer fitted on two random halves of ``X``, compared on the second.

    Each pair: ``a`` fitted on half A labels half B (``a.predict``), ``b`` fitted on half B labels it
    too (``b.labels_``); the adjusted Rand index of the two labelings is averaged over ``n_pairs``
    splits.  The estimator's own parameters (``random_state`` included) are used for both clones.
    """
    from sklearn.base import clone
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(random_state)
    scores = []
    for _ in range(n_pairs):
        A, B = _halves(X.shape[0], rng)
        a = clone(estimator).fit(X[A])
        b = clone(estimator).fit(X[B])
        scores.append(adjusted_rand_score(b.labels_, a.predict(X[B])))
    return float(np.mean(scores))
