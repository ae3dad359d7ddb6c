"""The number of clusters without labels: what ``n_clusters="auto"`` and ``kernelsketch cluster -k auto`` pick.

One fitted landmark spectral embedding holds its graph statistics, and with them the whole spectrum of the
normalized affinity (:func:`~kernelsketch.maps.landmark_eigen.landmark_spectrum`), so a k chosen from the
spectrum costs no pass over the data; the clustering of the k chosen is then re-solved from the same statistics
(:meth:`~kernelsketch.maps.LandmarkSpectralEmbedding.with_components`).  The criterion was chosen by the
leave-one-group-out protocol of ``benchmarks/choose_k_pool.py`` on the 48-set pool
(``benchmarks/results/choose-k-pool.md``): **stability** (the true k exactly on 61 of 144 set-seeds, within one
on 94, against 41 / 47 for the eigengap and 45 / 78 for always answering 2).  It clusters halves of a sample of at
most :data:`STABILITY_SAMPLE` rows, :data:`STABILITY_SPLITS` times: a cost bounded whatever N
(``benchmarks/results/auto-k-time.md``).  Two cheaper variants
(one split of 1,000 or of 2,000 rows, a seventh and a third of the time) were put to the same protocol and found
fewer k within one (88 and 87 of 144): they stay available through ``stability_sample`` / ``stability_splits``,
the default does not change.  The other criteria stay available by name.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["AUTO_CRITERION", "AUTO_K_MAX", "CRITERIA", "KChoice", "choose_n_clusters"]

#: the largest k ``"auto"`` considers (2 .. AUTO_K_MAX)
AUTO_K_MAX = 20
#: the criteria by name: ``"eigengap"`` (the spectrum of the fitted graph: free), ``"stability"`` (two halves of
#: a sample of at most :data:`STABILITY_SAMPLE` rows clustered and compared, 3 times), ``"two"`` (the baseline)
CRITERIA = ("eigengap", "stability", "two")
#: what ``n_clusters="auto"`` uses (benchmarks/results/choose-k-pool.md)
AUTO_CRITERION = "stability"
#: rows of the sample the stability criterion halves
STABILITY_SAMPLE = 2000
#: random splits of that sample into two halves (each split: two spectral fits, two k-means per candidate k)
STABILITY_SPLITS = 3


@dataclasses.dataclass
class KChoice:
    """A k chosen without labels: ``k``, the ``criterion`` and its ``scores`` (``{k: score}``, higher is better)."""

    k: int
    criterion: str
    scores: dict

    def __str__(self) -> str:
        if self.criterion == "two":
            return "k = 2 (the 'two' baseline: no search)"
        what = {
            "eigengap": "the largest relative eigengap of the landmark graph's spectrum",
            "stability": "the most stable clustering over random halvings of a sample (mean ARI)",
        }[self.criterion]
        ranked = sorted(self.scores.items(), key=lambda kv: -kv[1])
        runner = f"; next: k = {ranked[1][0]} ({ranked[1][1]:.3f})" if len(ranked) > 1 else ""
        return f"k = {self.k}: {what} ({self.scores[self.k]:.3f}{runner})"


def choose_n_clusters(
    embedding,
    sample=None,
    *,
    criterion: str = AUTO_CRITERION,
    k_max: int = AUTO_K_MAX,
    stability_sample: int = STABILITY_SAMPLE,
    stability_splits: int = STABILITY_SPLITS,
    random_state=0,
) -> KChoice:
    """The number of clusters for a fitted :class:`~kernelsketch.maps.LandmarkSpectralEmbedding`, without labels.

    Parameters
    ----------
    embedding : fitted LandmarkSpectralEmbedding
        Its kept graph statistics give the spectrum (``"eigengap"``).
    sample : ndarray, optional
        Rows as the embedding was fitted on them (scaled alike): ``"stability"`` clusters halves of at most
        :data:`STABILITY_SAMPLE` of them.
    criterion : {"eigengap", "stability", "two"}
    k_max : int >= 2
        Candidates are ``2 .. k_max`` (fewer when the graph or the sample cannot carry them).
    stability_sample, stability_splits : int
        ``"stability"``: the rows of the sample halved (at most) and the random splits; fewer of either is
        cheaper and noisier (``benchmarks/results/choose-k-pool.md`` compares them).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> from kernelsketch.maps import LandmarkSpectralEmbedding
    >>> from kernelsketch.maps.landmark_spectral import graph_warnings_deferred
    >>> X, _ = make_blobs(2000, centers=[[0, 0], [10, 0], [0, 10], [10, 10]], random_state=0)
    >>> with graph_warnings_deferred():  # (one component is a placeholder: no warning that 4 parts need more)
    ...     emb = LandmarkSpectralEmbedding(n_components=1, n_landmarks=300, random_state=0).fit(X)
    >>> choice = choose_n_clusters(emb, X)  # (stability: halves of a sample of X, clustered and compared)
    >>> choice.k, emb.with_components(choice.k).transform(X).shape
    (4, (2000, 4))
    """
    from ..maps.landmark_eigen import landmark_spectrum
    from ..metrics.clustering import relative_eigengap

    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    if int(k_max) < 2:
        raise ValueError(f"k_max must be >= 2, got {k_max}")
    if criterion == "two":
        return KChoice(2, criterion, {2: float("nan")})
    if criterion == "eigengap":
        lam = landmark_spectrum(embedding.graph_statistics_)
        ks = range(2, min(int(k_max), lam.size - 1) + 1)
        if not ks:
            raise ValueError(f"the landmark graph has {lam.size} landmarks: too few to choose a number of clusters")
        scores = {k: float(relative_eigengap(lam, k)) for k in ks}
    else:
        if sample is None:
            raise ValueError("criterion='stability' needs a sample of rows")
        from .stability import clustering_stability

        rng = np.random.default_rng(random_state)
        S = np.asarray(sample)
        if int(stability_sample) < 4 or int(stability_splits) < 1:
            raise ValueError(
                f"stability_sample must be >= 4 and stability_splits >= 1, got {stability_sample}, {stability_splits}"
            )
        if S.shape[0] > int(stability_sample):
            S = S[np.sort(rng.choice(S.shape[0], int(stability_sample), replace=False))]
        k_hi = min(int(k_max), S.shape[0] // 2 - 1)
        if k_hi < 2:
            raise ValueError(f"{S.shape[0]} rows are too few to compare clusterings of two halves")
        res = clustering_stability(
            S, range(2, k_hi + 1), n_pairs=int(stability_splits), random_state=int(rng.integers(2**31 - 1))
        )
        scores = {int(k): float(v) for k, v in zip(res.ks, res.ari.mean(axis=0), strict=True)}
    best = max(scores, key=lambda k: (scores[k], -k))  # ties: the smaller k
    return KChoice(int(best), criterion, scores)
