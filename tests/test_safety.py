"""Nothing lost: an input is never an output, outputs commit atomically and keep what they replace.

Each test runs the command line as a user would (``main([...])`` or a real subprocess for SIGINT)
and fails on the behaviour reported in the reliability issue (#27, items 1-6).
"""

import os
import signal
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

import kernelsketch as ks
from kernelsketch.cli.main import main
from kernelsketch.io.atomic import AtomicPath, SameFileError

from .subprocesses import INTERRUPTIBLE

posix = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes, links and signals")


@pytest.fixture
def shards(tmp_path):
    folder = tmp_path / "S"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for i in range(2):
        np.save(folder / f"part-{i}.npy", rng.normal(size=(300, 3)) + 4 * i)
    return folder


def _bytes(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("command", ["cluster", "embed"])
def test_an_output_is_never_an_input_shard_even_with_force(shards, command, capsys):
    before = _bytes(shards)
    args = ["-k", "2"] if command == "cluster" else ["--method", "kjl", "-d", "4"]
    rc = main([command, str(shards), *args, "-o", str(shards / "part-0.npy"), "--force", "--quiet"])
    assert rc == 2
    assert "input directory" in capsys.readouterr().err
    assert _bytes(shards) == before


def test_an_output_inside_an_input_directory_is_refused(shards, capsys):
    before = _bytes(shards)
    assert main(["embed", str(shards), "--method", "kjl", "-d", "4", "-o", str(shards / "emb.npy"), "--quiet"]) == 2
    assert _bytes(shards) == before  # the next run would have read emb.npy as a third shard


def test_library_drivers_protect_the_shards_of_an_engine(shards):
    from kernelsketch.distributed.engine import DaskEngine

    pytest.importorskip("dask.array")
    engine = DaskEngine.open(shards)
    with pytest.raises(SameFileError, match="input directory"):
        ks.cluster_file(engine, 2, output=shards / "part-1.npy", force=True)
    local = ks.out_of_core.open_engine(shards / "part-0.npy")
    with pytest.raises(SameFileError, match="input file"):
        ks.cluster_file(local, 2, output=shards / "part-0.npy", force=True)


def test_the_shard_reader_skips_hidden_files(shards):
    from kernelsketch.distributed.shards import read_shards

    pytest.importorskip("dask.array")
    np.save(shards / ".leftover.npy", np.zeros((50, 3)))
    X = read_shards(shards)
    assert X.shape == (600, 3)


@posix
def test_force_keeps_the_mode_of_the_replaced_file(tmp_path):
    X = np.random.default_rng(0).normal(size=(200, 3))
    np.save(tmp_path / "X.npy", X)
    out = tmp_path / "labels.npy"
    np.save(out, np.zeros(3))
    os.chmod(out, 0o600)
    assert main(["cluster", str(tmp_path / "X.npy"), "-k", "2", "-o", str(out), "--force", "--quiet"]) == 0
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    assert np.load(out).shape[0] == 200


@posix
def test_force_onto_a_symlink_writes_through_to_its_target(tmp_path):
    X = np.random.default_rng(0).normal(size=(200, 3))
    np.save(tmp_path / "X.npy", X)
    target = tmp_path / "real.npy"
    np.save(target, np.zeros(3))
    link = tmp_path / "link.npy"
    link.symlink_to(target)
    assert main(["cluster", str(tmp_path / "X.npy"), "-k", "2", "-o", str(link), "--force", "--quiet"]) == 0
    assert link.is_symlink()
    assert np.load(target).shape[0] == 200
    # a link to the input is the input
    bad = tmp_path / "to-input.npy"
    bad.symlink_to(tmp_path / "X.npy")
    assert main(["cluster", str(tmp_path / "X.npy"), "-k", "2", "-o", str(bad), "--force", "--quiet"]) == 2
    np.testing.assert_array_equal(np.load(tmp_path / "X.npy"), X)


@posix
def test_stale_parts_of_a_killed_run_are_removed_by_the_next_run(tmp_path):
    out = tmp_path / "emb.npy"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".emb.npy.{int(dead.stdout)}.x1y2.part"
    stale.write_bytes(b"half written")
    alive = tmp_path / f".emb.npy.{os.getppid()}.a1b2.part"  # a process still running: its part stays
    alive.write_bytes(b"in progress")
    other = tmp_path / f".other.npy.{int(dead.stdout)}.zz.part"  # another output's part is not ours to judge
    other.write_bytes(b"x")
    with pytest.warns(UserWarning, match="partial file"):
        with AtomicPath(out) as tmp, open(tmp, "wb") as fh:
            np.save(fh, np.ones(2))
    assert not stale.exists()
    assert alive.exists() and other.exists()
    np.testing.assert_array_equal(np.load(out), np.ones(2))


def test_reproduce_and_diagnose_refuse_existing_outputs_before_any_work(tmp_path, capsys):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "table.csv").write_text("earlier results\n")
    t0 = time.perf_counter()
    assert main(["reproduce", "kjl-table2", "-o", str(folder), "--quick", "--quiet"]) == 2
    assert "already holds files" in capsys.readouterr().err
    assert (folder / "table.csv").read_text() == "earlier results\n"
    a_file = tmp_path / "a-file"
    a_file.write_text("keep")
    assert main(["reproduce", "kjl-table2", "-o", str(a_file), "--quick", "--quiet"]) == 2
    assert "is a file" in capsys.readouterr().err
    X = np.random.default_rng(0).normal(size=(300, 3))
    np.save(tmp_path / "X.npy", X)
    assert main(["diagnose", str(tmp_path / "X.npy"), "-o", str(a_file), "--quiet"]) == 2
    assert "is a file" in capsys.readouterr().err
    assert a_file.read_text() == "keep"
    assert time.perf_counter() - t0 < 60  # refused up front (a generous bound: nothing was computed)


@posix
@pytest.mark.slow
def test_sigint_during_embed_keeps_the_previous_model(tmp_path):
    src = tmp_path / "big.csv"
    np.savetxt(src, np.random.default_rng(0).normal(size=(400_000, 6)), delimiter=",", fmt="%.6f")
    model = tmp_path / "model.ksm"
    ks.save(ks.RandomFourierFeatures(n_random_features=8, bandwidth=1.0, random_state=0).fit(np.zeros((2, 6))), model)
    before = model.read_bytes()
    out = tmp_path / "emb.npy"
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "kernelsketch.cli", "embed", str(src), "-o", str(out), "--method", "rff", "-d", "64",
           "--bandwidth", "1.0", "--save", str(model), "--force", "--quiet"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, **INTERRUPTIBLE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if any(p.name.startswith(".emb.npy.") for p in tmp_path.iterdir()):
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the embed finished before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "no output was written" in err.decode()
    assert model.read_bytes() == before
    assert not out.exists()
