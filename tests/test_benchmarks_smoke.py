"""Smoke test of the benchmark suite: every case in quick mode, in process.

Checks the report's shape (the expected rows, finite positive ratios,
"not available" for a missing estimator) and the harness's measuring
machinery; never asserts a time.
"""

import math
import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:  # benchmarks/ lives at the repository root, outside src/
    sys.path.insert(0, ROOT)

from benchmarks import _harness  # noqa: E402
from benchmarks._harness import CaseResult, Comparison, Metric, NotAvailable, RunConfig  # noqa: E402
from benchmarks.run import CASES, case_module, main, run_case  # noqa: E402


def _quiet_config(**kw):
    # per-call memory probes are exercised by test_peak_extra_memory_sees_a_numpy_buffer
    return RunConfig(quick=True, repeats=1, measure_memory=False, log=lambda msg: None, **kw)


@pytest.mark.parametrize("name", list(CASES))
def test_case_quick_report(name, tmp_path):
    plots = str(tmp_path) if name == "scaling" else None
    res = run_case(name, _quiet_config(plots_dir=plots))
    md = _harness.render_case(res)
    assert md.startswith(f"## {case_module(name).TITLE}")
    if not res.available:
        # an estimator (or the CLI) that has not landed yet is reported, not fatal
        assert "not available" in md
        return
    labels = [c.label for c in res.comparisons] + [m.label for m in res.metrics]
    for row in case_module(name).expected_rows(True):
        assert row in labels, f"{name}: missing row {row!r}"
        assert f"| {_harness.cell(row)} |" in md
    for c in res.comparisons:
        if c.available:
            assert c.ours_s > 0 and c.ref_s > 0
            assert math.isfinite(c.speedup) and c.speedup > 0
            assert f"{c.speedup:.2f}x" in md
        else:
            assert "not available" in md
    for m in res.metrics:
        if m.value is not None:
            assert math.isfinite(m.value), (m.label, m.value)
    if name == "scaling":
        for axis in ("N", "n", "d", "threads"):
            assert (tmp_path / f"scaling_{axis}.png").stat().st_size > 0
        assert "scaling_N.png" in (tmp_path / "scaling.md").read_text()


def test_time_interleaved_alternates_and_takes_the_median():
    calls = []
    fns = {"ours": lambda: calls.append("ours"), "ref": lambda: calls.append("ref")}
    t = _harness.time_interleaved(fns, repeats=5, warmup=1)
    assert calls == ["ours", "ref"] * 6
    assert all(len(t[k].times) == 5 for k in fns)
    assert t["ours"].median == sorted(t["ours"].times)[2]
    with pytest.raises(ValueError):
        _harness.time_interleaved(fns, repeats=0)


def test_peak_extra_memory_sees_a_numpy_buffer():
    # 100 MiB of touched float64 pages: tracemalloc cannot see them, the RSS peak must
    mb = _harness.peak_extra_mb(lambda: np.ones(100 * 2**20 // 8))
    if mb is None:
        pytest.skip("/proc/self/clear_refs not writable here")
    assert 90 <= mb <= 250
    assert _harness.peak_extra_mb(lambda: None) < 50


def test_speedup_and_targets():
    c = Comparison("x", "a", "b", ours_s=0.5, ref_s=2.0, target=3.0)
    assert c.speedup == 4.0 and c.met is True
    floor = Comparison("x", "a", "b", ours_s=1.4, ref_s=1.0, target=1 / 1.3)
    assert floor.met is False  # 1.4x slower than the floor is not "within 1.3x"
    missing = Comparison("x", "a", "b", ours_s=None, ref_s=1.0, target=1.0)
    assert missing.speedup is None and missing.met is None
    assert Metric("rss", 100.0, "MiB", 1430.0).met is True
    assert Metric("rate", 10.0, "rows/s", 20.0, ">=").met is False
    res = CaseResult("n", "t", comparisons=[c], metrics=[Metric("m", 1.0)])
    assert CaseResult.from_dict(res.to_dict()) == res


def test_missing_estimator_reads_not_available(monkeypatch):
    mod = case_module("kpca")

    def boom(cfg):
        raise NotAvailable("kernelsketch.maps.Nowhere not available")

    monkeypatch.setattr(mod, "run", boom)
    res = run_case("kpca", _quiet_config())
    assert not res.available
    assert "not available" in _harness.render_case(res)
    with pytest.raises(NotAvailable):
        _harness.require("kernelsketch.maps", "NoSuchEstimator")


def test_main_writes_report_with_machine_description(tmp_path, capsys):
    out = tmp_path / "report.md"
    assert (
        main(["--quick", "--case", "kpca", "--in-process", "--repeats", "1", "--no-memory", "--output", str(out)]) == 0
    )
    text = out.read_text()
    assert "CPU:" in text and "threadpools (threadpoolctl)" in text and "scikit-learn" in text
    assert "OPENBLAS_CORETYPE" in text and "architecture" in text
    assert "## Summary of targets" in text and "exact KernelPCA fit (arpack)" in text


def test_fresh_process_benchmarks_byte_compile_the_package_and_say_so(tmp_path, monkeypatch):
    """Fresh processes of ours must load byte-code as an installed wheel's do (pip compiles a wheel; with
    PYTHONDONTWRITEBYTECODE an editable install has none): every module gets a current .pyc, and the header says so."""
    import importlib.util

    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    sources = [package / "__init__.py", package / "sub" / "__init__.py", package / "sub" / "mod.py"]
    for path in sources:
        path.write_text("VALUE = 1\n")
    monkeypatch.setattr(_harness, "_BYTE_CODE", None)
    line = _harness.byte_compile_package(str(package))
    for path in sources:
        cached = importlib.util.cache_from_source(str(path))
        assert os.path.exists(cached) and os.path.getmtime(cached) >= os.path.getmtime(path), path
    assert "byte-compiled" in line and "compileall reported an error" not in line
    info = _harness.machine_info()
    assert info["byte_code"] == line and f"- {line}" in _harness.render_header(info, quick=False)


def test_the_byte_code_benchmark_runs_both_copies_and_keeps_the_plain_one_plain(tmp_path):
    """``benchmarks.byte_code``: the committed package from a copy without byte-code and a compiled one, the same
    labels from both, and the plain copy still without byte-code after its runs (else the comparison is void)."""
    from benchmarks import byte_code

    out = tmp_path / "byte-code.md"
    assert byte_code.main(["--rows", "3000", "--repeats", "1", "--output", str(out)]) == 0
    text = out.read_text()
    assert "| from source |" in text and "| byte-compiled |" in text
    assert "Labels identical in every run: yes" in text and "stayed without byte-code" in text


def test_the_start_benchmark_times_each_command_in_every_round(tmp_path, monkeypatch):
    """``benchmarks.cli_start``: every command run in each round (one untimed first), a row per command with its
    target where it has one, and a failing command refused rather than timed."""
    from benchmarks import cli_start

    ran = []
    real = cli_start.run_child
    monkeypatch.setattr(cli_start, "run_child", lambda cmd, **kw: (ran.append(cmd[-1]), real(cmd, **kw))[1])
    walls = cli_start.measure(2)
    assert len(ran) == 3 * len(cli_start.COMMANDS) and all(len(w) == 2 for w in walls.values())
    page = cli_start.render(walls, 2)
    assert "| `kernelsketch --help` |" in page and "<= 0.5 s" in page and "<= 0.3 s" in page
    monkeypatch.setattr(cli_start, "COMMANDS", [("`python -c exit(3)`", "py", ["-c", "exit(3)"], None)])
    with pytest.raises(RuntimeError, match=r"failed \(exit 3\)"):
        cli_start.measure(1)


def test_the_revisions_benchmark_runs_both_commits_and_the_reference_in_each_round(tmp_path):
    """``benchmarks.revisions``: two committed revisions' commands and MiniBatchKMeans in every round, the ratios
    from the rounds, the labels of both compared; a revision git does not know is refused by name."""
    from benchmarks import revisions

    out = tmp_path / "revisions.md"
    assert revisions.main(["--base", "HEAD", "--rows", "3000", "--repeats", "2", "--output", str(out)]) == 0
    text = out.read_text()
    head = revisions._commit("HEAD")[:7]
    assert f"(base) and `{head}` (head)" in text and "| MiniBatchKMeans |" in text
    rows = [line for line in text.splitlines() if line.startswith("| head / base |")]
    assert len(rows) == 1 and len(rows[0].split("|")[3].split(",")) == 2  # (one ratio a round)
    cpu = [line for line in text.splitlines() if line.startswith("| head / base, CPU |")]
    assert len(cpu) == 1 and all(float(x) > 0 for x in cpu[0].split("|")[3].split(","))
    assert "labels identical in every run: yes" in text
    with pytest.raises(ValueError, match="no-such-revision"):
        revisions.main(["--base", "no-such-revision", "--output", str(out)])
    # --workers: both revisions' command on a local Dask cluster, said on the page, the same labels
    assert revisions._command(2).count("'--workers', '2'") == 1 and "--workers" not in revisions._command()
    argv = ["--base", "HEAD", "--rows", "3000", "--repeats", "1", "--workers", "1", "--output", str(out)]
    assert revisions.main(argv) == 0
    text = out.read_text()
    assert "with `--workers 1` (a local Dask cluster)" in text and "labels identical in every run: yes" in text


def test_the_gpu_benchmark_runs_on_a_cpu_array_api_library(tmp_path):
    # issue 16: benchmarks/gpu.py is meant for torch on a GPU; array_api_strict exercises every row here
    pytest.importorskip("array_api_strict")
    import os
    import subprocess
    import sys

    out = tmp_path / "gpu.md"
    env = {**os.environ, "SCIPY_ARRAY_API": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "benchmarks.gpu", "--quick", "--library", "array_api_strict", "--repeats", "1"]
    r = subprocess.run([*cmd, "--output", str(out)], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    text = out.read_text()
    for row in ("Gaussian block", "KernelJL.transform", "Nystroem.transform", "RandomFourierFeatures.transform"):
        assert row in text, row
    assert "check the code, not the speed" in text


def test_the_gpu_clustering_benchmark_runs_on_pytorchs_cpu(tmp_path):
    # issue 55: benchmarks/gpu_cluster.py is meant for a CUDA card; PyTorch's CPU runs every row of it here
    pytest.importorskip("torch", reason="PyTorch is not installed (./dev installs its CPU build where one is here)")
    from benchmarks import gpu_cluster

    out = tmp_path / "gpu-cluster.md"
    text = gpu_cluster.main(["--quick", "--device", "cpu", "--rows", "6000", "--output", str(out)])
    assert out.read_text() == text and "PyTorch CPU" in text and "not a measurement" in text
    for row in (
        "ours: `cluster_file",
        "PyTorch k-means, k-means++",
        "/ floor (the search alone)",
        "Ours / PyTorch k-means",
    ):
        assert row in text, row
    ours_ari = float(text.split("end to end | ")[1].split("|")[1])
    assert ours_ari >= 0.99  # the blobs are well separated: the device path's labels are the blobs'
