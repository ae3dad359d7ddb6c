"""Files read as their writer meant them (reliability issue #27, items 12-14).

pandas' numeric headers and index column, column names carried from the fitting file to the
transform, and libsvm files whose last features are zero everywhere.
"""

import numpy as np
import pytest

import kernelsketch as ks
from kernelsketch.cli.main import main

pd = pytest.importorskip("pandas")


@pytest.fixture
def X():
    return np.random.default_rng(0).normal(size=(200, 4)) * [1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize("index", [False, True])
def test_pandas_headers_of_an_unnamed_frame_are_headers(tmp_path, X, index):
    path = tmp_path / "x.csv"
    pd.DataFrame(X).to_csv(path, index=index)  # "0,1,2,3" / ",0,1,2,3" and an index column
    src = ks.io.open_matrix(path)
    assert src.header and src.feature_names == ["0", "1", "2", "3"]
    Y, _ = src.read()
    np.testing.assert_allclose(Y, X, rtol=1e-15)  # neither the header row nor the index column is data


def test_the_index_column_of_a_named_frame_is_not_a_feature(tmp_path, X):
    path = tmp_path / "x.csv"
    pd.DataFrame(X, columns=list("abcd")).to_csv(path)
    src = ks.io.open_matrix(path)
    assert src.feature_names == list("abcd")
    np.testing.assert_allclose(src.read()[0], X, rtol=1e-15)
    # named on purpose, the index column is read
    assert ks.io.open_matrix(path, columns=[0, "a"]).read()[0][:, 0].tolist() == list(range(200))


def test_a_ramp_of_integers_on_the_first_line_stays_data(tmp_path):
    path = tmp_path / "ramp.csv"
    path.write_text("0,1,2\n1,2,3\n5,6,7\n")
    src = ks.io.open_matrix(path)
    assert not src.header and src.read()[0].shape == (3, 3)


def test_header_true_and_false_override_detection(tmp_path, X):
    path = tmp_path / "x.csv"
    pd.DataFrame(X).to_csv(path, index=False)
    assert ks.io.open_matrix(path, header=False).header is False
    num = tmp_path / "n.csv"
    np.savetxt(num, X, delimiter=",")  # no header: its first row read as names only when asked
    assert ks.io.open_matrix(num, header=True).read()[0].shape == (199, 4)
    with pytest.raises(TypeError, match="header must be"):
        ks.io.open_matrix(num, header="yes")


def test_cli_header_flags(tmp_path, X, capsys):
    num = tmp_path / "n.csv"
    np.savetxt(num, X, delimiter=",")
    out = tmp_path / "z.npy"
    assert main(["embed", str(num), "--method", "kjl", "-d", "3", "--header", "-o", str(out), "-q"]) == 0
    assert np.load(out).shape == (199, 3)
    assert main(["embed", str(num), "--header", "--no-header", "--method", "kjl", "-o", str(out), "-q"]) == 2
    assert "not allowed with" in capsys.readouterr().err


def _fit_on_names(tmp_path, X):
    df = pd.DataFrame(X, columns=list("abcd"))
    df.to_csv(tmp_path / "a.csv", index=False)
    model = tmp_path / "m.ksm"
    assert main(["fit", str(tmp_path / "a.csv"), "--method", "kjl", "-d", "3", "--save", str(model), "-q"]) == 0
    return df, model


def test_transform_matches_columns_by_name(tmp_path, X, capsys):
    df, model = _fit_on_names(tmp_path, X)
    est = ks.load(model)
    assert list(est.feature_names_in_) == list("abcd")
    df[list("dbca")].to_csv(tmp_path / "b.csv", index=False)
    for name in ("a", "b"):
        rc = main(["transform", str(model), str(tmp_path / f"{name}.csv"), "-o", str(tmp_path / f"z{name}.npy")])
        assert rc == 0
    said = capsys.readouterr()
    assert "matched to the model's by name" in said.out + said.err
    np.testing.assert_array_equal(np.load(tmp_path / "za.npy"), np.load(tmp_path / "zb.npy"))
    # the loaded model also checks a DataFrame's names, as scikit-learn's estimators do
    np.testing.assert_allclose(est.transform(df), np.load(tmp_path / "za.npy"))


def test_transform_refuses_columns_the_model_does_not_know(tmp_path, X, capsys):
    df, model = _fit_on_names(tmp_path, X)
    df.rename(columns={"d": "e"}).to_csv(tmp_path / "c.csv", index=False)
    out = tmp_path / "zc.npy"
    assert main(["transform", str(model), str(tmp_path / "c.csv"), "-o", str(out)]) != 0
    err = capsys.readouterr().err
    assert "lacks columns the model was fitted on: ['d']" in err and "'e'" in err
    assert not out.exists()


def test_library_transform_source_reorders_by_name(tmp_path, X):
    df = pd.DataFrame(X, columns=list("abcd"))
    df.to_csv(tmp_path / "a.csv", index=False)
    df[list("cadb")].to_csv(tmp_path / "b.csv", index=False)
    est = ks.fit_source(ks.KernelJL(n_components=4, random_state=0), tmp_path / "a.csv").estimator
    a = ks.transform_source(est, tmp_path / "a.csv")
    b = ks.transform_source(est, tmp_path / "b.csv")
    assert a.reordered is None and b.reordered == list("cadb")
    np.testing.assert_array_equal(a.embedding, b.embedding)


def test_standardized_pipeline_keeps_the_names(tmp_path, X):
    model = tmp_path / "p.ksm"
    pd.DataFrame(X, columns=list("abcd")).to_csv(tmp_path / "a.csv", index=False)
    argv = ["fit", str(tmp_path / "a.csv"), "--method", "kjl", "-d", "3", "--standardize", "--save", str(model), "-q"]
    assert main(argv) == 0
    assert list(ks.load(model).feature_names_in_) == list("abcd")


def _write_libsvm(path, X, y):
    with open(path, "w") as f:
        for row, label in zip(X, y, strict=True):
            cells = " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row) if v != 0)
            f.write(f"{label} {cells}\n")


def test_libsvm_transform_reads_the_models_width(tmp_path, capsys):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 6))
    _write_libsvm(tmp_path / "train.svm", X, rng.integers(0, 2, 300))
    Xt = X[:50].copy()
    Xt[:, 4:] = 0.0  # the new file's last two features are zero everywhere: its largest index is 4
    _write_libsvm(tmp_path / "new.svm", Xt, np.zeros(50, int))
    assert ks.io.open_matrix(tmp_path / "new.svm").n_features == 4
    assert ks.io.open_matrix(tmp_path / "new.svm", n_features=6).n_features == 6
    model = tmp_path / "m.ksm"
    assert main(["fit", str(tmp_path / "train.svm"), "--method", "kjl", "-d", "3", "--save", str(model), "-q"]) == 0
    out = tmp_path / "z.npy"
    assert main(["transform", str(model), str(tmp_path / "new.svm"), "-o", str(out), "-q"]) == 0
    np.testing.assert_allclose(np.load(out), ks.load(model).transform(Xt), rtol=1e-10, atol=1e-12)
    # the library call reads it as wide as the model, too
    res = ks.transform_source(ks.load(model), tmp_path / "new.svm")
    np.testing.assert_allclose(res.embedding, np.load(out))
    # --n-features names the width; too few for the file's indices is refused
    argv = ["embed", str(tmp_path / "train.svm"), "--n-features", "5", "--method", "kjl", "-o", str(tmp_path / "w.npy")]
    assert main(argv) != 0
    assert "more than the 5 features" in capsys.readouterr().err
    with pytest.raises(ValueError, match="applies to libsvm"):
        ks.io.open_matrix(out, n_features=3)


# -- a first line that could be either: refused with the flags that decide it, never guessed -----------------
@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("0,1\n1,0\n1,1\n0,0\n1,0\n0,1\n", "0, 1, ..., n-1"),  # binary data whose first row is pandas' header
        ("0\n1\n1\n0\n", "0, 1, ..., n-1"),  # one column starting with 0
        ("400,410,420\n0.1,0.2,0.3\n0.4,0.5,0.6\n", "whole number 400"),  # wavelengths as names
        ("species,400,410\nsetosa,0.5,0.25\nvirginica,1.5,0.75\n", "whole number 400"),
    ],
)
def test_a_first_line_that_may_be_header_or_data_is_refused_naming_the_flags(tmp_path, text, why):
    path = tmp_path / "x.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"cannot tell whether the first line.*{why}.*--header or --no-header"):
        ks.io.open_matrix(path)
    n_lines = text.count("\n")
    label = {"label_column": 0} if "species" in text else {}
    assert ks.io.open_matrix(path, header=False, **label).read()[0].shape[0] == n_lines  # no row lost
    assert ks.io.open_matrix(path, header=True, **label).read()[0].shape[0] == n_lines - 1  # no row invented


def test_the_cli_refuses_to_guess_and_clusters_every_row_once_told(tmp_path, capsys):
    from kernelsketch.cli.main import main

    path = tmp_path / "bin.csv"
    path.write_text("0,1\n1,0\n1,1\n0,0\n1,0\n0,1\n")
    assert main(["cluster", str(path), "-k", "2", "-o", str(tmp_path / "lab.csv")]) == 1
    assert "--no-header" in capsys.readouterr().err and not (tmp_path / "lab.csv").exists()
    assert main(["cluster", str(path), "-k", "2", "--no-header", "-o", str(tmp_path / "lab.npy"), "-q"]) == 0
    assert np.load(tmp_path / "lab.npy").size == 6
