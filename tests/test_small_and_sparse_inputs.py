"""Inputs at the edges that used to crash: a sample smaller than the neighbour grid, sparse files."""

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
