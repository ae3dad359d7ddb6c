"""``check_input``'s fast path for plain float blocks: the answer and the error of scikit-learn's ``check_array``
path for every input, without importing scikit-learn (what lets a Dask worker run the default clustering's
passes without it)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from kernelsketch.utils import validation
from kernelsketch.utils.validation import check_input

_VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 1e151, -1e200, 3e38, 1e308]),
)


def _as(X, kind):
    """The drawn float64 values as ``kind`` (float32 rounds them, an overflow becoming inf; integers clipped)."""
    if kind == "int64":
        return np.clip(np.nan_to_num(X), -1e6, 1e6).astype(np.int64)
    with np.errstate(over="ignore"):
        return X.astype(kind)


def _outcome(X, **kwargs):
    try:
        out = check_input(X, **kwargs)
    except (ValueError, TypeError) as exc:
        return type(exc), str(exc)
    return out


def _same(a, b):
    if isinstance(a, tuple) or isinstance(b, tuple):
        assert a == b
        return
    assert type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


@settings(max_examples=300, deadline=None)
@given(
    X=arrays(dtype=np.float64, shape=st.tuples(st.integers(0, 6), st.integers(0, 4)), elements=_VALUES),
    kind=st.sampled_from(["float32", "float64", "int64"]),
    dtype=st.sampled_from([validation.FLOAT_DTYPES, np.float64, np.float32]),
    order=st.sampled_from(["C", "F"]),
)
def test_the_fast_path_answers_as_scikit_learns_check_array(X, kind, dtype, order):
    """Every input, valid or not: the fast path's array (or error) is the one of the path through scikit-learn."""
    X = np.asarray(_as(X, kind), order=order)
    fast = _outcome(X, dtype=dtype)
    saved = validation._plain_float_block
    validation._plain_float_block = lambda *a, **k: False
    try:
        slow = _outcome(X, dtype=dtype)
    finally:
        validation._plain_float_block = saved
    _same(fast, slow)


@pytest.mark.parametrize(
    ("X", "kwargs", "taken"),
    [
        (np.ones((3, 2)), {}, True),
        (np.ones((3, 2), dtype=np.float32), {}, True),
        (np.ones((3, 2)), {"copy": True}, False),  # (a copy asked: scikit-learn's)
        (np.ones((3, 2), dtype=np.float32), {"dtype": np.float64}, False),  # (a cast)
        (np.array([[1.0, np.nan]]), {}, False),  # (its message is scikit-learn's)
        (np.array([[3e38, 3e38]], dtype=np.float32), {}, False),  # (a sum that overflows: a doubt)
        (np.ones((0, 2)), {}, False),
        (np.ones(3), {}, False),
        (np.ones((3, 2), dtype=np.int64), {}, False),
        (np.matrix(np.ones((3, 2))), {}, False),
    ],
)
def test_only_finite_float_ndarrays_as_asked_take_the_fast_path(X, kwargs, taken):
    args = (kwargs.get("dtype", validation.FLOAT_DTYPES), 1, 1, kwargs.get("copy", False), False)
    assert validation._plain_float_block(X, *args) is taken


def test_a_plain_block_is_checked_without_importing_scikit_learn():
    code = (
        "import sys, numpy as np\n"
        "from kernelsketch.utils.validation import check_input\n"
        "X = check_input(np.arange(6.0).reshape(3, 2))\n"
        "assert 'sklearn' not in sys.modules, 'imported'\n"
        "try:\n"
        "    check_input(np.array([[1.0, np.nan]]))\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "contains NaN" in out  # (scikit-learn's message, imported for the block that needs it)
