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
    last = "clustering" if embedding == "spectral" else "kmeans"
    assert isinstance(model, Pipeline) and model.steps[-1][0] == last
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


# ----------------------------------------------------------- one fit path: cluster_file is fit_source of a clusterer


def test_the_default_model_is_the_fitted_clusterer_with_the_labels_its_fit_source_gives(tmp_path):
    """#52 item 5: cluster_file fits one LandmarkSpectralClustering by fit_source and assigns every row with it."""
    X, _ = _data(n=3000)
    np.save(tmp_path / "X.npy", X)
    res = ks.cluster_file(tmp_path / "X.npy", 3, random_state=0, standardize=False, init_size=1000)
    clusterer = res.model.named_steps["clustering"]
    assert isinstance(clusterer, ks.LandmarkSpectralClustering) and res.clusterer is clusterer
    if clusterer.labeling_ == "kmeans":  # the assignment is the clusterer's own embedding and k-means
        assert clusterer.embedding_ is res.embedding and clusterer.kmeans_ is res.kmeans
    else:  # the landmarks' votes: the clusterer's assigner (its embedding's graph, one-hot projection)
        emb, km = clusterer.assigner()
        assert res.embedding.landmarks_ is clusterer.embedding_.landmarks_
        np.testing.assert_array_equal(res.embedding.projection_, emb.projection_)
        np.testing.assert_array_equal(res.kmeans.cluster_centers_, km.cluster_centers_)
    alone = ks.LandmarkSpectralClustering(3, init_size=1000, random_state=0)
    fit = ks.fit_source(alone, tmp_path / "X.npy")
    assert fit.strategy == "embedding_then_sample" and fit.seeding.indices.size == 1000
    np.testing.assert_array_equal(alone.kmeans_.cluster_centers_, clusterer.kmeans_.cluster_centers_)
    np.testing.assert_array_equal(alone.predict(X), res.labels)


def test_the_saved_models_score_is_stability_and_a_grid_search_does_not_pick_the_largest_k(tmp_path):
    """The model's score is the clustering's own (stability), never k-means' negative inertia, which only grows
    with k: a GridSearchCV over n_clusters with it finds the 3 blobs."""
    from sklearn.model_selection import GridSearchCV

    from kernelsketch.cluster.stability import estimator_stability

    X, _ = make_blobs(1500, centers=3, n_features=2, cluster_std=0.6, random_state=4)
    res = ks.cluster_file(X, 3, random_state=0)
    model = res.model
    ks.save(model, tmp_path / "m.ksm")
    loaded = ks.load(tmp_path / "m.ksm")
    clusterer = loaded.named_steps["clustering"]
    Xt = loaded[:-1].transform(X) if len(loaded) > 1 else X
    assert loaded.score(X) == pytest.approx(estimator_stability(clusterer, Xt, n_pairs=3, random_state=0))
    assert -1.0 <= loaded.score(X) <= 1.0
    grid = GridSearchCV(
        ks.LandmarkSpectralClustering(n_landmarks=200, random_state=0), {"n_clusters": [2, 3, 4, 5, 6]}, cv=2
    ).fit(X)
    assert grid.best_params_["n_clusters"] == 3
    inertia_pick = max(
        (2, 3, 4, 5, 6),
        key=lambda k: (
            ks.StreamingKMeans(k, random_state=0)
            .fit(res.embedding.with_components(6).transform(X))
            .score(res.embedding.with_components(6).transform(X))
        ),
    )
    assert inertia_pick != 3  # (what scoring by negative inertia would have chosen)


def test_an_embedding_given_with_another_seed_is_named_not_silently_replaced():
    X, _ = _data(n=1500)
    with pytest.warns(UserWarning, match="random_state=5 is replaced by cluster_file's random_state=0"):
        ks.cluster_file(X, 3, embedding=ks.LandmarkSpectralEmbedding(random_state=5), random_state=0)


# ----------------------------------------------------------------- #54 item 4: predict reports like cluster


def _train_and_new(tmp_path):
    X, y = _data(n=3000)
    pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(label=y).to_csv(tmp_path / "train.csv", index=False)
    new = pd.DataFrame(X[:600], columns=["a", "b", "c", "d"]).assign(label=y[:600], id=np.arange(600))
    new[["id", "d", "label", "b", "c", "a"]].to_csv(tmp_path / "new.csv", index=False)  # reordered, two extras
    return X, y


def test_predict_prints_the_sizes_and_scores_and_ignores_columns_the_model_does_not_know(tmp_path, capsys):
    import json

    from sklearn.metrics import adjusted_rand_score

    X, y = _train_and_new(tmp_path)
    args = ["cluster", str(tmp_path / "train.csv"), "-k", "3", "--label-column", "label", "-q"]
    assert main([*args, "-o", str(tmp_path / "lab.npy"), "--save", str(tmp_path / "m.ksm")]) == 0
    pred = ["predict", str(tmp_path / "m.ksm"), str(tmp_path / "new.csv"), "-o", str(tmp_path / "p.npy")]
    assert main([*pred, "--label-column", "label", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    labels = np.load(tmp_path / "p.npy").ravel()
    np.testing.assert_array_equal(labels, np.load(tmp_path / "lab.npy").ravel()[:600])  # the same rows, by name
    assert out["cluster_sizes"] == np.bincount(labels, minlength=3).tolist()
    assert out["adjusted_rand_index"] == pytest.approx(adjusted_rand_score(y[:600], labels))
    assert out["ignored_columns"] == ["id"]
    assert main([*pred, "--force"]) == 0  # no --label-column: `label` is one more column the model does not know
    said = capsys.readouterr().out
    assert "left out: id, label" in said and "cluster sizes [" in said


def test_the_predict_line_printed_after_save_runs_as_printed(tmp_path, capsys, monkeypatch):
    import shlex

    _train_and_new(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["cluster", "train.csv", "-k", "3", "--label-column", "label", "-o", "l.csv", "--save", "m.ksm"]) == 0
    said = capsys.readouterr().out
    line = said.split("(these or new ones): ")[1].splitlines()[0]
    argv = shlex.split(line)
    assert argv[:2] == ["kernelsketch", "predict"]
    assert main(argv[1:]) == 0
    assert "adjusted Rand index" in capsys.readouterr().out
    np.testing.assert_array_equal(pd.read_csv(argv[-1]).to_numpy(), pd.read_csv("l.csv").to_numpy())


def test_predict_offers_no_plot(capsys):
    assert main(["predict", "--help"]) == 0
    assert "--plot" not in capsys.readouterr().out
