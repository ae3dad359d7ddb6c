"""Ctrl-C (SIGINT) in the middle of a real `kernelsketch embed` subprocess.

The run must leave no output file and no temporary file; with --force over
an existing output, the previous output must survive untouched.
"""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from .subprocesses import INTERRUPTIBLE

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGINT semantics are POSIX")


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory):
    # ~25 MB of text: parsing + embedding takes several seconds, long enough to interrupt
    path = tmp_path_factory.mktemp("big") / "big.csv"
    X = np.random.default_rng(0).normal(size=(400_000, 6))
    np.savetxt(path, X, delimiter=",", fmt="%.6f")
    return path


def _interrupt_embed(src, out, extra=()):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kernelsketch.cli",
            "embed",
            str(src),
            "-o",
            str(out),
            "--method",
            "rff",
            "-d",
            "64",
            "--bandwidth",
            "1.0",
            "--seed",
            "0",
            "--quiet",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        **INTERRUPTIBLE,
    )
    # wait until the temporary output exists: the run is mid-write
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if any(p.name.endswith(".part") for p in out.parent.iterdir()):
            break
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the embed finished before it could be interrupted; make the input larger"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err.decode()


@pytest.mark.slow
def test_sigint_leaves_no_partial_output(tmp_path, big_csv):
    out = tmp_path / "emb.npy"
    code, err = _interrupt_embed(big_csv, out)
    assert code == 130, err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "partial or temporary files left behind"


@pytest.mark.slow
def test_sigint_with_force_keeps_previous_output(tmp_path, big_csv):
    out = tmp_path / "emb.npy"
    previous = np.arange(6.0).reshape(2, 3)
    np.save(out, previous)
    before = out.read_bytes()
    code, err = _interrupt_embed(big_csv, out, extra=("--force",))
    assert code == 130, err
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emb.npy"]


def test_ctrl_c_while_the_command_line_imports_is_one_line_and_130(monkeypatch, capsys):
    # issue 53 item 10: a Ctrl-C in the first second (the imports) printed a 10-25-frame traceback
    from kernelsketch.cli import console

    class Interrupting:  # the command line's module, interrupted while it loads
        def __getattr__(self, name):
            raise KeyboardInterrupt

    monkeypatch.setitem(sys.modules, "kernelsketch.cli.main", Interrupting())
    assert console.main() == 130
    err = capsys.readouterr().err
    assert err.strip() == console.INTERRUPTED and "Traceback" not in err


def test_the_console_script_runs_the_command_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "kernelsketch.cli.console", "--version"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and "kernelsketch" in proc.stdout


def test_a_ctrl_c_while_the_output_is_being_opened_leaves_no_temporary_file(tmp_path, monkeypatch):
    """Interrupted between the writer's temporary file being made and the sink holding the writer, the sink's abort
    still removes that file (this process's ``.part`` of the output), and leaves other processes' alone."""
    from kernelsketch.out_of_core import sinks

    real = sinks.open_writer

    def opened_then_interrupted(*args, **kwargs):
        real(*args, **kwargs)  # (the .part exists; its writer never reaches the sink)
        raise KeyboardInterrupt

    monkeypatch.setattr(sinks, "open_writer", opened_then_interrupted)
    other = tmp_path / f".labels.npy.{os.getppid()}.abc.part"  # (a live process's part: not this one's to remove)
    other.write_bytes(b"")
    sink = sinks._FileSink(tmp_path / "labels.npy", force=False, protect=())
    with pytest.raises(KeyboardInterrupt):
        sink.write(np.zeros(3, dtype=np.int64))
    assert any(p.name.startswith(f".labels.npy.{os.getpid()}.") for p in tmp_path.iterdir())
    sink.abort()
    assert sorted(p.name for p in tmp_path.iterdir()) == [other.name]
