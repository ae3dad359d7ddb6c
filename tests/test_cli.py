"""The command line as a user runs it (subprocesses), plus in-process checks of failure paths."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from sklearn.metrics import rand_score

import kernelsketch as ks_lib
from kernelsketch.cli.main import main
from kernelsketch.datasets import load_dataset

from .subprocesses import INTERRUPTIBLE

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"}


def ks(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "kernelsketch.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=ENV,
        timeout=300,
    )


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    """Bank Notes as CSV (with a header and the class column), .npy, Parquet and libsvm."""
    X, y = load_dataset("banknote")
    folder = tmp_path_factory.mktemp("bank")
    lines = ["variance,skewness,curtosis,entropy,class"]
    lines += [",".join(repr(float(v)) for v in row) + f",{c}" for row, c in zip(X, y, strict=True)]
    (folder / "bank.csv").write_text("\n".join(lines) + "\n")
    np.save(folder / "bank.npy", X)
    from kernelsketch.io import write_matrix

    write_matrix(folder / "bank.parquet", X, column_names=["variance", "skewness", "curtosis", "entropy"])
    with open(folder / "bank.libsvm", "w") as f:
        for row, c in zip(X, y, strict=True):
            f.write(f"{c} " + " ".join(f"{j + 1}:{v!r}" for j, v in enumerate(row.tolist()) if v != 0) + "\n")
    return folder, X, y


@pytest.mark.slow
def test_embed_every_format_and_model_round_trip(bank, tmp_path):
    from kernelsketch import KernelJL

    folder, X, y = bank
    r = ks(
        "embed",
        folder / "bank.csv",
        "-o",
        tmp_path / "z.npy",
        "--method",
        "kjl",
        "-d",
        20,
        "--label-column",
        "class",
        "--seed",
        3,
        "--plot",
        tmp_path / "z.png",
        "--save",
        tmp_path / "m.npz",
    )
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
    r = ks(
        "transform",
        tmp_path / "m.npz",
        folder / "bank.csv",
        "--label-column",
        "class",
        "-o",
        tmp_path / "t.npy",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["shape"] == [1372, 20] and summary["estimator"] == "KernelJL"
    np.testing.assert_allclose(np.load(tmp_path / "t.npy"), Z, rtol=1e-12, atol=1e-12)
    # a model fitted on 4 features refuses a file with 3
    r = ks("transform", tmp_path / "m.npz", folder / "bank.csv", "--columns", "0,1,2", "-o", tmp_path / "t3.npy")
    assert r.returncode == 1 and not (tmp_path / "t3.npy").exists()
    assert "3 feature columns" in r.stderr or "lacks columns the model was fitted on: ['" in r.stderr, r.stderr


def test_fit_save_streaming_sample_and_cluster(bank, tmp_path):
    folder, X, y = bank
    # fit on a 300-row sample; transform streams every row
    r = ks(
        "fit",
        folder / "bank.npy",
        "--method",
        "kpca",
        "-d",
        3,
        "--fit-rows",
        300,
        "--save",
        tmp_path / "k.npz",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["fit_rows"] == 300 and s["n_rows"] == 1372
    from kernelsketch import load

    model = load(tmp_path / "k.npz")
    assert model.X_fit_.shape == (300, 4)
    r = ks(
        "cluster",
        folder / "bank.csv",
        "-k",
        2,
        "--label-column",
        "class",
        "-o",
        tmp_path / "labels.csv",
        "--json",
        "--method",
        "kjl",
    )
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


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "empty"),
        ("a;b;c\n1;2;3\n", "wrong delimiter"),
        ("a,b,c\n1,2,3\n4,zz,6\n", "line 3, column 2 ('b'): non-numeric value 'zz'"),
        ("a,b,c\n1,2,3\n4,5,6\n7,8", "line 4 has 2 field(s), expected 3"),
    ],
)
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
    assert (tmp_path / "demo" / "banknote_spectral.png").stat().st_size > 1000
    # the default beats the Kernel JL paper's pipeline on Bank Notes (ARI .60 against .05 at seed 0)
    assert r["adjusted_rand_index"] > r["kjl_adjusted_rand_index"] + 0.2
    r = ks("datasets", "--json")
    assert r.returncode == 0, r.stderr
    info = {d["name"]: d for d in json.loads(r.stdout)["datasets"]}
    assert info["banknote"]["available"] and info["banknote"]["checksum"] == "ok"
    r = ks("info", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["kernelsketch"]
    # the copies shipped in the package are present and verify (the wheel check relies on this)
    assert json.loads(r.stdout)["vendored_datasets"] == {"banknote": "ok"}
    # the kernel thread count follows the BLAS limit
    one = subprocess.run(
        [sys.executable, "-m", "kernelsketch.cli", "info", "--json"],
        capture_output=True,
        text=True,
        env={**ENV, "OPENBLAS_NUM_THREADS": "1"},
        timeout=300,
    )
    assert json.loads(one.stdout)["kernel_threads"] == 1


# -- cluster: bounded, streamed, the same flags on Dask ----------------------------------
def test_cluster_without_output_prints_scores_and_writes_nothing(bank, tmp_path):
    folder, X, y = bank
    r = ks("cluster", folder / "bank.csv", "--label-column", "class", "-k", 2, "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["output"] is None and list(tmp_path.iterdir()) == []
    assert (
        s["n_landmarks"] == 1000  # the default, landmark spectral clustering: 1,000 landmarks
        and s["n_rows"] == 1372
        and s["columns"] == ["variance", "skewness", "curtosis", "entropy"]
    )
    # the library's call on the same rows gives the same clusters (Rand index .80, ARI .59 on Bank Notes)
    ref = ks_lib.cluster_file(X, 2, random_state=0)
    assert s["rand_index"] == pytest.approx(rand_score(y, ref.labels), abs=1e-12)
    assert s["rand_index"] > 0.75 and sum(s["cluster_sizes"]) == 1372


@pytest.mark.parametrize("method", ["kjl", "subsample-kpca", "nystroem-kkm", "kmeans"])
def test_cluster_every_method_plots_its_embedding(bank, tmp_path, method):
    folder, X, y = bank
    r = ks(
        "cluster",
        folder / "bank.npy",
        "-k",
        2,
        "--method",
        method,
        "-o",
        tmp_path / "l.parquet",
        "--plot",
        tmp_path / "p.png",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    from kernelsketch.io import read_matrix

    labels = read_matrix(tmp_path / "l.parquet")[0].ravel()
    assert labels.shape == (1372,) and set(labels) == {0, 1}
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
    s = json.loads(r.stdout)
    assert s["plot"] == str(tmp_path / "p.png")


@pytest.mark.parametrize(
    "args, message",
    [
        (("-k", 5000, "--label-column", "class"), "-k=5000 must be <= n_samples=1372"),
        (("-k", 2, "--label-column", "nope"), "no label column named 'nope'"),
    ],
)
def test_cluster_bad_input_is_one_line_exit_1_and_no_output(bank, tmp_path, args, message):
    folder, X, y = bank
    out = tmp_path / "labels.csv"
    r = ks("cluster", folder / "bank.csv", "-o", out, *args)
    assert r.returncode == 1, r.stderr
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_cluster_empty_file_and_late_nan(tmp_path):
    (tmp_path / "empty.csv").write_text("")
    r = ks("cluster", tmp_path / "empty.csv", "-k", 2, "-o", tmp_path / "l.npy")
    assert r.returncode == 1 and "empty" in r.stderr and not (tmp_path / "l.npy").exists()
    X = np.random.default_rng(0).normal(size=(200_000, 3))
    X[190_000, 2] = np.inf
    np.save(tmp_path / "late.npy", X)
    r = ks(
        "cluster", tmp_path / "late.npy", "-k", 3, "--method", "kmeans", "-o", tmp_path / "l.npy", "--init-size", 1000
    )
    assert r.returncode == 1 and "row index 190000, column 3" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.csv", "late.npy"]


@pytest.mark.slow
def test_cluster_sigint_during_assignment_keeps_the_previous_output(tmp_path):
    import signal
    import time

    X = np.random.default_rng(0).normal(size=(300_000, 4))
    np.save(tmp_path / "X.npy", X)
    out = tmp_path / "labels.npy"
    np.save(out, np.array([7]))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kernelsketch.cli",
            "cluster",
            str(tmp_path / "X.npy"),
            "-k",
            "3",
            "-n",
            "3000",
            "--method",
            "kjl",  # its assignment pass embeds every block (the spectral default's reads a kept graph: too quick)
            "-o",
            str(out),
            "--force",
            "-q",
        ],
        env=ENV,
        stderr=subprocess.PIPE,
        text=True,
        **INTERRUPTIBLE,
    )
    deadline = time.time() + 120
    while time.time() < deadline and not any(p.name.endswith(".part") for p in tmp_path.iterdir()):
        time.sleep(0.05)  # the labels' temporary file appears with the first assigned block
    assert proc.poll() is None, "the command finished before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "interrupted" in err
    assert np.load(out).tolist() == [7]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["X.npy", "labels.npy"]


@pytest.mark.distributed
@pytest.mark.slow
def test_cluster_on_dask_workers_equals_in_memory(tmp_path):
    pytest.importorskip("distributed")
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n_samples=30_000, centers=5, n_features=4, random_state=2)
    np.save(tmp_path / "X.npy", np.column_stack([X, y]))
    common = ("cluster", tmp_path / "X.npy", "-k", 5, "--label-column", 4, "--json")
    a = ks(*common, "-o", tmp_path / "a.npy")
    b = ks(*common, "-o", tmp_path / "b.npy", "--workers", 2)
    assert a.returncode == 0 and b.returncode == 0, b.stderr
    sa, sb = json.loads(a.stdout), json.loads(b.stdout)
    # the default, landmark spectral clustering: 1,000 landmarks, each row's own (local) bandwidth
    assert sa["n_landmarks"] == sb["n_landmarks"] == 1000 and sb["engine"] == "dask" and sb["dask"]["tasks"] > 0
    assert sb["bandwidth"] == sa["bandwidth"]
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score(np.load(tmp_path / "a.npy").ravel(), np.load(tmp_path / "b.npy").ravel()) >= 0.999
    assert sb["rand_index"] == pytest.approx(sa["rand_index"], abs=1e-4)


def test_a_label_column_is_never_embedded_silently(bank, tmp_path):
    folder, X, y = bank
    for cmd in (
        ("embed", folder / "bank.csv", "-o", tmp_path / "z.npy", "--method", "kjl", "-d", 4),
        ("cluster", folder / "bank.csv", "-k", 2),
    ):
        r = ks(*cmd)
        assert r.returncode == 2 and "'class' of" in r.stderr and "--label-column class" in r.stderr
    assert list(tmp_path.iterdir()) == []
    # explicit choices are obeyed, and the printout and --json say which columns were used
    r = ks(
        "embed",
        folder / "bank.csv",
        "-o",
        tmp_path / "z.npy",
        "--method",
        "kjl",
        "-d",
        4,
        "--columns",
        "variance,skewness",
        "--json",
    )
    assert r.returncode == 0 and json.loads(r.stdout)["columns"] == ["variance", "skewness"]
    r = ks(
        "embed", folder / "bank.csv", "-o", tmp_path / "z2.npy", "--method", "kjl", "-d", 4, "--label-column", "class"
    )
    assert r.returncode == 0 and "features: variance, skewness, curtosis, entropy; labels: column class" in r.stdout


# -- one consistent CLI -------------------------------------------------------------------------


def _parser_walk():
    from kernelsketch.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return sub.choices


def test_every_output_is_dash_o_and_every_option_is_explained():
    commands = _parser_walk()
    for name in ("embed", "fit", "transform", "cluster", "demo", "reproduce"):
        flags = {o: a for a in commands[name]._actions for o in a.option_strings}
        assert "-o" in flags and flags["-o"] is flags["--output"], name
    for name, p in commands.items():
        for a in p._actions:
            if a.option_strings and a.help is None:
                raise AssertionError(f"{name} {a.option_strings} has no help text")
            # -d is always the output dimension, -n always landmarks / features
            if "-d" in a.option_strings:
                assert a.dest == "dim", name
            if "-n" in a.option_strings:
                assert a.dest == "landmarks", name
    from kernelsketch.cli.pipeline import METHODS

    method_help = next(a.help for a in commands["embed"]._actions if "--method" in a.option_strings)
    assert all(f"{m}:" in method_help for m in METHODS)
    assert any("--sketch-size" in a.option_strings for a in commands["embed"]._actions)


@pytest.mark.parametrize(
    "argv, hint",
    [
        (["embed", "x.csv", "-o", "z.npy", "--method", "kj"], "did you mean 'kjl'"),
        (["embed", "x.csv", "-o", "z.npy", "--method", "kjl", "--bandwith", "2"], "did you mean --bandwidth"),
        (["cluster", "x.csv", "-k", "2", "--loyd-passes", "1"], "did you mean --lloyd-passes"),
    ],
)
def test_usage_errors_are_one_line_with_a_suggestion(argv, hint, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert hint in err and len(err.strip().splitlines()) == 1, err


def test_errors_name_the_flag_and_json_gets_an_error_document(bank, tmp_path, capsys):
    folder, X, y = bank
    code = main(
        [
            "--json",
            "embed",
            str(folder / "bank.csv"),
            "-o",
            str(tmp_path / "z.npy"),
            "--method",
            "kjl",
            "-d",
            "3",
            "-n",
            "5000",
            "--label-column",
            "class",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 1
    doc = json.loads(out)
    assert doc["command"] == "embed" and doc["error"].startswith("-n/--landmarks=5000 must be <=")
    assert "n_landmarks" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "z.npy").exists()
    # a usage error under --json: a document too
    assert main(["--json", "embed", str(folder / "bank.csv"), "--method", "kjl"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert "required" in doc["error"] and "-o/--output" in doc["error"]


def test_flag_renaming_touches_parameters_not_prose():
    from kernelsketch.cli.main import _flag_names

    assert _flag_names("n_components=40 must be <= n_landmarks=20") == "-d/--dim=40 must be <= -n/--landmarks=20"
    assert (
        _flag_names("The 'sketch_size' parameter of StreamingKPCA") == "The '--sketch-size' parameter of StreamingKPCA"
    )
    assert _flag_names("the bandwidth heuristic") == "the bandwidth heuristic"


def test_standardize_gamma_and_sketch_size(bank, tmp_path, capsys):
    """--standardize = StandardScaler before the map (saved in the model).

    --gamma = sklearn's; --sketch-size reaches skpca.
    """
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from kernelsketch import KernelJL, load

    folder, X, y = bank
    base = [str(folder / "bank.csv"), "--label-column", "class", "-q"]
    assert (
        main(
            [
                "embed",
                *base,
                "-o",
                str(tmp_path / "z.npy"),
                "--method",
                "kjl",
                "-d",
                "6",
                "--standardize",
                "--gamma",
                "0.25",
                "--save",
                str(tmp_path / "m.ksm"),
            ]
        )
        == 0
    )
    ref = make_pipeline(StandardScaler(), KernelJL(n_components=6, gamma=0.25, random_state=0))
    np.testing.assert_allclose(np.load(tmp_path / "z.npy"), ref.fit_transform(X), rtol=1e-9, atol=1e-12)
    model = load(tmp_path / "m.ksm")
    assert model.steps[-1][1].bandwidth_ == pytest.approx(2.0)
    assert main(["transform", str(tmp_path / "m.ksm"), *base, "-o", str(tmp_path / "t.npy")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "t.npy"), np.load(tmp_path / "z.npy"))
    assert (
        main(
            [
                "fit",
                *base,
                "-o",
                str(tmp_path / "s.ksm"),
                "--method",
                "skpca",
                "-d",
                "3",
                "-n",
                "64",
                "--sketch-size",
                "9",
            ]
        )
        == 0
    )
    skpca = load(tmp_path / "s.ksm")
    assert (skpca.sketch_size, skpca.n_random_features, skpca.n_components) == (9, 64, 3)
    capsys.readouterr()
    assert (
        main(["embed", *base, "-o", str(tmp_path / "y.npy"), "--method", "kjl", "-d", "3", "--sketch-size", "4"]) == 2
    )
    assert "--sketch-size does not apply to --method kjl" in capsys.readouterr().err


def test_reproductions_write_files_with_the_permissions_of_every_other_output(tmp_path):
    from kernelsketch.experiments._report import _atomic_write_bytes

    _atomic_write_bytes(tmp_path / "table.csv", b"a,b\n")
    (tmp_path / "plain.csv").write_bytes(b"a,b\n")
    assert (tmp_path / "table.csv").stat().st_mode == (tmp_path / "plain.csv").stat().st_mode


def test_info_reports_a_missing_or_corrupt_shipped_dataset(tmp_path, monkeypatch):
    from kernelsketch.datasets import _locate, shipped_datasets

    monkeypatch.setattr(_locate, "VENDORED_DIR", tmp_path)
    assert shipped_datasets() == {"banknote": "missing"}
    (tmp_path / "data_banknote_authentication.txt.gz").write_bytes(b"not the file")
    assert shipped_datasets() == {"banknote": "checksum mismatch"}


def test_cluster_landmark_selection_kmeans_is_the_librarys(tmp_path, capsys):
    """`cluster --landmark-selection kmeans` (issue #37): the LSC-K landmarks, the library's labels."""
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(3000, centers=4, cluster_std=1.0, random_state=2)
    np.save(tmp_path / "X.npy", X)
    out = tmp_path / "lab.npy"
    assert (
        main(["cluster", str(tmp_path / "X.npy"), "-k", "4", "--landmark-selection", "kmeans", "-o", str(out), "-q"])
        == 0
    )
    emb = ks_lib.LandmarkSpectralEmbedding(n_components=4, landmarks="kmeans", random_state=0)
    ref = ks_lib.cluster_file(X, 4, embedding=emb, standardize="auto", random_state=0)
    np.testing.assert_array_equal(np.load(out).ravel(), ref.labels)
    assert ref.embedding.landmark_indices_ is None  # centres, not rows
    rc = main(["cluster", str(tmp_path / "X.npy"), "-k", "4", "--method", "kjl", "--landmark-selection", "kmeans"])
    assert rc == 2 and "--landmark-selection applies to --method spectral" in capsys.readouterr().err


def test_kmeans_landmarks_are_counted_as_centres_not_sample_rows():
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(3000, centers=3, random_state=0)
    emb = ks_lib.LandmarkSpectralEmbedding(n_components=3, n_landmarks=100, landmarks="kmeans", random_state=0)
    res = ks_lib.fit_source(emb, X)
    assert res.n_landmarks == 100 == emb.landmarks_.shape[0] and res.fit_rows == 1000  # 10 m rows read


def test_cluster_search_approximate_is_the_librarys(tmp_path, capsys):
    """`cluster --search approximate` (issue #38): U-SPEC's coarse-to-fine search, the library's labels."""
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(3000, centers=4, cluster_std=1.0, random_state=2)
    np.save(tmp_path / "X.npy", X)
    out = tmp_path / "lab.npy"
    assert main(["cluster", str(tmp_path / "X.npy"), "-k", "4", "--search", "approximate", "-o", str(out), "-q"]) == 0
    emb = ks_lib.LandmarkSpectralEmbedding(n_components=4, search="approximate", random_state=0)
    ref = ks_lib.cluster_file(X, 4, embedding=emb, standardize="auto", random_state=0)
    np.testing.assert_array_equal(np.load(out).ravel(), ref.labels)
    assert ref.embedding.search == "approximate"
    rc = main(["cluster", str(tmp_path / "X.npy"), "-k", "4", "--method", "kmeans", "--search", "approximate"])
    assert rc == 2 and "--search applies to --method spectral" in capsys.readouterr().err


def test_dtype_float64_is_honoured_for_a_float32_npy(tmp_path):
    # issue 53 item 2: --dtype float64 used to mean "keep the file's dtype" (float32 out, float32 arithmetic)
    X = np.random.default_rng(0).normal(size=(600, 3)).astype(np.float32)
    np.save(tmp_path / "x.npy", X)
    for flag, dtype in [([], np.float32), (["--dtype", "float64"], np.float64), (["--dtype", "float32"], np.float32)]:
        out = tmp_path / f"z{len(flag)}{dtype.__name__}.npy"
        args = ["embed", str(tmp_path / "x.npy"), "-o", str(out), "--method", "kjl", "-d", "3", "-q", *flag]
        assert main(args) == 0
        assert np.load(out).dtype == dtype, flag


@pytest.mark.parametrize("k", ["0", "1", "two"])
def test_k_below_two_is_a_usage_error(tmp_path, capsys, k):
    # issue 53 item 14: -k 1 exited 1 (a run-time error) where -k 0 exited 2
    np.save(tmp_path / "x.npy", np.random.default_rng(0).normal(size=(100, 2)))
    assert main(["cluster", str(tmp_path / "x.npy"), "-k", k, "-o", str(tmp_path / "l.npy")]) == 2
    err = capsys.readouterr().err
    if k == "two":  # not a number: the parser's
        assert "expected a number of clusters or 'auto', got 'two'" in err
    else:  # a number out of range: cluster_file's own constraint, under the flag's name (#52 item 6: checked once)
        assert "'-k' must be an int in the range [2, inf)" in err and "cluster_file" not in err  # (#62: no function)
    assert not (tmp_path / "l.npy").exists()


@pytest.mark.parametrize("selection", ["uniform", "kmeans"])
def test_identical_rows_get_the_same_clear_message_from_either_landmark_selection(tmp_path, capsys, selection):
    # issue 53 item 7: the k-means selection said "index 1 is out of bounds" (later "-d/--dim=3 must be in [1, 1]")
    np.save(tmp_path / "same.npy", np.ones((500, 3)))
    args = ["cluster", str(tmp_path / "same.npy"), "-k", "3", "-o", str(tmp_path / "l.npy")]
    assert main([*args, "--landmark-selection", selection]) != 0
    err = capsys.readouterr().err
    assert "too few distinct rows or landmarks" in err and "--dim" not in err


def test_piped_input_is_refused_with_what_to_do(tmp_path):
    # issue 53 item 9: /dev/stdin or <(cat x.csv) said "no data rows (only a header)"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kernelsketch.cli.main",
            "cluster",
            "/dev/stdin",
            "-k",
            "2",
            "-o",
            str(tmp_path / "l.npy"),
        ],
        input="a,b\n1,2\n3,4\n5,6\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0 and "not a regular file" in proc.stderr and "save the data to a file" in proc.stderr
    assert not (tmp_path / "l.npy").exists()


def test_init_size_a_directory_as_model_and_an_unwritable_output_are_named_rightly(tmp_path, capsys):
    # issue 53 item 14: --init-size 1 named the wrong cause (-k must be <= the number of rows (1)); a directory
    # given as the model "does not exist"; an unwritable output was reported by its temporary file's name
    X = np.random.default_rng(0).normal(size=(300, 2))
    np.save(tmp_path / "x.npy", X)
    args = ["cluster", str(tmp_path / "x.npy"), "-k", "3", "-o", str(tmp_path / "l.npy")]
    assert main([*args, "--init-size", "1"]) != 0
    err = capsys.readouterr().err
    assert "--init-size=1 rows cannot seed -k=3 clusters" in err and "number of rows (1)" not in err
    (tmp_path / "model_dir").mkdir()
    assert main(["predict", str(tmp_path / "model_dir"), str(tmp_path / "x.npy"), "-o", str(tmp_path / "p.npy")]) != 0
    assert "is a directory, not a model file" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("")  # a file where the output's folder should be: its folder cannot be written
    assert main(["cluster", str(tmp_path / "x.npy"), "-k", "3", "-o", str(blocker / "l.npy")]) != 0
    err = capsys.readouterr().err
    assert f"cannot write output '{blocker / 'l.npy'}'" in err or "does not exist" in err
    assert ".part" not in err


def test_cluster_workers_starts_its_cluster_only_after_its_arguments_are_checked(tmp_path, monkeypatch, capsys):
    """``cluster --workers N`` starts its local cluster early (LocalClusterStart, while the job's modules import),
    but only once its own arguments are checked: a usage error never starts one; a valid command connects to the
    one it started (the spy stands for it here)."""
    import kernelsketch.distributed.cluster as cl

    np.save(tmp_path / "X.npy", np.random.default_rng(0).normal(size=(50, 3)))
    started = []

    class Spy:
        def __init__(self, n, **kw):
            started.append(n)
            raise RuntimeError("the spy's cluster")

    monkeypatch.setattr(cl, "LocalClusterStart", Spy)
    common = ["cluster", str(tmp_path / "X.npy"), "-k", "2", "--workers", "2", "-q"]
    assert main([*common, "--plot", str(tmp_path / "p.png"), "-o", str(tmp_path / "a.npy")]) == 2
    assert main([*common, "--standardize", "--no-standardize", "-o", str(tmp_path / "a.npy")]) == 2
    assert started == []
    assert main([*common, "-o", str(tmp_path / "b.npy")]) != 0
    assert started == [2] and "the spy's cluster" in capsys.readouterr().err
