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
    """scikit-learn's array-API checks need SCIPY_ARRAY_API=1 from the interpreter's start: in this
    process they could only skip. They run, for every estimator that declares array_api_support, in
    tests/array_api_suite.py (its own interpreter, through tests/test_array_api.py); here they are
    deselected, so that the skips this suite reports are real ones."""
    if os.environ.get("SCIPY_ARRAY_API") == "1":
        return
    dropped = [item for item in items if "check_array_api" in item.nodeid]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if "check_array_api" not in item.nodeid]
