"""Missing-value codes replaced as blocks are read: found on a uniform sample, each set to its column's median."""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._typing import DataLike, RandomStateLike
from ..utils.missing_codes import (
    MISSING_CELL_ACTIONS,
    MissingCellWarning,
    MissingValueCodeWarning,
    column_label,
    describe_codes,
    fill_missing,
    missing_value_codes,
    replace_codes,
    with_replacements,
)
from ..utils.validation import check_random_state, derive_seed
from ..utils.warnings import warn as _warn
from .engine import open_engine

#: rows of the uniform sample checked for codes (a per-column sort, a fraction of a second at 784 columns)
CODE_CHECK_ROWS = 5000
#: what :func:`replace_missing_codes` (and ``cluster_file(missing_codes=...)``) does with codes it finds
MISSING_CODE_ACTIONS = ("impute", "warn", None)


def check_missing_cells(action):
    """``action`` if it is one of :data:`MISSING_CELL_ACTIONS`, else a ValueError naming them."""
    if action not in MISSING_CELL_ACTIONS:
        raise ValueError(f"missing must be one of {MISSING_CELL_ACTIONS}, got {action!r}")
    return action


def impute_missing_cells(engine, action="impute", random_state=0):
    """A file's missing cells (NaN, from empty or ``NA`` cells) read as their column's median in a sample.

    Only a text source reads missing cells (``na_values``); for any other ``(engine, None, None)``, the engine
    as it is (and for a text file without any, ``(engine, None, sample)``).  Else ``(engine, cells, sample)``:
    every block the engine reads from now on has each NaN set to its column's median in the seeded sample of
    :data:`CODE_CHECK_ROWS` rows (the one :func:`replace_missing_codes` checks, passed on to it with the same
    replacement); ``cells`` maps ``"columns"`` (names or indices), ``"counts"`` (cells per column: over every
    row when the sample was a whole pass, as for a text file read the first time, else in the sample;
    ``"counted"`` says which) and ``"medians"`` (one per feature column).  A :class:`MissingCellWarning` names
    them.  ``action="drop"`` imputes the same way (the fit reads every row) and says that those rows are
    labelled -1; ``"error"`` is the strict reader's business (``na_values=()``) and does nothing here.
    """
    action = check_missing_cells(action)
    source = getattr(engine, "source", None)
    if action == "error" or not getattr(source, "na_values", None):
        return engine, None, None
    sample = np.asarray(inspection_sample(engine, random_state), dtype=np.float64)
    whole = getattr(source, "missing_counts", None)
    counts = np.asarray(whole if whole is not None else np.isnan(sample).sum(axis=0), dtype=np.int64)
    names = getattr(engine, "feature_names", None)
    labels = [str(n) for n in names] if names is not None else [f"column {j}" for j in range(sample.shape[1])]
    if not counts.any():
        return engine, None, sample
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (an all-NaN column: said below)
        medians = np.nanmedian(sample, axis=0)
    empty = [labels[j] for j in np.flatnonzero(np.isnan(medians))]
    if empty:
        raise ValueError(
            f"column(s) {', '.join(map(repr, empty))} have no value in a sample of {sample.shape[0]:,} rows (every "
            "cell empty or NA): leave them out with --columns / columns="
        )
    dtype = engine.dtype if np.dtype(engine.dtype).kind == "f" else np.dtype(np.float64)
    engine.set_preprocess(functools.partial(fill_missing, fills=medians, dtype=dtype))
    sample = np.where(np.isnan(sample), medians, sample)
    where = "over every row" if whole is not None else f"in a sample of {sample.shape[0]:,} rows"
    listed = ", ".join(f"{labels[j]} {int(counts[j]):,} (median {medians[j]:.4g})" for j in np.flatnonzero(counts))
    then = (
        "; those rows are labelled -1 (missing='drop' / --missing drop)"
        if action == "drop"
        else " (missing='drop' / --missing drop labels those rows -1, missing='error' / --missing error refuses them)"
    )
    _warn(f"empty or NA cells {where}, each read as its column's median: {listed}{then}", MissingCellWarning)
    cells = {
        "columns": [labels[j] for j in np.flatnonzero(counts)],
        "counts": {labels[j]: int(counts[j]) for j in np.flatnonzero(counts)},
        "counted": "rows" if whole is not None else "sample",
        "medians": medians,
        "action": action,
    }
    return engine, cells, sample


def check_missing_codes(action):
    """``action`` if it is one of :data:`MISSING_CODE_ACTIONS` (``"off"``, the command line's word, is None),
    else a ValueError naming them."""
    if isinstance(action, str) and action == "off":
        return None
    if action not in MISSING_CODE_ACTIONS:
        raise ValueError(f"missing_codes must be 'impute', 'warn', 'off' or None, got {action!r}")
    return action


def inspection_sample(engine, random_state):
    """The run's one look at its rows before the fit: a uniform sample of up to :data:`CODE_CHECK_ROWS` rows (one
    pass for a text file, else by index), where missing cells and codes are looked for and whether to scale is
    foreseen (:func:`~kernelsketch.out_of_core.standardize.standardize_source`'s ``sample``)."""
    seed = derive_seed(random_state) + 2
    if engine.n_rows is None:  # a text file: one pass, which also counts the rows
        X, _ = engine.reservoir(CODE_CHECK_ROWS, [seed, 0x6D76], desc="check missing-value codes")
        return X
    N = engine.n_rows
    rng = check_random_state(seed)
    idx = np.arange(N) if N <= CODE_CHECK_ROWS else np.sort(rng.choice(N, CODE_CHECK_ROWS, replace=False))
    return engine.gather(idx)[0]


def _replacer(codes, dtype):
    """The block function that sets each code to its replacement (a copy: the source is never written)."""
    columns = np.asarray([c["column"] for c in codes])
    values = np.asarray([c["value"] for c in codes])
    medians = np.asarray([c["replacement"] for c in codes])

    def replace(X, columns=columns, values=values, medians=medians, dtype=dtype):
        return replace_codes(X, columns, values, medians, dtype)

    return replace


def replace_missing_codes(
    data: DataLike,
    *,
    action: str | None = "impute",
    random_state: RandomStateLike = 0,
    client: Any = None,
    sample: Any = None,
    **read_options: Any,
) -> tuple[Any, list]:
    """Find missing-value codes in a sample of ``data``; the engine then reads them as their column's median.

    A column that records "not measured" as a number (a blood pressure of 0, an income of
    999999) puts every such row at one point, far from all the others: spectral clustering
    gives them a cluster of their own, and k-means may too.  This checks a seeded uniform
    sample of up to :data:`CODE_CHECK_ROWS` rows with
    :func:`~kernelsketch.diagnostics.missing_value_codes` and, for ``action="impute"``,
    replaces each code it finds, as every block is read, by the median of its column's other
    values in the sample -- what ``sklearn.impute.SimpleImputer(missing_values=v,
    strategy="median")`` does on that column.  Either way a
    :class:`~kernelsketch.utils.missing_codes.MissingValueCodeWarning` names the codes.

    Parameters
    ----------
    data : path, array, MatrixSource, dask array or an engine (as :func:`fit_source`)
    action : "impute", "warn" or None, default="impute"
        ``"warn"``: only warn (the rows are read as they are); None: do not look.
    random_state : int, default=0
        Seeds the sample.
    sample : array, optional
        The sample to check (:func:`impute_missing_cells` hands on its own, missing cells filled).

    Returns
    -------
    engine, codes : the engine (every block it reads has the codes replaced, for
        ``"impute"``) and one dict per code found (as ``missing_value_codes`` gives them,
        plus ``replacement``: the median used, and ``replaced``: whether it was).

    Sparse data is not checked (its implicit zeros are values, not codes).  The sample is
    read by index, or in one pass for a text file (which also counts its rows).

    Examples
    --------
    >>> import numpy as np, warnings, kernelsketch as ks
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([np.round(rng.normal(72, 12, 500)), rng.normal(size=500)])
    >>> X[:20, 0] = 0  # blood pressure "not measured"
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     engine, codes = ks.replace_missing_codes(X)
    >>> [(c["column"], c["value"], c["rows"]) for c in codes]
    [(0, 0.0, 20)]
    >>> bool(codes[0]["replacement"] == np.median(X[20:, 0]))  # the median of the other readings
    True
    >>> bool((engine.gather(np.arange(20))[0][:, 0] == codes[0]["replacement"]).all())
    True
    """
    action = check_missing_codes(action)
    engine = open_engine(data, client=client, **read_options)
    if action is None or getattr(engine, "sparse", False):
        return engine, []
    sample = inspection_sample(engine, random_state) if sample is None else sample
    if sp.issparse(sample) or sample.shape[0] < 2:
        return engine, []
    sample = np.asarray(sample, dtype=np.float64)
    codes = missing_value_codes(sample)
    if not codes:
        return engine, []
    names = getattr(engine, "feature_names", None)
    for c in with_replacements(sample, codes):
        c["replaced"] = action == "impute"
        if names is not None and len(names) == sample.shape[1]:
            c["name"] = str(names[c["column"]])
    if action == "impute":  # (integer columns become float: a median may fall between two integers)
        dtype = engine.dtype if np.dtype(engine.dtype).kind == "f" else np.dtype(np.float64)
        engine.set_preprocess(_replacer(codes, dtype))
        medians = ", ".join(f"{column_label(c)}: {c['replacement']:g}" for c in codes)
        _warn(
            f"columns hold what look like missing-value codes ({describe_codes(codes)}): each is read as its "
            f"column's median ({medians}), as rows "
            "sharing a code would take a cluster of their own (missing_codes='warn' / --missing-codes warn keeps them)",
            MissingValueCodeWarning,
        )
    else:
        _warn(
            f"columns hold what look like missing-value codes ({describe_codes(codes)}): rows sharing a code are far "
            "from all others and tend to take a cluster of their own; replace the codes before clustering "
            "(missing_codes='impute' / --missing-codes impute sets each to its column's median)",
            MissingValueCodeWarning,
        )
    return engine, codes
