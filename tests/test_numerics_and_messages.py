"""Numerics, hangs and messages of the reliability issue (#27, items 18-21)."""

import os
import socket
import threading
import warnings

import numpy as np
import pytest

import kernelsketch as ks
from kernelsketch.cli.main import main
from kernelsketch.utils.eigen import canonical_eigenvectors


def test_kernel_pca_signs_agree_across_solvers_on_mirror_symmetric_data():
    x = np.linspace(-2, 2, 101)
    X = np.c_[x, x**2]  # mirror-symmetric: odd eigenvectors have entries +-equal in exact arithmetic
    dense = ks.KernelPCA(n_components=5, eigen_solver="dense").fit(X)
    arpack = ks.KernelPCA(n_components=5, eigen_solver="arpack", random_state=0).fit(X)
    np.testing.assert_allclose(dense.eigenvalues_, arpack.eigenvalues_, rtol=1e-8)
    np.testing.assert_allclose(dense.transform(X), arpack.transform(X), atol=1e-8)


def test_the_sign_rule_ignores_rounding_between_mirror_entries():
    v = np.array([0.1, -0.5, 0.3, 0.5, -0.1])
    v /= np.linalg.norm(v)
    w = np.array([1.0])
    for eps in (0.0, 1e-14, -1e-14):  # which of the two 0.5s is "largest" is rounding's choice
        u = v.copy()
        u[3] += eps
        out = canonical_eigenvectors(w, (-u)[:, None].copy())[:, 0]
        assert out[1] > 0  # the first of the tied entries is made positive, whatever rounding did


def test_a_truncated_npy_is_refused_not_a_crash(tmp_path):
    path = tmp_path / "x.npy"
    X = np.random.default_rng(0).normal(size=(20000, 10))
    np.save(path, X)
    src = ks.io.open_matrix(path)
    offset = src._arr.offset
    os.truncate(path, offset + 15600 * 80 + 40)  # the map was opened on the whole file
    with pytest.raises(ValueError, match="truncated at row index 15600"):
        src.take([5, 19000])  # a mapped read past the end: SIGBUS before the size check
    with pytest.raises(ValueError, match="truncated at row index 15600"):
        src.read_range(15000, 16000)
    with pytest.raises(ValueError, match="truncated at row index 15600"):
        for _ in src.iter_blocks(1000):
            pass
    np.testing.assert_array_equal(src.take([5, 100])[0], X[[5, 100]])  # the rows still there are read


def _tcp_server(handle):
    """A loopback TCP server that runs ``handle(conn)`` for each connection; yields its port, stops afterwards."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    stop = threading.Event()

    def serve():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            try:
                handle(conn)
            except OSError:
                pass
            finally:
                conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join()
    srv.close()


@pytest.fixture
def http_port():
    """A TCP server that answers like a web server: waits for a request, then replies in text."""

    def handle(conn):
        conn.settimeout(5)
        conn.recv(65536)
        conn.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n")

    yield from _tcp_server(handle)


def test_a_scheduler_address_that_is_not_dask_is_refused_quickly(http_port, tmp_path, capsys):
    pytest.importorskip("distributed")
    from kernelsketch.distributed.cluster import connect

    with pytest.raises(ConnectionError, match="did not answer as a Dask scheduler"):
        with connect(f"tcp://127.0.0.1:{http_port}", connect_timeout=1.0):
            pass
    np.save(tmp_path / "x.npy", np.zeros((10, 2)))
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()  # nothing listens there now
    argv = ["cluster", str(tmp_path / "x.npy"), "-k", "2", "--scheduler", f"tcp://127.0.0.1:{port}", "-o"]
    assert main([*argv, str(tmp_path / "l.npy")]) != 0
    assert "cannot connect to the Dask scheduler" in capsys.readouterr().err
    assert not (tmp_path / "l.npy").exists()


@pytest.fixture
def fake_scheduler_port():
    """A TCP server whose reply starts like a Dask handshake (a small length) and then is not one."""
    import struct

    def handle(conn):
        conn.sendall(struct.pack("<Q", 3) + struct.pack("<QQQ", 2**62, 5, 5) + b"\xff" * 64)
        conn.settimeout(2)
        conn.recv(65536)

    yield from _tcp_server(handle)


def test_a_server_that_answers_like_a_scheduler_but_is_not_one_is_named(fake_scheduler_port, tmp_path, capsys):
    # its first 8 bytes pass the probe; the handshake after them used to escape as struct's own error
    pytest.importorskip("distributed")
    np.save(tmp_path / "x.npy", np.zeros((10, 2)))
    argv = ["cluster", str(tmp_path / "x.npy"), "-k", "2", "--scheduler", f"tcp://127.0.0.1:{fake_scheduler_port}"]
    assert main([*argv, "-o", str(tmp_path / "l.npy")]) != 0
    err = capsys.readouterr().err
    assert "is not a Dask scheduler" in err and "could not be read as a Dask handshake" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "l.npy").exists()


@pytest.mark.slow
def test_worker_errors_print_one_message_under_quiet(tmp_path):
    import subprocess
    import sys

    pytest.importorskip("distributed")
    folder = tmp_path / "S"
    folder.mkdir()
    X = np.random.default_rng(0).normal(size=(400, 3))
    np.save(folder / "part-0.npy", X)
    X[50, 1] = np.nan
    np.save(folder / "part-1.npy", X)
    cmd = [sys.executable, "-m", "kernelsketch.cli", "cluster", str(folder), "-k", "2", "--workers", "2", "-q"]
    proc = subprocess.run([*cmd, "-o", str(tmp_path / "l.npy")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    assert "row index 50, column 2: value nan is not finite" in proc.stderr
    assert "Traceback" not in proc.stderr and "Compute Failed" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_rff_takes_its_feature_count_from_n_as_the_help_says(tmp_path, capsys):
    X = np.random.default_rng(0).normal(size=(100, 3))
    np.save(tmp_path / "x.npy", X)
    assert main(["embed", str(tmp_path / "x.npy"), "--method", "rff", "-n", "40", "-o", str(tmp_path / "z.npy")]) == 0
    assert np.load(tmp_path / "z.npy").shape == (100, 40)
    argv = ["embed", str(tmp_path / "x.npy"), "--method", "rff", "-n", "40", "-d", "30", "-o", str(tmp_path / "w.npy")]
    assert main(argv) == 2
    assert "give one" in capsys.readouterr().err


def test_streaming_kpca_rank_warning_names_the_callers_line():
    X = np.random.default_rng(0).normal(size=(500, 5))
    est = ks.StreamingKPCA(n_components=20, sketch_size=20, n_random_features=100, random_state=0).fit(X)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.transform(X)
    (w,) = [w for w in caught if "has rank" in str(w.message)]
    assert w.filename == __file__


def test_nystroem_warning_names_the_callers_line_not_scikit_learns():
    X = np.random.default_rng(0).normal(size=(300, 8))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ks.Nystroem(n_landmarks=200, n_components=2, random_state=0).fit(X)
    (w,) = [w for w in caught if issubclass(w.category, ks.ApproximationWarning)]
    assert w.filename == __file__


def test_streaming_kpca_n_components_none_is_what_the_docs_say():
    X = np.random.default_rng(0).normal(size=(500, 5))
    sketch = ks.StreamingKPCA(sketch_size=20, n_random_features=100, random_state=0).fit(X)
    last = ks.StreamingKPCA(sketch_size=20, n_random_features=100, random_state=0, basis="last_full_buffer").fit(X)
    # a shrunk Frequent Directions sketch has sketch_size - 1 nonzero rows; the last full buffer all of them
    assert sketch.n_components_ == sketch.transform(X).shape[1] == 19
    assert last.n_components_ == last.transform(X).shape[1] == 20
    assert "sketch_size - 1" in ks.StreamingKPCA.__doc__


@pytest.mark.distributed
def test_a_worker_killed_for_memory_is_a_memory_error_naming_the_step_and_the_limit(tmp_path, capsys, monkeypatch):
    pytest.importorskip("distributed")
    import dask
    from distributed.scheduler import KilledWorker

    import kernelsketch as ks
    from kernelsketch.distributed import connect
    from kernelsketch.distributed.engine import DaskEngine

    np.save(tmp_path / "x.npy", np.random.default_rng(0).normal(size=(4000, 3)))

    def killed(*args, **kwargs):  # what dask raises after the nanny restarted a worker over its limit
        raise KilledWorker("('sum-chunk', 0)", "tcp://127.0.0.1:1", 3)

    with connect(n_workers=1, memory_limit="300MB") as client:
        engine = DaskEngine.open(tmp_path / "x.npy", client=client, chunk_rows=1000)
        monkeypatch.setattr(dask, "compute", killed)
        monkeypatch.setattr(client, "compute", killed)  # (the ordered passes submit through the client)
        with pytest.raises(MemoryError, match=r"died during 'check missing-value codes|'gather'|286 MiB per worker"):
            ks.cluster_file(engine, 2)
        with pytest.raises(MemoryError, match=r"during 'statistics' \(286 MiB per worker, chunks of 0 MiB\)"):
            engine.reduce(lambda X, _: X.sum(), sum, desc="statistics")
    monkeypatch.undo()
    assert main(["cluster", str(tmp_path / "x.npy"), "-k", "2", "--worker-memory", "1GB"]) == 2
    assert "--worker-memory sets the memory of --workers" in capsys.readouterr().err
