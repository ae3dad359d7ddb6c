"""The seeding sample: k-means++ and Lloyd on the embedding of a uniform sample of a row source's rows.

Every clustering path (:meth:`~kernelsketch.cluster.LandmarkSpectralClustering.fit_rows` in memory, on a file or
on Dask, and :func:`~kernelsketch.cluster_file` for any other embedding) seeds its k-means here, so that they
draw the same sample and the same k-means++ starts for a seed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Seeding", "seed_on_rows"]


@dataclass
class Seeding:
    """The uniform sample a clusterer's k-means was seeded on (:meth:`StreamingKMeans.seed_on_sample`).

    ``indices`` (sorted rows of the source), ``embedded`` (their embedding, or each one's vote when the labeling
    is a vote), ``labels`` (the source's label column at those rows, or None), ``seconds`` (``embed_sample``,
    ``kmeans``) and ``graphs``: the source of each row's kept graph when the fit kept it (released by whoever
    asked for it), else None.  When ``indices`` is every row, :func:`~kernelsketch.cluster_file` assigns
    ``embedded`` directly: no second embedding pass.
    """

    indices: np.ndarray
    embedded: Any
    labels: Any
    seconds: dict
    graphs: Any = None


def seed_on_rows(rows, km, rng, embed) -> Seeding:
    """k-means++ and Lloyd (``km``, :class:`~kernelsketch.cluster.StreamingKMeans`) on ``embed`` of a uniform
    sample of ``rows`` (a row source, :mod:`kernelsketch.utils.row_source`), drawn with ``rng``: a
    :class:`Seeding`, with the time spent embedding the sample and running k-means on it."""
    t0 = time.perf_counter()
    at: dict[str, Any] = {"labels": None, "embedded": t0}

    def embedded_rows(idx):
        X, at["labels"] = rows.gather(idx)
        out = embed(X)
        at["embedded"] = time.perf_counter()
        return out

    idx, sample = km.seed_on_sample(rows.n_rows, embedded_rows, rng)
    seconds = {"embed_sample": at["embedded"] - t0, "kmeans": time.perf_counter() - at["embedded"]}
    return Seeding(idx, sample, at["labels"], seconds)
