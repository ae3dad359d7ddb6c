"""Missing-value codes: a number standing for "not measured" (0, -1, 999) among a column's readings.

Rows sharing such a code are identical in that column and far from every other row, so
distance-based clustering gives them a cluster of their own.  :func:`missing_value_codes`
finds them in a sample; :func:`kernelsketch.cluster_file` warns with
:class:`MissingValueCodeWarning` and ``kernelsketch diagnose -k`` names them.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MissingValueCodeWarning", "missing_value_codes", "replace_codes", "with_replacements"]


class MissingValueCodeWarning(UserWarning):
    """Columns hold what looks like a missing-value code; the rows sharing it may take a cluster of their own."""


class MissingCellWarning(UserWarning):
    """A file has empty or ``NA`` cells: said with their count per column and what was done with them."""


#: a column needs this many distinct values besides a code for the code test to apply (not a category)
CODE_MIN_DISTINCT = 10
#: a code lies more than this many median steps beyond the other values; held by this many times
#: more rows than any other value (a spike), it is a code even within the others' spread
CODE_SPIKE = 5
#: ... but a spike no further from the other values than this fraction of their interquartile range is a
#: real reading at the column's edge, not a code (a standard deviation of 0 next to readings from 0.019 up,
#: IQR 1.4: statlog's column 6), and is not reported
CODE_SPIKE_MIN_GAP = 0.05


def missing_value_codes(X, *, min_rows=2):
    """Columns whose extreme value looks like a missing-value code: repeated, and cut off from the rest.

    A value ``v`` of column ``j`` is reported when it is a whole number (codes are: 0, -1,
    999, ...), the column's minimum (or maximum), held by at least ``min_rows`` rows but
    fewer than the others, the other rows hold at least :data:`CODE_MIN_DISTINCT` distinct
    values (a measurement, not a category), the gap from ``v`` to the nearest other value
    is more than :data:`CODE_SPIKE` times the others' median step (between consecutive
    distinct values: a code lies off the readings' grid), and either that gap exceeds the
    others' interquartile range or ``v`` is a spike, held by :data:`CODE_SPIKE` times more
    rows than any other value, at least :data:`CODE_SPIKE_MIN_GAP` of that range away (nearer,
    it is a real reading at the column's edge).  A blood pressure of 0 among
    readings from 24 to 122 is such a code (the gap), and so is an insulin level of 0 in
    half the rows (the spike); 0 pregnancies among counts from 1 to 17 is not (the gap, 1,
    is inside the spread, and 1 pregnancy is as common), nor is either level of a 0/1
    column, nor an image's blank pixel 0 (most rows hold it, or it is one step below the
    faintest ink, 1), nor its saturated 255 (one step above the brightest other ink, 254).

    Rows sharing a code are identical in that column and far from every other row: a
    distance-based method, spectral clustering above all, gives them a cluster of their
    own.  Replace the code before clustering (``sklearn.impute.SimpleImputer(missing_values=v)``).

    Parameters
    ----------
    X : array-like (n, D)
        A sample of the rows.
    min_rows : int, default=2

    Returns
    -------
    list of dict
        One per code: ``column`` (index), ``value``, ``rows`` (how many hold it), ``gap``
        (to the nearest other value), ``iqr`` (of the other values), ``range`` (theirs).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.diagnostics import missing_value_codes
    >>> rng = np.random.default_rng(0)
    >>> pressure = np.round(rng.normal(72, 12, 500))
    >>> pressure[:20] = 0
    >>> [(c["column"], c["value"], c["rows"]) for c in missing_value_codes(pressure[:, None])]
    [(0, 0.0, 20)]
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"missing_value_codes needs a 2-D array, got shape {X.shape}")
    codes = []
    for j in range(X.shape[1]):
        col = X[:, j]
        col = col[np.isfinite(col)]
        if col.size == 0:
            continue
        for v, side in ((col.min(), -1), (col.max(), 1)):
            hit = col == v
            rows = int(hit.sum())
            rest = col[~hit]
            if v != np.round(v) or rows < min_rows or rows >= rest.size or np.unique(rest).size < CODE_MIN_DISTINCT:
                continue
            q25, q75 = np.percentile(rest, [25, 75])
            gap = float(rest.min() - v) if side < 0 else float(v - rest.max())
            values, counts = np.unique(rest, return_counts=True)
            # off the values' own grid: a measurement's zero sits one step below its smallest reading, and a
            # saturated pixel (255) one step above the brightest other (254), however narrow their spread
            off_grid = gap > CODE_SPIKE * np.median(np.diff(values))
            spike = rows >= CODE_SPIKE * counts.max()
            if off_grid and (gap > q75 - q25 > 0 or (spike and gap >= CODE_SPIKE_MIN_GAP * (q75 - q25))):
                codes.append(
                    {
                        "column": j,
                        "value": float(v),
                        "rows": rows,
                        "gap": gap,
                        "spike": bool(spike),
                        "iqr": float(q75 - q25),
                        "range": (float(rest.min()), float(rest.max())),
                    }
                )
    return codes


def column_label(code):
    """``column 'name'`` when the code's column has a name (``code["name"]``), else ``column j``."""
    name = code.get("name")
    return f"column {name!r}" if name is not None else f"column {code['column']}"


def describe_codes(codes):
    """One clause per code: ``column j: n rows hold v, g beyond every other value (theirs span a to b)``."""
    return "; ".join(
        f"{column_label(c)}: {c['rows']} rows hold {c['value']:g}, {c['gap']:.3g} beyond every other value "
        f"(theirs span {c['range'][0]:.4g} to {c['range'][1]:.4g})"
        for c in codes
    )


def with_replacements(X, codes):
    """``codes`` (from :func:`missing_value_codes` on ``X``), each given ``replacement``: the median of its
    column's other values in ``X`` -- what ``SimpleImputer(missing_values=CODE, strategy="median")`` uses."""
    for c in codes:
        col = X[:, c["column"]]
        c["replacement"] = float(np.median(col[col != c["value"]]))
    return codes


def replace_codes(X, columns, values, replacements, dtype):
    """A copy of ``X`` in ``dtype`` with each ``values[i]`` of column ``columns[i]`` set to ``replacements[i]``."""
    X = np.array(X, dtype=dtype, copy=True)
    for j, v, r in zip(columns, values, replacements, strict=True):
        col = X[:, j]
        col[col == v] = r
    return X


#: what :func:`kernelsketch.cluster_file` (``missing=``, ``--missing``) does with a file's missing cells
MISSING_CELL_ACTIONS = ("impute", "drop", "error")


def fill_missing(X, fills, dtype):
    """``X`` in ``dtype`` with each NaN cell set to its column's ``fills`` value (a copy when there is one)."""
    X = np.asarray(X, dtype=dtype)
    missing = np.isnan(X)
    if not missing.any():
        return X
    X = X.copy()
    X[missing] = np.broadcast_to(np.asarray(fills, dtype=dtype), X.shape)[missing]
    return X
