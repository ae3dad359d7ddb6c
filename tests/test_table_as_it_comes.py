"""A real table as it comes (issue 62): a text column, a row-id column, empty and NA cells, columns in different
units: clustered in one go, the text left out and said, missing cells imputed, dropped (-1) or refused, the same
rule applied by ``predict``, and one scaling rule for every method."""

import json
import subprocess
import sys

import numpy as np
import pytest

import kernelsketch as ks
from kernelsketch.io.delimited import ColumnWarning
from kernelsketch.utils.missing_codes import MissingCellWarning


def _cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "kernelsketch.cli", *map(str, args)], cwd=cwd, capture_output=True, text=True
    )


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """5,000 customers in three segments: id, age, income (dollars), signup (Unix time), a 0/1 flag, a country."""
    rng = np.random.default_rng(0)
    n = 5000
    g = rng.integers(0, 3, n)
    age = np.round(rng.normal(np.array([30, 45, 60])[g], 3))
    income = np.round(rng.normal(np.array([30000, 60000, 90000])[g], 4000))
    signup = (1.5e9 + rng.normal(np.array([0, 5e7, 1e8])[g], 8e6)).astype(np.int64)
    country = np.array(["France", "Chile", "Japan"])[rng.integers(0, 3, n)]
    missing_age = rng.random(n) < 0.02
    missing_income = rng.random(n) < 0.02
    folder = tmp_path_factory.mktemp("table")
    path = folder / "customers.csv"
    with open(path, "w") as f:
        f.write("customer_id,age,income,signup,country,segment\n")
        for i in range(n):
            a = "" if missing_age[i] else f"{age[i]:g}"
            inc = "NA" if missing_income[i] else f"{income[i]:g}"
            f.write(f"{i + 1},{a},{inc},{signup[i]},{country[i]},{g[i]}\n")
    return path, g, missing_age | missing_income


def test_the_table_clusters_as_it_comes_and_says_what_it_did(table):
    path, g, missing = table
    r = _cli("cluster", path.name, "-k", "3", "-o", "labels.csv", "--label-column", "segment", cwd=path.parent)
    assert r.returncode == 0, r.stderr
    assert "ColumnWarning" in r.stderr and "'country' (e.g." in r.stderr  # the text column, named
    assert "'customer_id' count up by one" in r.stderr  # the row id, named
    assert "MissingCellWarning" in r.stderr and "over every row" in r.stderr
    assert "standardized 4 columns" in r.stdout and "standard deviation is" in r.stdout
    labels = np.loadtxt(path.parent / "labels.csv", skiprows=1, dtype=np.int64)
    assert labels.shape == (g.size,) and labels.min() >= 0


def test_missing_counts_are_exact_and_in_json(table):
    path, g, _ = table
    text = path.read_text().splitlines()[1:]
    age_missing = sum(1 for ln in text if ln.split(",")[1] == "")
    income_missing = sum(1 for ln in text if ln.split(",")[2] == "NA")
    r = _cli("cluster", path.name, "-k", "3", "--label-column", "segment", "--json", cwd=path.parent)
    cells = json.loads(r.stdout)["missing_cells"]
    assert cells == {"action": "impute", "counted": "rows", "counts": {"age": age_missing, "income": income_missing}}
    assert any(w["category"] == "MissingCellWarning" for w in json.loads(r.stdout)["warnings"])


def test_drop_labels_exactly_the_rows_with_missing_cells_and_predict_repeats_it(table):
    path, _, missing = table
    folder = path.parent
    r = _cli("cluster", path.name, "-k", "3", "-o", "drop.csv", "--missing", "drop", "--save", "drop.ksm", cwd=folder)
    assert r.returncode == 0, r.stderr
    labels = np.loadtxt(folder / "drop.csv", skiprows=1, dtype=np.int64)
    assert np.array_equal(labels == -1, missing)
    r = _cli("predict", "drop.ksm", path.name, "-o", "again.csv", cwd=folder)  # (the text column is there too)
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.loadtxt(folder / "again.csv", skiprows=1, dtype=np.int64), labels)


def test_predict_imputes_as_fitted_and_ignores_the_text_column(table):
    path, _, _ = table
    folder = path.parent
    r = _cli("cluster", path.name, "-k", "3", "-o", "imp.csv", "--save", "imp.ksm", cwd=folder)
    assert r.returncode == 0, r.stderr
    r = _cli("predict", "imp.ksm", path.name, "-o", "imp2.csv", cwd=folder)
    assert r.returncode == 0, r.stderr
    a = np.loadtxt(folder / "imp.csv", skiprows=1, dtype=np.int64)
    assert np.array_equal(a, np.loadtxt(folder / "imp2.csv", skiprows=1, dtype=np.int64))


def test_missing_error_names_the_first_cell(table):
    path, _, _ = table
    r = _cli("cluster", path.name, "-k", "3", "--missing", "error", cwd=path.parent)
    assert r.returncode == 1
    assert "(a missing value: cluster --missing impute" in r.stderr and "line " in r.stderr


def test_the_library_does_the_same(table):
    path, g, missing = table
    with pytest.warns(ColumnWarning, match="country"), pytest.warns(MissingCellWarning, match="age"):
        res = ks.cluster_file(path, 3, label_column="segment", missing="drop", random_state=0)
    assert np.array_equal(res.labels == -1, missing) and res.missing_cells["dropped"] == missing.sum()
    assert res.model.predict(np.array([[1.0, np.nan, 60000.0, 1.55e9]])).shape == (1,)


def test_every_method_standardizes_under_one_rule(table):
    path, _, _ = table
    for method in ("kmeans", "kjl", "spectral"):
        r = _cli("cluster", path.name, "-k", "3", "--method", method, "--label-column", "segment", cwd=path.parent)
        assert r.returncode == 0, (method, r.stderr)
        assert "standardized 4 columns" in r.stdout and "spreads differ" in r.stdout, method
    res = ks.cluster_file(path, 3, embedding=None, label_column="segment", random_state=0)
    assert res.scaler is not None  # (raw k-means through the library: the same rule)


def test_more_landmarks_than_rows_is_said_and_a_runaway_count_refused_before_work(tmp_path, monkeypatch):
    from kernelsketch.maps import landmark_spectral

    X = np.random.default_rng(0).normal(size=(600, 2))
    with pytest.warns(UserWarning, match="n_landmarks=5,000 is more than the 600 rows"):
        ks.cluster.LandmarkSpectralClustering(2, n_landmarks=5000, random_state=0).fit(X)
    # 20,000 landmarks on 20,000 rows: refused from the estimate, before any landmark is drawn
    monkeypatch.setattr(landmark_spectral, "_available_memory", lambda: 8 * 2**30)
    called = []
    monkeypatch.setattr(
        landmark_spectral.LandmarkSpectralEmbedding, "_choose_landmarks", lambda *a, **k: called.append(1)
    )
    big = np.zeros((20000, 2))
    with pytest.raises(ValueError, match=r"20,000 landmarks need about 18.6 GiB .* use fewer landmarks"):
        ks.cluster_file(big, 3, embedding=ks.LandmarkSpectralEmbedding(n_components=3, n_landmarks=50000))
    assert not called


def test_threads_one_runs_on_one_core_and_n_jobs_is_taken():
    from threadpoolctl import threadpool_info

    from kernelsketch.utils.threads import blas_num_threads, resolve_n_jobs, thread_limit

    with thread_limit(1):
        assert blas_num_threads() == 1
        assert all(p["num_threads"] == 1 for p in threadpool_info() if p["user_api"] == "blas")
    assert resolve_n_jobs(-1) == resolve_n_jobs(None) >= 1 and resolve_n_jobs(10**6) == resolve_n_jobs(None)
    with pytest.raises(ValueError, match="n_jobs=0"):
        resolve_n_jobs(0)
    X = np.random.default_rng(0).normal(size=(2000, 3))
    a = ks.cluster.LandmarkSpectralClustering(3, n_jobs=1, random_state=0).fit(X).labels_
    b = ks.cluster.LandmarkSpectralClustering(3, n_jobs=-1, random_state=0).fit(X).labels_
    assert np.array_equal(a, b)
    assert np.array_equal(ks.cluster_file(X, 3, n_jobs=1, random_state=0).labels, a)


def test_the_threads_flag_limits_the_process(tmp_path):
    import resource
    import time

    path = tmp_path / "b.csv"
    X = np.random.default_rng(0).normal(size=(60000, 8)).astype(np.float32)
    np.savetxt(path, X, delimiter=",", header=",".join(f"c{j}" for j in range(8)), comments="", fmt="%.5g")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = _cli("cluster", path.name, "-k", "5", "--threads", "1", "-q", cwd=tmp_path)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert r.returncode == 0, r.stderr
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu <= 1.15 * wall + 0.2, (cpu, wall)  # one core: never more CPU seconds than wall seconds
    assert _cli("cluster", path.name, "-k", "5", "--threads", "0", cwd=tmp_path).returncode == 2


def test_a_fit_on_a_frame_with_a_label_column_is_refused():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.random(200), "b": rng.random(200), "label": np.arange(200) % 2})
    with pytest.raises(ValueError, match="'label' looks like the class labels"):
        ks.cluster.LandmarkSpectralClustering(2, random_state=0).fit(df)
    ks.cluster.LandmarkSpectralClustering(2, random_state=0).fit(df.drop(columns="label"))  # the features alone


def test_a_clusters_flag_out_of_range_names_the_flag_not_the_function(tmp_path):
    path = tmp_path / "x.csv"
    np.savetxt(path, np.random.default_rng(0).normal(size=(50, 2)), delimiter=",", header="a,b", comments="")
    r = _cli("cluster", path.name, "-k", "1", cwd=tmp_path)
    assert r.returncode == 2 and "'-k' must be an int in the range [2, inf)" in r.stderr
    assert "cluster_file" not in r.stderr


def test_plots_draw_the_bulk_and_give_cluster_sizes(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from kernelsketch.cli.plotting import _bulk_limits, _same_unit

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=1000), rng.normal(size=1000)
    x[0] = 1e6  # one far point
    fig, ax = plt.subplots()
    assert _bulk_limits(ax, x, y) == 1 and ax.get_xlim()[1] < 10
    assert _bulk_limits(ax, x[1:], y[1:]) == 0  # nothing far: the limits are matplotlib's
    assert _same_unit(x[1:], y[1:], ("column lon", "column lat"))
    assert not _same_unit(x[1:], 1e4 * y[1:], ("column age", "column income"))
    plt.close(fig)


def test_help_imports_neither_scikit_learn_nor_the_kernels():
    from kernelsketch.kernels.kernel_functions import KERNELS
    from kernelsketch.kernels.names import KERNEL_NAMES

    assert sorted(KERNEL_NAMES) == sorted(KERNELS)  # the light list of names is the registry's
    code = (
        "import sys\n"
        "from kernelsketch.cli.main import main\n"
        "try:\n"
        "    main(['cluster', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = [m for m in ('sklearn', 'kernelsketch.kernels.kernel_functions', 'numba') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out, out[-300:]


def test_drop_follows_the_rows_through_a_streamed_assignment(table):
    # k-means' sample smaller than the file: the labels stream block by block, the missing rows read beside them
    path, _, missing = table
    res = ks.cluster_file(path, 3, missing="drop", init_size=500, block_rows=700, label_column="segment")
    assert res.sample_rows == 500 and np.array_equal(res.labels == -1, missing)
    assert res.cluster_sizes.sum() == (~missing).sum()  # (the dropped rows are in no cluster's count)


@pytest.mark.parametrize("after", [1.5, 4.0])
def test_sigterm_ends_a_run_within_two_seconds_with_143_and_no_output(tmp_path, after):
    import signal
    import time

    X = np.random.default_rng(0).normal(size=(1_500_000, 4)).astype(np.float32)  # (a run of ~10 s here)
    np.save(tmp_path / "x.npy", X)
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kernelsketch.cli",
            "cluster",
            "x.npy",
            "-k",
            "5",
            "-o",
            "labels.npy",
            "--lloyd-passes",
            "20",
            "-q",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(after)  # (the imports, or the passes)
    if p.poll() is not None:
        pytest.skip("the run finished before the signal")
    t0 = time.perf_counter()
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    assert time.perf_counter() - t0 < 2.0 and p.returncode == 143, (p.returncode, err[-300:])
    assert not (tmp_path / "labels.npy").exists() and not list(tmp_path.glob("*.part*"))


def test_a_small_text_file_is_opened_at_most_three_times_per_run(tmp_path, monkeypatch):
    # issue 64: a 20,000-row CSV was opened 6 times in one `cluster` run; a small file is parsed once now
    from kernelsketch.io import delimited

    X = np.random.default_rng(0).normal(size=(20000, 3))
    path = tmp_path / "x.csv"
    np.savetxt(path, X, delimiter=",", header="a,b,c", comments="", fmt="%.6g")
    opened = []
    real = delimited._open_text
    monkeypatch.setattr(delimited, "_open_text", lambda p: opened.append(p) or real(p))
    monkeypatch.setattr(delimited, "USE_PYARROW", False)  # (pyarrow opens the file by its own path)
    res = ks.cluster_file(path, 3, random_state=0)
    assert len(opened) <= 3, opened
    again = ks.cluster_file(np.loadtxt(path, delimiter=",", skiprows=1), 3, random_state=0)  # (the rows as written)
    assert np.array_equal(res.labels, again.labels)


def test_a_sigterm_dropped_in_a_c_callback_is_sent_again_until_the_command_line_catches_it(tmp_path):
    """A signal's exception raised in a C library's callback into Python (numba compiling: llvmlite's object cache) is
    printed and dropped at the callback's edge; the command line sends the signal again until it has caught it, so
    the run still ends with 143, without the dropped exception's report."""
    import textwrap

    script = textwrap.dedent("""
        import ctypes, os, signal, sys, threading, time
        from kernelsketch.cli import main as cli

        def run(args, ui):  # the command: a C callback that the signal interrupts, then plain Python
            callback = ctypes.CFUNCTYPE(None)(lambda: time.sleep(0.5))
            threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGTERM)).start()
            callback()  # (the first _Terminated is raised in here, and dropped by ctypes)
            print("past the callback", file=sys.stderr, flush=True)
            time.sleep(5)
            return 0

        cli._dispatch = run
        sys.exit(cli.main(["cluster", "x.npy", "-k", "2", "-o", "labels.npy"]))
    """)
    p = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert p.returncode == 143, p.stderr[-500:]
    assert "past the callback" in p.stderr and "interrupted; no output was written" in p.stderr
    assert "Exception ignored" not in p.stderr and "Traceback" not in p.stderr


def test_a_terminating_signal_is_sent_again_only_once_its_exception_was_dropped(monkeypatch):
    """The signal is delivered again only after its exception was dropped at a C callback's edge (reported to the
    unraisable hook); while it unwinds normally (a Dask cluster's close, temporary files removed) it is left alone:
    a second delivery inside a cluster's close left it half closed, and the exit waited 10 s for it."""
    import signal
    import threading
    import time
    import types

    from kernelsketch.cli import main as cli_main

    got = []
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: got.append(signum))
    monkeypatch.setattr(cli_main, "_AGAIN_AFTER", 0.05)
    monkeypatch.setattr(cli_main, "_UNWINDING", {"signum": signal.SIGUSR1, "caught": False})
    run = cli_main._UNWINDING
    try:
        again = threading.Thread(target=cli_main._deliver_again, args=(run, signal.SIGUSR1), daemon=True)
        again.start()
        time.sleep(0.4)
        assert got == []  # unwinding as it should: not sent again
        reported = []
        hook = cli_main._unraisable(reported.append)
        hook(types.SimpleNamespace(exc_value=cli_main._Terminated(signal.SIGUSR1)))  # dropped at a callback's edge
        assert reported == [] and run["dropped"]
        deadline = time.monotonic() + 5
        while not got and time.monotonic() < deadline:
            time.sleep(0.01)
        assert got == [signal.SIGUSR1] and "dropped" not in run  # sent again, once
        hook(types.SimpleNamespace(exc_value=ValueError("other")))
        assert len(reported) == 1  # anything else is reported as before
        run["caught"] = True
        again.join(2)
        assert not again.is_alive()
    finally:
        run["caught"] = True  # (the thread stops sending)
        time.sleep(0.1)
        signal.signal(signal.SIGUSR1, previous)
