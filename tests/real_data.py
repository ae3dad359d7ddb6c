"""Real-data samples shared by the convergence tests (skipped off-CI without ../shared, failing in CI)."""

import numpy as np

from kernelsketch.datasets import load_dataset
from kernelsketch.datasets._testing import require_shared_data


def load_avila_2000():
    """A seeded uniform sample of 2,000 Avila rows (features only)."""
    require_shared_data("avila")
    X, _ = load_dataset("avila")
    return X[np.random.default_rng(0).choice(X.shape[0], 2000, replace=False)]
