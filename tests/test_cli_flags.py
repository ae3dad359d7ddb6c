"""#54 items 5 and 6: the flags scikit-learn users guess, quiet that is quiet, files named as UCI names them."""

import gzip

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from kernelsketch.cli.main import main


@pytest.fixture
def blobs(tmp_path):
    X, y = make_blobs(600, n_features=3, centers=3, random_state=0)
    np.save(tmp_path / "x.npy", X)
    return tmp_path, X, y


def test_n_clusters_and_random_state_are_aliases(blobs, capsys):
    folder, _, _ = blobs
    assert main(["cluster", str(folder / "x.npy"), "-k", "3", "--seed", "4", "-o", str(folder / "a.npy"), "-q"]) == 0
    assert (
        main(
            [
                "cluster",
                str(folder / "x.npy"),
                "--n-clusters",
                "3",
                "--random-state",
                "4",
                "-o",
                str(folder / "b.npy"),
                "-q",
            ]
        )
        == 0
    )
    np.testing.assert_array_equal(np.load(folder / "a.npy"), np.load(folder / "b.npy"))
    capsys.readouterr()
    assert main(["diagnose", "--help"]) == 0
    assert "--n-clusters" in capsys.readouterr().out
    assert main(["cluster", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--n-clusters" in help_text and "--random-state" in help_text
    assert "landmarks (spectral, kjl" in help_text  # -n applies to the default method too


def test_quiet_silences_warnings(blobs):
    import subprocess
    import sys

    folder, X, _ = blobs
    X = X.copy()
    X[::10, 0] = -999.0  # a missing-value code: a warning without -q
    np.save(folder / "coded.npy", X)

    def run(*extra):
        cmd = [sys.executable, "-m", "kernelsketch.cli", "cluster", str(folder / "coded.npy"), "-k", "3", *extra]
        return subprocess.run(cmd, capture_output=True, text=True, check=True)

    assert "MissingValueCodeWarning" in run("-o", str(folder / "l.npy")).stderr
    quiet = run("-o", str(folder / "m.npy"), "-q")
    assert quiet.stderr == "" and quiet.stdout == ""


def test_a_data_gz_of_numbers_is_read_and_an_unknown_suffix_names_format(tmp_path, capsys):
    X, _ = make_blobs(300, n_features=4, centers=2, random_state=1)
    with gzip.open(tmp_path / "set.data.gz", "wt") as fh:  # whitespace-separated, as the UCI sets ship
        for row in X:
            fh.write("  ".join(f"{v:.6f}" for v in row) + "\n")
    assert main(["cluster", str(tmp_path / "set.data.gz"), "-k", "2", "-o", str(tmp_path / "l.npy")]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "4 features" in first and first.count(str(tmp_path / "set.data.gz")) == 1  # the path once
    (tmp_path / "set.weird").write_text("1 2\n3 4\n")
    assert main(["cluster", str(tmp_path / "set.weird"), "-k", "2", "-o", str(tmp_path / "w.npy")]) != 0
    assert "--format" in capsys.readouterr().err


def test_the_first_run_says_the_kernels_compile_once(blobs, tmp_path, monkeypatch):
    """#54 item 7: a first run (empty numba cache) says why it is slow; the next run does not."""
    import subprocess
    import sys

    pytest.importorskip("numba")
    folder, _, _ = blobs
    X, _ = make_blobs(30_000, n_features=3, centers=3, random_state=0)  # (enough rows for the compiled search)
    np.save(folder / "x.npy", X)
    env = {**__import__("os").environ, "KERNELSKETCH_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("NUMBA_CACHE_DIR", None)
    cmd = [sys.executable, "-m", "kernelsketch.cli", "cluster", str(folder / "x.npy"), "-k", "3"]
    first = subprocess.run([*cmd, "-o", str(folder / "1.npy")], capture_output=True, text=True, env=env, check=True)
    assert "compiling the numba kernels (once" in first.stdout
    again = subprocess.run([*cmd, "-o", str(folder / "2.npy")], capture_output=True, text=True, env=env, check=True)
    assert "compiling" not in again.stdout


def test_a_command_run_in_process_removes_its_first_compile_listener(blobs):
    from kernelsketch.utils import numba_cache

    folder, _, _ = blobs
    before = list(numba_cache._FIRST_COMPILE_LISTENERS)
    assert main(["cluster", str(folder / "x.npy"), "-k", "3", "-o", str(folder / "l.npy"), "-q"]) == 0
    assert numba_cache._FIRST_COMPILE_LISTENERS == before  # (a stale command's printer is never called later)
