"""Shared fixtures: seeds and dtypes."""

import os

import numpy as np
import pytest

# The array-API suite runs in its own interpreter with SCIPY_ARRAY_API=1 (tests/test_array_api.py);
# in this process it would only be imported to be skipped.
collect_ignore = [] if os.environ.get("SCIPY_ARRAY_API") == "1" else ["array_api_suite.py"]


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(params=[np.float64, np.float32], ids=["float64", "float32"])
def dtype(request):
    return request.param


def pytest_collection_modifyitems(config, items):
    # Keep hypothesis databases local and quiet in CI.
    pass
