"""Fitted on a DataFrame, every estimator refuses columns in another order (no silent wrong answer).

scikit-learn's ``check_dataframe_column_names_consistency`` is not among the
checks ``parametrize_with_checks`` yields (scikit-learn's own test suite calls
it by hand), which is why five estimators passed the estimator checks without
recording ``feature_names_in_``; it is called here for every estimator.
"""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import check_dataframe_column_names_consistency

import kernelsketch as ks
from kernelsketch.cluster import StreamingKMeans

pd = pytest.importorskip("pandas")

ESTIMATORS = {
    "KernelPCA": lambda: ks.KernelPCA(2, bandwidth=2.0),
    "SubsampleKPCA": lambda: ks.SubsampleKPCA(2, n_landmarks=30, random_state=0),
    "KernelJL": lambda: ks.KernelJL(n_components=3, n_landmarks=30, random_state=0),
    "Nystroem": lambda: ks.Nystroem(n_landmarks=30, random_state=0),
    "NystroemKernelKMeans": lambda: ks.NystroemKernelKMeans(2, n_landmarks=30, n_init=2, random_state=0),
    "RandomFourierFeatures": lambda: ks.RandomFourierFeatures(8, random_state=0),
    "RFKPCA": lambda: ks.RFKPCA(2, n_random_features=16, random_state=0),
    "RNCA": lambda: ks.RNCA(2, n_random_features=16, random_state=0),
    "StreamingKPCA": lambda: ks.StreamingKPCA(2, n_random_features=16, sketch_size=4, random_state=0),
    "FrequentDirections": lambda: ks.FrequentDirections(sketch_size=4),
    "StreamingKMeans": lambda: StreamingKMeans(2, random_state=0),
}


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_sklearn_column_name_check(name):
    check_dataframe_column_names_consistency(name, ESTIMATORS[name]())


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_reordered_columns_are_refused(name):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(200, 4)) * [1, 5, 10, 20], columns=list("abcd"))
    est = ESTIMATORS[name]().fit(df)
    np.testing.assert_array_equal(est.feature_names_in_, list("abcd"))
    method = est.transform if hasattr(est, "transform") else est.predict
    method(df)  # same order: fine
    with pytest.raises(ValueError, match="feature names"):
        method(df[df.columns[::-1]])
    # (Nystroem.partial_fit after fit starts a new stream from its first block, so it re-reads the names)
    if hasattr(est, "partial_fit") and name != "Nystroem":
        with pytest.raises(ValueError, match="feature names"):
            est.partial_fit(df[df.columns[::-1]])
