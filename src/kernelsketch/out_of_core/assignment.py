"""A block's embedding and its k-means assignment: the block functions the clustering driver's passes send to
wherever the rows are (a thread here, a Dask worker).

For a landmark spectral embedding the state is its :class:`~kernelsketch.maps.landmark_graph.LandmarkGraph` (plain
arrays), and nothing here imports scikit-learn or the drivers: a Dask worker runs the default clustering's passes
with NumPy, SciPy and the compiled search alone.  Any other fitted estimator is embedded by its ``transform``.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

from ..maps.landmark_graph import LandmarkGraph
from ..utils.validation import dense_if_needed

#: scikit-learn's warning when an estimator fitted with feature names gets a NumPy block: the
#: driver aligns a file's columns by name first (:func:`~kernelsketch.out_of_core.engine.align_columns`), then
#: hands it NumPy blocks
NAMES_WARNING = "X does not have valid feature names"


@contextlib.contextmanager
def block_names_ignored():
    """:data:`NAMES_WARNING` silenced while a fitted estimator takes a NumPy block."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=NAMES_WARNING, category=UserWarning)
        yield


def transform_block(est, X):
    """``est.transform`` of a block (dense where the estimator needs it), as an ndarray."""
    with block_names_ignored():
        return np.asarray(est.transform(dense_if_needed(est, X)))


def embed_block(X, embedding):
    """The block's embedding (``X`` itself without one)."""
    return X if embedding is None else transform_block(embedding, X)


def embed_sample(X, embedding):
    """The seeding sample's embedding (:func:`~kernelsketch.cluster.seeding.seed_on_rows`), nothing kept beside."""
    return embed_block(X, embedding), None


def assignment_state(embedding, centers, kept=False, settled=None):
    """The state of an assignment pass (:func:`block_assignment`): a landmark spectral embedding is sent as its
    :class:`~kernelsketch.maps.landmark_graph.LandmarkGraph`, any other fitted estimator (or None) as it is.
    ``kept``: the blocks are each row's graph kept by the fit; ``settled``: the cells whose rows are labelled
    from the search's first sweep alone (:meth:`~kernelsketch.maps.LandmarkSpectralEmbedding.settled_cells`)."""
    if hasattr(embedding, "landmark_graph"):
        embedding = embedding.landmark_graph()
    return embedding, centers, kept, settled


def block_assignment(X, state):
    """``(labels, squared distances, sums, counts)`` of the block's embedded rows and the state's centres.

    A block that is a kept graph is assigned straight from it (:meth:`LandmarkGraph.assign_graph`: one compiled
    sweep, the embedding never stored), a block of rows of a landmark graph from its graph searched again (the
    same numbers); any other is embedded, then assigned.  With settled cells the rows of those cells are labelled
    from the search's first sweep alone, and the distances and sums cover the other rows only."""
    from ..kernels.lloyd import assign_with_statistics

    embedding, centers, kept, settled = state
    if kept:
        indices, weights, single = X
        return embedding.assign_graph(indices, weights, centers, np.float32 if single else np.float64)
    if isinstance(embedding, LandmarkGraph):  # searched again: the same numbers as from the kept graph
        X = embedding.check_rows(X)
        dtype = np.float32 if X.dtype == np.float32 else np.float64
        if settled is not None:
            return embedding.assign_rows(X, centers, dtype, settled)
        return embedding.assign_searched(X, centers, dtype)
    return assign_with_statistics(embed_block(X, embedding), centers)


def stats_block(X, state):
    """One Lloyd step's statistics of a block: ``(sums, counts, inertia)``."""
    _labels, dist, sums, counts = block_assignment(X, state)
    return sums, counts, float(dist.sum())


def assign_block(X, state):
    """A block's labels, and the statistics of this assignment, which come free: a look at one more Lloyd step."""
    labels, dist, sums, counts = block_assignment(X, state)
    return labels, float(dist.sum()), sums, counts
