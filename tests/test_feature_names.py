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


def test_cluster_file_of_a_data_frame_refuses_a_label_like_column_and_keeps_the_names():
    # issue 53 item 4: a DataFrame's `class` column was clustered as a feature without a word (the CLI refuses the
    # same CSV), and the frame's column names were dropped (so a reordered frame only warned)
    pd = pytest.importorskip("pandas")
    from sklearn.datasets import make_blobs

    X, y = make_blobs(2000, centers=3, random_state=1)
    df = pd.DataFrame(X, columns=["a", "b"]).assign(**{"class": y})
    with pytest.raises(ValueError, match="column 'class' looks like the class labels; pass label_column='class'"):
        ks.cluster_file(df, 3)
    res = ks.cluster_file(df, 3, label_column="class", random_state=0)
    assert res.adjusted_rand_index > 0.95
    assert list(res.model.steps[0][1].feature_names_in_) == ["a", "b"]
    np.testing.assert_array_equal(res.model.predict(df[["a", "b"]]), res.labels)
    with pytest.raises(ValueError, match="feature names"):
        res.model.predict(df[["b", "a"]])  # reordered columns: refused by name, never a silent wrong answer
    kept = ks.cluster_file(df, 3, columns=["a", "b", "class"], random_state=0)  # said explicitly: a feature
    assert list(kept.model.steps[0][1].feature_names_in_) == ["a", "b", "class"]
    with pytest.raises(ValueError, match="not a column"):
        ks.cluster_file(df, 3, label_column="species")


def test_a_model_and_an_input_of_which_only_one_has_column_names_warn(tmp_path):
    # issue 53 item 3: a model fitted on a headerless file applied to a file with a header (or the reverse) took the
    # columns in their order without a word (reordered columns: ARI .61, the embedding off by .96)
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(1500, centers=3, random_state=1)
    np.savetxt(tmp_path / "hdr.csv", X, delimiter=",", header="a,b", comments="")
    np.savetxt(tmp_path / "nohdr.csv", X[:, ::-1], delimiter=",")
    named = ks.cluster_file(str(tmp_path / "hdr.csv"), 3, random_state=0).model
    unnamed = ks.cluster_file(str(tmp_path / "nohdr.csv"), 3, random_state=0).model
    with pytest.warns(UserWarning, match=r"fitted on columns named \['a', 'b'\], but the input has no column names"):
        ks.transform_source(named, str(tmp_path / "nohdr.csv"), None, method="predict")
    with pytest.warns(UserWarning, match="fitted without column names .* taken in their order"):
        ks.transform_source(unnamed, str(tmp_path / "hdr.csv"), None, method="predict")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # names on both sides: matched by name, nothing to say
        ks.transform_source(named, str(tmp_path / "hdr.csv"), None, method="predict")


def test_x_and_y_side_by_side_are_coordinates_not_a_label(tmp_path):
    """#54: a newcomer's `x,y` file was refused ('y' looks like the labels); beside an `x`, `y` is a coordinate."""
    pd = pytest.importorskip("pandas")
    from kernelsketch.out_of_core import open_engine
    from kernelsketch.out_of_core.engine import label_like_columns

    X = np.random.default_rng(0).normal(size=(50, 2))
    pd.DataFrame(X, columns=["x", "y"]).to_csv(tmp_path / "xy.csv", index=False)
    pd.DataFrame(X, columns=["a", "y"]).to_csv(tmp_path / "ay.csv", index=False)
    assert label_like_columns(open_engine(str(tmp_path / "xy.csv"))) == []
    assert label_like_columns(open_engine(str(tmp_path / "ay.csv"))) == ["y"]
