"""Inputs at the edges that used to crash: a sample smaller than the neighbour grid, sparse files."""

import subprocess
import sys

import numpy as np
import scipy.sparse as sp

import kernelsketch as ks
from kernelsketch.cli.main import main


def test_diagnose_a_three_row_file_with_k_reports_instead_of_crashing(tmp_path, capsys):
    (tmp_path / "tiny.csv").write_text("1,2\n3,4\n5,7\n")
    rc = main(["diagnose", str(tmp_path / "tiny.csv"), "-k", "2", "-o", str(tmp_path / "report"), "-q"])
    assert rc == 0, capsys.readouterr().err
    text = (tmp_path / "report" / "report.md").read_text()
    assert "n_neighbors" in text


def test_the_automatic_standardization_leaves_sparse_data_as_given(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = sp.random(400, 30, density=0.1, random_state=1, format="csr")
    X.data = rng.uniform(0, 1, X.nnz)
    engine, scaler = ks.standardize_source(X, when="auto")
    assert scaler is None
    res = ks.cluster_file(X, 2, random_state=0)  # spectral's default standardize="auto"
    assert res.scaler is None and res.labels.shape == (400,)
    lines = []
    for i in range(X.shape[0]):
        row = X.getrow(i)
        lines.append(" ".join(["0", *(f"{j + 1}:{v:.6g}" for j, v in zip(row.indices, row.data, strict=True))]))
    (tmp_path / "b.svm").write_text("\n".join(lines) + "\n")
    rc = main(["cluster", str(tmp_path / "b.svm"), "-k", "2", "--n-features", "30"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert "sparse columns left unscaled" in out.out + out.err


def test_messages_name_the_flags_the_user_can_type(tmp_path, capsys):
    # 2-D points with a "t,y" header: the advice says how to keep y as a feature (beside an x, y is a coordinate)
    (tmp_path / "pts.csv").write_text("t,y\n" + "\n".join(f"{i % 7}.5,{i % 5}.25" for i in range(60)) + "\n")
    assert main(["cluster", str(tmp_path / "pts.csv"), "-k", "2"]) == 2
    assert "--columns t,y to keep it as a feature" in capsys.readouterr().err
    assert main(["cluster", str(tmp_path / "pts.csv"), "-k", "2", "--columns", "t,y", "-q"]) == 0
    # fit --method spectral without -d names the flag
    assert main(["fit", str(tmp_path / "pts.csv"), "--columns", "t,y", "--method", "spectral",
                 "-o", str(tmp_path / "m.ksm")]) != 0  # fmt: skip
    assert "-d/--dim" in capsys.readouterr().err
    # --header on a libsvm file is refused, as on .npy
    (tmp_path / "b.svm").write_text("1 1:0.5 2:1.0\n0 1:0.1 3:2.0\n1 2:0.3\n")
    assert main(["cluster", str(tmp_path / "b.svm"), "-k", "2", "--header"]) != 0
    assert "header options apply to text files" in capsys.readouterr().err


def test_the_disconnected_graph_warning_advises_n_neighbors_not_dim(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(c, 0.01, size=(40, 2)) for c in (0, 10, 20, 30)])  # four far-apart groups
    np.save(tmp_path / "X.npy", X)
    cmd = [sys.executable, "-m", "kernelsketch.cli", "cluster", str(tmp_path / "X.npy"), "-k", "2"]
    done = subprocess.run([*cmd, "--n-neighbors", "3", "-n", "40"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "GraphWarning" in done.stderr and "'--n-neighbors'" in done.stderr and "-d/--dim" not in done.stderr
