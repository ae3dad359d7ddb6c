"""The command line as a user runs it (subprocesses), plus in-process checks of failure paths."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from kernelsketch.cli.main import main
from kernelsketch.datasets import load_dataset

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"}


def ks(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "kernelsketch.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env=ENV, timeout=300)


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    """Bank Notes as CSV (with a header and the class column), .npy, Parquet and libsvm."""
    X, y = load_dataset("banknote")
    folder = tmp_path_factory.mktemp("bank")
    lines = ["variance,skewness,curtosis,entropy,class"]
    lines += [",".join(repr(float(v)) for v in row) + f",{c}" for row, c in zip(X, y)]
    (folder / "bank.csv").write_text("\n".join(lines) + "\n")
    np.save(folder / "bank.npy", X)
    from kernelsketch.io import write_matrix

    write_matrix(folder / "bank.parquet", X, column_names=["variance", "skewness", "curtosis", "entropy"])
    with open(folder / "bank.libsvm", "w") as f:
        for row, c in zip(X, y):
            f.write(f"{c} " + " ".join(f"{j + 1}:{v!r}" for j, v in enumerate(row.tolist()) if v != 0) + "\n")
    return folder, X, y


@pytest.mark.slow
def test_embed_every_format_and_model_round_trip(bank, tmp_path):
    from kernelsketch import KernelJL

    folder, X, y = bank
    r = ks("embed", folder / "bank.csv", "-o", tmp_path / "z.npy", "--method", "kjl", "-d", 20,
           "--label-column", "class", "--seed", 3, "--plot", tmp_path / "z.png", "--save", tmp_path / "m.npz")
    assert r.returncode == 0, r.stderr
    Z = np.load(tmp_path / "z.npy")
    # the CLI fits on every row (file smaller than --fit-rows), exactly like the Python API
    ref = KernelJL(n_components=20, random_state=3).fit(X).transform(X)
    np.testing.assert_allclose(Z, ref, rtol=1e-10, atol=1e-12)
    assert (tmp_path / "z.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # same embedding from the .npy, Parquet and libsvm copies, into CSV / Parquet / .npy outputs
    for src, out in [("bank.npy", "z.csv"), ("bank.parquet", "z.parquet"), ("bank.libsvm", "z2.npy")]:
        extra = () if src != "bank.npy" else ("--columns", "0,1,2,3")
        r = ks("embed", folder / src, "-o", tmp_path / out, "--method", "kjl", "-d", 20, "--seed", 3, "-q", *extra)
        assert r.returncode == 0, r.stderr
        assert r.stdout == ""  # --quiet
        from kernelsketch.io import read_matrix

        np.testing.assert_allclose(read_matrix(tmp_path / out)[0], Z, rtol=1e-9, atol=1e-10)
    # transform with the saved model == the embedding; --json summary
    r = ks("transform", tmp_path / "m.npz", folder / "bank.csv", "--label-column", "class", "-o",
           tmp_path / "t.npy", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["shape"] == [1372, 20] and summary["estimator"] == "KernelJL"
    np.testing.assert_allclose(np.load(tmp_path / "t.npy"), Z, rtol=1e-12, atol=1e-12)
    # a model fitted on 4 features refuses a file with 3
    r = ks("transform", tmp_path / "m.npz", folder / "bank.csv", "--columns", "0,1,2", "-o", tmp_path / "t3.npy")
    assert r.returncode == 1 and "3 feature columns" in r.stderr and not (tmp_path / "t3.npy").exists()


def test_fit_save_streaming_sample_and_cluster(bank, tmp_path):
    folder, X, y = bank
    # fit on a 300-row sample; transform streams every row
    r = ks("fit", folder / "bank.npy", "--method", "kpca", "-d", 3, "--fit-rows", 300, "--save", tmp_path / "k.npz",
           "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["fit_rows"] == 300 and s["n_rows"] == 1372
    from kernelsketch import load

    model = load(tmp_path / "k.npz")
    assert model.X_fit_.shape == (300, 4)
    r = ks("cluster", folder / "bank.csv", "-k", 2, "--label-column", "class", "-o", tmp_path / "labels.csv",
           "--json", "--method", "kjl")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    from sklearn.metrics import adjusted_rand_score, rand_score

    from kernelsketch.io import read_matrix

    labels = read_matrix(tmp_path / "labels.csv", dtype=np.float64)[0].ravel().astype(int)
    assert labels.shape == (1372,) and set(labels) == {0, 1}
    assert s["rand_index"] == pytest.approx(rand_score(y, labels))
    assert s["adjusted_rand_index"] == pytest.approx(adjusted_rand_score(y, labels))


@pytest.mark.slow
def test_usage_errors_and_overwrite_protection(bank, tmp_path, capsys):
    folder, X, y = bank
    out = tmp_path / "z.npy"
    out.write_bytes(b"precious")
    bad_flags = [
        ("embed", folder / "bank.csv", "-o", tmp_path / "a.npy", "--method", "nope"),
        ("embed", folder / "bank.csv", "-o", tmp_path / "a.npy", "--method", "kjl", "--bandwidth", "-1"),
        ("embed", folder / "bank.csv", "--method", "kjl"),  # no -o
        ("cluster", folder / "bank.csv", "-o", tmp_path / "a.csv", "-k", "0"),
        ("embed", folder / "bank.csv", "-o", tmp_path / "a.xlsx", "--method", "kjl"),
        ("frobnicate",),
    ]
    for args in bad_flags:  # in-process: argparse and our usage checks both give exit code 2
        assert main([str(a) for a in args]) == 2, args
        assert "Traceback" not in capsys.readouterr().err
    r = ks(*bad_flags[0])  # and as a user runs it
    assert r.returncode == 2 and "invalid choice" in r.stderr
    r = ks("embed", folder / "bank.csv", "-o", out, "--method", "kjl", "-d", 4, "--label-column", "class")
    assert r.returncode == 2 and "exists" in r.stderr and "--force" in r.stderr
    assert out.read_bytes() == b"precious"
    link = tmp_path / "link.csv"
    link.symlink_to(folder / "bank.csv")
    r = ks("embed", folder / "bank.csv", "-o", link, "--method", "kjl", "--force")
    assert r.returncode == 2 and "input" in r.stderr
    assert (folder / "bank.csv").read_text().startswith("variance")
    r = ks("embed", folder / "bank.csv", "-o", out, "--method", "kjl", "-d", 4, "--label-column", "class", "--force")
    assert r.returncode == 0, r.stderr
    assert np.load(out).shape == (1372, 4)
    assert sorted(os.listdir(tmp_path)) == ["link.csv", "z.npy"]


@pytest.mark.parametrize("text, fragment", [
    ("", "empty"),
    ("a;b;c\n1;2;3\n", "wrong delimiter"),
    ("a,b,c\n1,2,3\n4,zz,6\n", "line 3, column 2 ('b'): non-numeric value 'zz'"),
    ("a,b,c\n1,2,3\n4,5,6\n7,8", "line 4 has 2 field(s), expected 3"),
])
def test_bad_files_exit_1_with_one_line(tmp_path, capsys, text, fragment):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    code = main(["embed", str(path), "-o", str(tmp_path / "z.npy"), "--method", "kjl", "-d", "2"])
    err = capsys.readouterr().err
    assert code == 1
    assert fragment in err and "bad.csv" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == ["bad.csv"]


def test_bad_files_in_a_subprocess(tmp_path):
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n3,x\n")
    r = ks("embed", tmp_path / "bad.csv", "-o", tmp_path / "z.npy", "--method", "rff")
    assert r.returncode == 1 and "line 3, column 2" in r.stderr and "Traceback" not in r.stderr
    r = ks("embed", tmp_path / "bad.csv", "-o", tmp_path / "z.npy", "--method", "rff", "--debug")
    assert r.returncode == 1 and "Traceback" in r.stderr


def test_interrupted_embedding_leaves_nothing(bank, tmp_path, monkeypatch, capsys):
    from kernelsketch.io.writers import BlockWriter

    folder, X, y = bank
    out = tmp_path / "z.npy"
    np.save(out, np.zeros(2))
    before = out.read_bytes()
    calls = []
    orig = BlockWriter.write

    def interrupted(self, block):
        calls.append(1)
        orig(self, block)
        if len(calls) == 2:
            raise KeyboardInterrupt  # Ctrl-C midway through the output

    monkeypatch.setattr(BlockWriter, "write", interrupted)
    monkeypatch.setattr("kernelsketch.io.source._MAX_BLOCK_ROWS", 100)
    code = main(["embed", str(folder / "bank.npy"), "-o", str(out), "--method", "rff", "--force", "-q"])
    assert code == 130 and len(calls) == 2
    assert "interrupted" in capsys.readouterr().err
    assert out.read_bytes() == before
    assert os.listdir(tmp_path) == ["z.npy"]


@pytest.mark.slow
def test_demo_datasets_info(tmp_path, capsys):
    from kernelsketch.cli.demo import run_demo
    from kernelsketch.cli.ui import UI

    results = run_demo(tmp_path / "demo", seed=0, ui=UI(), datasets=("banknote",))
    out = capsys.readouterr().out
    assert "Rand index" in out and "banknote" in out
    r = results["banknote"]
    labels = np.loadtxt(tmp_path / "demo" / "banknote_labels.csv", skiprows=1)
    assert labels.shape == (1372,)
    from sklearn.metrics import rand_score

    assert r["rand_index"] == pytest.approx(rand_score(load_dataset("banknote")[1], labels))
    assert (tmp_path / "demo" / "banknote_kjl.png").stat().st_size > 1000
    r = ks("datasets", "--json")
    assert r.returncode == 0, r.stderr
    info = {d["name"]: d for d in json.loads(r.stdout)["datasets"]}
    assert info["banknote"]["available"] and info["banknote"]["checksum"] == "ok"
    r = ks("info", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["kernelsketch"]
    # the kernel thread count follows the BLAS limit
    one = subprocess.run([sys.executable, "-m", "kernelsketch.cli", "info", "--json"], capture_output=True, text=True,
                         env={**ENV, "OPENBLAS_NUM_THREADS": "1"}, timeout=300)
    assert json.loads(one.stdout)["kernel_threads"] == 1
