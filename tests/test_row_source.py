"""Row-wise outputs of consecutive pieces of rows stacked into one (what a split mapping of gathered rows returns)."""

import numpy as np
import pytest

from kernelsketch.utils.row_source import stack_rows


def test_pieces_stack_to_the_whole_ones_output():
    X = np.arange(40.0).reshape(10, 4)

    def fn(R):  # (an embedding and what the labeling keeps of the rows: their graph and the rows)
        return R @ np.ones((4, 2)), ((R[:, :2].astype(np.int32), R[:, 2:] / 2), R), None

    whole = fn(X)
    pieces = [fn(part) for part in np.array_split(X, 3)]
    stacked = stack_rows(pieces)
    np.testing.assert_array_equal(stacked[0], whole[0])
    np.testing.assert_array_equal(stacked[1][0][0], whole[1][0][0])
    assert stacked[1][0][0].dtype == np.int32
    np.testing.assert_array_equal(stacked[1][0][1], whole[1][0][1])
    np.testing.assert_array_equal(stacked[1][1], X)
    assert stacked[2] is None and isinstance(stacked, tuple)


@pytest.mark.parametrize(
    ("parts", "match"),
    [
        ([None, np.zeros(2)], "None in some pieces"),
        ([(np.zeros(2),), (np.zeros(2), np.zeros(2))], "different structures"),
        ([1.5, 2.5], "not float"),
        ([np.float64(1.0), np.float64(2.0)], "not float64"),
    ],
)
def test_what_is_not_row_wise_is_refused(parts, match):
    with pytest.raises(TypeError, match=match):
        stack_rows(parts)
