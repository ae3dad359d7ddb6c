"""A clustering that can be applied to new rows: cluster_file(...).model, ks.save / ks.load, predict."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_blobs
from sklearn.pipeline import Pipeline

import kernelsketch as ks
from kernelsketch.cli.main import main
from kernelsketch.utils.missing_codes import MissingValueCodeWarning


def _data(n=4000, seed=1):
    X, y = make_blobs(n, centers=3, n_features=4, random_state=seed)
    X[:, 0] *= 50  # columns in different units: the default standardizes
    return X, y


@pytest.mark.parametrize("embedding", ["spectral", "kjl", None])
def test_the_model_is_a_pipeline_whose_predict_gives_the_labels_written(tmp_path, embedding):
    X, _ = _data()
    res = ks.cluster_file(X, 3, embedding=embedding, random_state=0)
    model = res.model
    assert isinstance(model, Pipeline) and model.steps[-1][0] == "kmeans"
    assert ("scaler" in model.named_steps) == (res.scaler is not None)
    np.testing.assert_array_equal(model.predict(X), res.labels)
    ks.save(model, tmp_path / "m.ksm")
    loaded = ks.load(tmp_path / "m.ksm")
    np.testing.assert_array_equal(loaded.predict(X), res.labels)
    np.save(tmp_path / "X.npy", X)
    on_file = ks.cluster_file(tmp_path / "X.npy", 3, embedding=embedding, random_state=0, output=tmp_path / "l.npy")
    out = ks.transform_source(on_file.model, tmp_path / "X.npy", tmp_path / "p.npy", method="predict")
    assert out.n_rows == X.shape[0]
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy").ravel(), np.load(tmp_path / "l.npy").ravel())


def test_imputed_codes_are_part_of_the_model_and_replaced_in_new_rows():
    X, _ = _data()
    X[:60, 1] = -999.0
    with pytest.warns(MissingValueCodeWarning):
        res = ks.cluster_file(X, 3, random_state=0, missing_codes="impute")
    model = res.model
    imputer = model.named_steps["codes"]
    assert imputer.columns_.tolist() == [1] and imputer.codes_.tolist() == [-999.0]
    np.testing.assert_array_equal(model.predict(X), res.labels)
    new = X[60:70].copy()
    new[:, 1] = -999.0
    expected = X[60:70].copy()
    expected[:, 1] = imputer.replacements_[0]
    np.testing.assert_array_equal(model.predict(new), model.predict(expected))


@pytest.mark.distributed
def test_on_dask_the_model_predicts_the_labels_dask_wrote(tmp_path):
    pytest.importorskip("distributed")
    from kernelsketch.distributed import connect

    X, _ = _data(n=6000)
    np.save(tmp_path / "X.npy", X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with connect(n_workers=2) as client:
            res = ks.cluster_file(tmp_path / "X.npy", 3, random_state=0, client=client, chunk_rows=1000)
            out = ks.transform_source(res.model, tmp_path / "X.npy", method="predict", client=client)
    np.testing.assert_array_equal(res.model.predict(X), res.labels)
    np.testing.assert_array_equal(out.embedding.ravel(), res.labels)


def test_the_cli_saves_a_clustering_and_predict_labels_new_rows_by_column_name(tmp_path, capsys):
    X, y = _data()
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(label=y)
    df.to_csv(tmp_path / "train.csv", index=False)
    df.iloc[:500][["d", "c", "b", "a", "label"]].to_csv(tmp_path / "new.csv", index=False)  # columns reordered
    args = ["cluster", str(tmp_path / "train.csv"), "-k", "3", "--label-column", "label", "-q"]
    assert main([*args, "-o", str(tmp_path / "lab.npy"), "--save", str(tmp_path / "m.ksm")]) == 0
    pred = ["predict", str(tmp_path / "m.ksm"), str(tmp_path / "new.csv"), "--label-column", "label"]
    assert main([*pred, "-o", str(tmp_path / "new.npy"), "-q"]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "new.npy").ravel(), np.load(tmp_path / "lab.npy").ravel()[:500])
    capsys.readouterr()
    assert main(["fit", str(tmp_path / "train.csv"), "--label-column", "label", "--method", "rff", "-d", "8",
                 "-o", str(tmp_path / "rff.ksm"), "-q"]) == 0  # fmt: skip
    assert main([*pred[:1], str(tmp_path / "rff.ksm"), *pred[2:], "-o", str(tmp_path / "x.npy")]) == 2
    assert "does not label rows" in capsys.readouterr().err
