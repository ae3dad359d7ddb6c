"""Datasets: checksum-verified loaders of the papers' real data and their synthetic sets.

Nothing is read, hashed or downloaded at import time; ``load_dataset`` finds
the files (``data_home``, ``$KERNELSKETCH_DATA``, ``shared/datasets`` beside
the checkout, or the copy shipped in the package), verifies their sha256 and
parses the original formats.
"""

from ._load import citation, dataset_path, list_datasets, load_dataset, shipped_datasets
from ._locate import DatasetNotFoundError
from ._registry import DATASETS
from .synthetic import make_cluster_in_cluster, make_crescent_fullmoon, make_random_noisy

__all__ = [
    "DATASETS",
    "DatasetNotFoundError",
    "citation",
    "dataset_path",
    "list_datasets",
    "load_dataset",
    "make_cluster_in_cluster",
    "make_crescent_fullmoon",
    "make_random_noisy",
    "shipped_datasets",
]
