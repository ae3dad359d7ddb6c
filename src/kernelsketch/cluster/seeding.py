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
    ``embedded`` directly: no second embedding pass.  ``kept``: what ``embed`` returned beside the embedding.
    """

    indices: np.ndarray
    embedded: Any
    labels: Any
    seconds: dict
    graphs: Any = None
    kept: Any = None


def seed_on_rows(rows, km, rng, embed, state=None, *, rowwise=False) -> Seeding:
    """k-means++ and Lloyd (``km``, :class:`~kernelsketch.cluster.StreamingKMeans`) on the embedding of a uniform
    sample of ``rows`` (a row source, :mod:`kernelsketch.utils.row_source`), drawn with ``rng``: a
    :class:`Seeding`, with the time spent embedding the sample and running k-means on it.

    ``embed(X, state)`` returns ``(embedding, kept)`` of the sample's rows ``X`` (``kept``: anything else the caller
    wants of them, :attr:`Seeding.kept`).  It runs where the rows are
    (:func:`~kernelsketch.utils.row_source.gather_mapped`: on a Dask worker, which has the search's kernels loaded
    from the fit pass), so it must be a module-level function.

    ``rowwise``: ``embed`` maps each row on its own (:func:`~kernelsketch.utils.row_source.gather_mapped`): the
    sample's rows may then be split among the workers.
    """
    from ..utils.row_source import gather_mapped

    t0 = time.perf_counter()
    at: dict[str, Any] = {"labels": None, "kept": None, "embedded": t0}

    def embedded_rows(idx):
        (out, at["kept"]), at["labels"] = gather_mapped(rows, idx, embed, state, rowwise=rowwise)
        at["embedded"] = time.perf_counter()
        return out

    idx, sample = km.seed_on_sample(rows.n_rows, embedded_rows, rng)
    seconds = {"embed_sample": at["embedded"] - t0, "kmeans": time.perf_counter() - at["embedded"]}
    return Seeding(idx, sample, at["labels"], seconds, kept=at["kept"])
