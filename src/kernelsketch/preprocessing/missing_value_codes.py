"""Missing-value codes replaced by a value per code: the step ``cluster_file(missing_codes="impute")`` applies."""

from __future__ import annotations

from typing import ClassVar, Self

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils.validation import check_is_fitted

from .._typing import ArrayLike, FloatArray
from ..utils.missing_codes import fill_missing, missing_value_codes, replace_codes, with_replacements
from ..utils.validation import check_input


class MissingValueCodeImputer(TransformerMixin, BaseEstimator):
    """Each missing-value code of a column read as a fixed value (its column's median in the fit).

    ``fit`` finds the codes with :func:`~kernelsketch.diagnostics.missing_value_codes` (a
    whole number at a column's end, held by a minority of rows, cut off from the others) and
    takes each replacement as the median of its column's other values -- what
    ``sklearn.impute.SimpleImputer(missing_values=CODE, strategy="median")`` does on that
    column.  :func:`kernelsketch.cluster_file` with ``missing_codes="impute"`` builds one from
    its sample (:meth:`from_codes`), so the model it returns repeats the replacement on new rows.

    Attributes
    ----------
    columns_, codes_, replacements_ : ndarray (n_codes,)
        Column, code and the value it is read as.
    nan_replacements_ : ndarray (n_features,) or None
        The value a missing cell (NaN: an empty or ``NA`` cell of a file) of each column is read as, its
        column's median in the fit (:func:`kernelsketch.cluster_file` with ``missing="impute"``); None:
        missing cells are refused.
    drop_missing_rows_ : bool
        ``cluster_file(missing="drop")``: a row with a missing cell is labelled -1 where the model labels a
        file (:func:`kernelsketch.transform_source` with ``method="predict"``, ``kernelsketch predict``).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.preprocessing import MissingValueCodeImputer
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([np.round(rng.normal(72, 12, 500)), rng.normal(size=500)])
    >>> X[:20, 0] = 0  # blood pressure "not measured"
    >>> imp = MissingValueCodeImputer().fit(X)
    >>> imp.columns_.tolist(), imp.codes_.tolist()
    ([0], [0.0])
    >>> bool((imp.transform(X)[:20, 0] == np.median(X[20:, 0])).all())
    True
    """

    _persistent_state: ClassVar[tuple[str, ...]] = (
        "codes_",
        "columns_",
        "replacements_",
        "nan_replacements_",
        "drop_missing_rows_",
    )
    _parameter_constraints: ClassVar[dict] = {}
    columns_: np.ndarray
    codes_: np.ndarray
    replacements_: np.ndarray
    nan_replacements_: np.ndarray | None
    drop_missing_rows_: bool

    def __init__(self) -> None:
        pass

    @classmethod
    def from_codes(cls, codes, n_features: int, nan_replacements=None) -> MissingValueCodeImputer:
        """A fitted imputer from ``cluster_file``'s ``missing_codes`` list (``column``, ``value``, ``replacement``)
        and, for missing cells, each column's replacement (``nan_replacements``)."""
        imp = cls()
        imp.nan_replacements_ = None if nan_replacements is None else np.asarray(nan_replacements, np.float64)
        imp.drop_missing_rows_ = False
        imp.columns_ = np.asarray([int(c["column"]) for c in codes], dtype=np.int64)
        imp.codes_ = np.asarray([float(c["value"]) for c in codes], dtype=np.float64)
        imp.replacements_ = np.asarray([float(c["replacement"]) for c in codes], dtype=np.float64)
        imp.n_features_in_ = int(n_features)
        return imp

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Find the codes in ``X`` and each one's replacement. Returns self."""
        X = np.asarray(check_input(X, accept_sparse=(), estimator=self, reset=True), dtype=np.float64)
        fitted = self.from_codes(with_replacements(X, missing_value_codes(X)), X.shape[1])
        self.columns_, self.codes_, self.replacements_ = fitted.columns_, fitted.codes_, fitted.replacements_
        self.nan_replacements_, self.drop_missing_rows_ = None, False
        return self

    def transform(self, X: ArrayLike) -> FloatArray:
        """A copy of ``X`` with every code replaced (the input is never written)."""
        check_is_fitted(self)
        fills = getattr(self, "nan_replacements_", None)
        X = check_input(X, accept_sparse=(), estimator=self, reset=False, allow_nan=fills is not None)
        dtype = X.dtype if X.dtype in (np.float32, np.float64) else np.float64
        out = replace_codes(X, self.columns_, self.codes_, self.replacements_, dtype)
        return out if fills is None else fill_missing(out, fills, dtype)
