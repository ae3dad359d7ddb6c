"""Shared fixtures: seeds and dtypes."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(params=[np.float64, np.float32], ids=["float64", "float32"])
def dtype(request):
    return request.param


def pytest_collection_modifyitems(config, items):
    # Keep hypothesis databases local and quiet in CI.
    pass
