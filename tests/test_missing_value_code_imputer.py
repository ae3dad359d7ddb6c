"""MissingValueCodeImputer: scikit-learn's estimator checks, and SimpleImputer's answer on each coded column."""

import numpy as np
from sklearn.impute import SimpleImputer
from sklearn.utils.estimator_checks import parametrize_with_checks

from kernelsketch.preprocessing import MissingValueCodeImputer


@parametrize_with_checks([MissingValueCodeImputer()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_each_code_is_read_as_simpleimputers_median_and_clean_columns_are_untouched():
    rng = np.random.default_rng(0)
    X = np.column_stack([np.round(rng.normal(72, 12, 800)), rng.normal(size=800), np.round(rng.normal(30, 5, 800))])
    X[:40, 0] = 0.0
    X[40:70, 2] = 999.0
    imp = MissingValueCodeImputer().fit(X)
    assert sorted(zip(imp.columns_.tolist(), imp.codes_.tolist(), strict=True)) == [(0, 0.0), (2, 999.0)]
    out = imp.transform(X)
    for j, code in ((0, 0.0), (2, 999.0)):
        ref = SimpleImputer(missing_values=code, strategy="median").fit_transform(X[:, [j]]).ravel()
        np.testing.assert_array_equal(out[:, j], ref)
    np.testing.assert_array_equal(out[:, 1], X[:, 1])
    assert (X[:40, 0] == 0).all()  # the input is never written
