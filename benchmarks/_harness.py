"""Timing, memory and reporting machinery shared by every benchmark case.

Timing protocol (the same for every case): the competing callables run in the
same process, interleaved ``ours, ref, ours, ref, ...`` so that frequency
scaling, page-cache state and noisy neighbours hit both alike; one warm-up
round is discarded and the median of the remaining ``repeats`` is reported.

Memory: ``tracemalloc`` only sees Python allocations, not the BLAS / numpy
buffers we care about, so peak memory is read from the kernel.  Before a
measured call the process's resident high-water mark is reset (writing ``5``
to ``/proc/self/clear_refs``, Linux >= 4.0) and ``ru_maxrss`` after the call
minus the RSS before it is the peak *extra* memory of that call.  Where the
reset is not permitted the measurement is reported as unavailable.  Whole
cases run in a fresh subprocess whose peak RSS (``os.wait4`` rusage) is also
reported, and the memory case measures its command's subprocess that way.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import gc
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import NamedTuple

MiB = 2**20


class NotAvailable(Exception):
    """Raised by a case when the estimator it benchmarks does not exist (yet)."""


def require(module: str, name: str):
    """Import ``name`` from ``module`` or raise :class:`NotAvailable`."""
    import importlib

    try:
        mod = importlib.import_module(module)
        return getattr(mod, name)
    except (ImportError, AttributeError) as exc:
        raise NotAvailable(f"{module}.{name} not available ({type(exc).__name__}: {exc})") from None


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------
@dataclasses.dataclass
class Comparison:
    """One timed comparison; ``speedup = ref_s / ours_s`` must be ``>= target``.

    A "within 1.3x of the floor" requirement is ``target = 1 / 1.3``.
    ``ours_s`` is None when our side is not available.
    """

    label: str
    ours: str
    ref: str
    ours_s: float | None
    ref_s: float | None
    target: float | None = None
    target_text: str = ""
    ours_mem_mb: float | None = None
    ref_mem_mb: float | None = None
    note: str = ""

    @property
    def available(self) -> bool:
        return self.ours_s is not None and self.ref_s is not None

    @property
    def speedup(self) -> float | None:
        if not self.available or self.ours_s <= 0:
            return None
        return self.ref_s / self.ours_s

    @property
    def met(self) -> bool | None:
        if self.target is None or self.speedup is None:
            return None
        return self.speedup >= self.target


@dataclasses.dataclass
class Metric:
    """A measured quantity (rows/s, an error, a peak RSS) with an optional bound."""

    label: str
    value: float | None
    unit: str = ""
    bound: float | None = None
    op: str = "<="  # value <op> bound is the requirement
    note: str = ""

    @property
    def met(self) -> bool | None:
        if self.bound is None or self.value is None:
            return None
        return self.value <= self.bound if self.op == "<=" else self.value >= self.bound


@dataclasses.dataclass
class CaseResult:
    name: str
    title: str
    available: bool = True
    comparisons: list = dataclasses.field(default_factory=list)
    metrics: list = dataclasses.field(default_factory=list)
    notes: list = dataclasses.field(default_factory=list)
    setup: str = ""
    seconds: float | None = None
    peak_rss_mb: float | None = None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> CaseResult:
        d = dict(d)
        d["comparisons"] = [Comparison(**c) for c in d.get("comparisons", [])]
        d["metrics"] = [Metric(**m) for m in d.get("metrics", [])]
        return cls(**d)


@dataclasses.dataclass
class RunConfig:
    """What a case needs to know about the run."""

    quick: bool = False
    repeats: int | None = None  # override of each case's default
    measure_memory: bool = True
    plots_dir: str | None = None  # where the scaling case writes figures (None: no figures)
    log: Callable[[str], None] = dataclasses.field(default=lambda msg: print(msg, file=sys.stderr, flush=True))

    def n_repeats(self, default: int) -> int:
        if self.repeats is not None:
            return self.repeats
        return 2 if self.quick else default


# ---------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------
@dataclasses.dataclass
class Timing:
    times: list

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def min(self) -> float:
        return min(self.times)


#: Pause after each timed call.  After a multithreaded call OpenBLAS keeps
#: its worker threads spinning for 2^28 cycles (~0.1 s here) before they
#: sleep; a call started in that window shares a core with them (measured:
#: KernelJL.transform 175 ms right after sklearn's Nystroem.transform, 138 ms
#: after a 0.2 s pause).  The pause lets every call -- ours and the
#: reference alike -- start from idle BLAS threads instead of paying for the
#: previous call's spin-down.  The result is kept alive during the pause and
#: dropped just before the next call: on this VM memory that stays free for
#: ~0.5 s or more is handed back to the host, and faulting it in again made a
#: fresh 800 MB output cost 300-1500 ms instead of 50 ms.
SETTLE_S = 0.15


def call_in_child(module, function, *args):
    """``module.function(*args)`` in a child Python process (plain ``repr``-able arguments).

    For writing a benchmark's input: Linux hands a process's RSS high-water mark to every child it
    starts later (``ru_maxrss`` survives fork and exec), so a parent that wrote a 1.3 GB input made
    every measured command's peak read 1.4 GB.
    """
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = (
        f"import sys; sys.path.insert(0, {root!r}); from {module} import {function}; "
        f"{function}({', '.join(map(repr, args))})"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def time_interleaved(fns: dict, repeats: int, warmup: int = 1) -> dict:
    """Median wall time of each callable, run interleaved round by round.

    Each call's result is dropped before the next call starts, so a fresh
    output allocation is paid by every call and never accumulates.  Each call
    is followed by a ``SETTLE_S`` pause (idle BLAS threads, see there).
    """
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    times = {name: [] for name in fns}
    for r in range(warmup + repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            result = fn()
            t1 = time.perf_counter()
            if SETTLE_S > 0:
                time.sleep(SETTLE_S)
            del result
            if r >= warmup:
                times[name].append(t1 - t0)
    return {name: Timing(ts) for name, ts in times.items()}


def time_once(fn) -> float:
    time.sleep(SETTLE_S)
    t0 = time.perf_counter()
    result = fn()
    t1 = time.perf_counter()
    del result
    return t1 - t0


# ---------------------------------------------------------------------------
# memory
# ---------------------------------------------------------------------------
def _current_rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def peak_extra_mb(fn) -> float | None:
    """Peak resident memory (MiB) a call adds on top of the RSS before it.

    None when the peak cannot be reset on this system (then the high-water
    mark would include earlier, unrelated peaks).
    """
    gc.collect()
    rss0 = _current_rss_bytes()
    if not _reset_peak_rss():
        return None
    result = fn()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    del result
    gc.collect()
    return max(peak - rss0, 0) / MiB


class ChildRun(NamedTuple):
    """What :func:`run_child` measured of one child process."""

    code: int  # exit code
    wall: float  # seconds
    peak_mib: float  # its own peak RSS
    cpu: float  # user + system seconds of it (and the children it waited for)


def run_child(cmd: list, env=None, cwd=None, timeout=None, stdout=None) -> ChildRun:
    """Run ``cmd``; return its :class:`ChildRun` (exit code, wall seconds, peak RSS MiB, CPU seconds).

    ``os.wait4`` returns the rusage of this one child (RUSAGE_CHILDREN would
    be the maximum over every child ever waited for).  Without ``timeout`` the wait blocks (the wall is the
    child's to the scheduler's wake-up); with one it polls every 10 ms and kills the child at the deadline.
    """
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=stdout)
    if timeout is None:
        _, status, usage = os.wait4(proc.pid, 0)
    else:
        deadline = t0 + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return ChildRun(proc.returncode, wall, usage.ru_maxrss * 1024 / MiB, usage.ru_utime + usage.ru_stime)


# ---------------------------------------------------------------------------
# machine description
# ---------------------------------------------------------------------------
def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _mem_total_gib() -> float | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return None


def _git_commit() -> str:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


#: what :func:`byte_compile_package` did (None: not called in this run), for the page's header
_BYTE_CODE: str | None = None


def byte_compile_package(root=None) -> str:
    """Byte-compile kernelsketch's modules before fresh processes are timed, as an installed wheel has them.

    ``pip install`` compiles a wheel's modules (scikit-learn's, SciPy's, numpy's), so a fresh process loads them
    from ``__pycache__``.  An editable install (``pip install -e .``, the dev venv) has none until an import writes
    it, and where ``PYTHONDONTWRITEBYTECODE`` is set (this workplace's shells set it) none is ever written: every
    fresh process of ours then compiled the package's modules from source (about 80 for a ``cluster`` run;
    ``benchmarks/byte_code.py`` measures what that costs) while the reference loaded its byte-code.  Pages written
    before 2026-11-29 10:00 UTC include that cost.  ``root``: the package's folder (default: kernelsketch's).
    Returns the line the header prints (also kept for :func:`machine_info`).
    """
    import compileall

    global _BYTE_CODE
    if root is None:
        import kernelsketch

        root = os.path.dirname(os.path.abspath(kernelsketch.__file__))
    ok = compileall.compile_dir(root, quiet=1)
    dont_write = os.environ.get("PYTHONDONTWRITEBYTECODE", "unset")
    _BYTE_CODE = (
        f"kernelsketch's modules byte-compiled before the timings (`compileall`, as `pip install` leaves a wheel; "
        f"`PYTHONDONTWRITEBYTECODE={dont_write or 'unset'}`)"
        + ("" if ok else "; compileall reported an error: some modules compiled from source in each process")
    )
    return _BYTE_CODE


def blas_info() -> list:
    """threadpoolctl's view of the loaded BLAS / OpenMP libraries (numpy and scipy imported first)."""
    import numpy  # noqa: F401  (loads numpy's OpenBLAS)
    import scipy.linalg  # noqa: F401  (loads scipy's OpenBLAS)
    from threadpoolctl import threadpool_info

    seen, out = set(), []
    for info in threadpool_info():
        key = (info.get("internal_api"), info.get("version"), info.get("architecture"), info.get("filepath"))
        if key in seen:
            continue
        seen.add(key)
        out.append(
            {
                k: info.get(k)
                for k in (
                    "user_api",
                    "internal_api",
                    "version",
                    "architecture",
                    "num_threads",
                    "threading_layer",
                    "filepath",
                )
            }
        )
    return out


def machine_info() -> dict:
    import numpy
    import scipy
    import sklearn

    try:
        import kernelsketch

        ks_version = kernelsketch.__version__
    except ImportError:  # pragma: no cover
        ks_version = "not importable"
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        affinity = os.cpu_count()
    env = {
        v: os.environ.get(v, "unset")
        for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
    }
    return {
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _cpu_model(),
        "cores": f"{os.cpu_count()} logical, {affinity} usable",
        "memory_gib": _mem_total_gib(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "sklearn": sklearn.__version__,
        "kernelsketch": f"{ks_version} (git {_git_commit()})",
        "blas": blas_info(),
        "env": env,
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "byte_code": _BYTE_CODE,
        "command": " ".join([os.path.basename(sys.executable), "-m", _main_module(), *sys.argv[1:]]),
    }


def _main_module():
    """The module this process runs as ``python -m`` (``benchmarks.cluster_floor``, ...): the page's command."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return spec.name if spec is not None and spec.name.startswith("benchmarks.") else "benchmarks.run"


# ---------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------
def write_page(text: str, path) -> str:
    """Write a benchmark's results page to ``path`` and print it (what every benchmark's ``main`` ends with)."""
    with open(path, "w") as fh:
        fh.write(text)
    print(text)
    return text


def fmt_s(x) -> str:
    if x is None:
        return "not available"
    return f"{x * 1e3:.1f} ms" if x < 1 else f"{x:.2f} s"


def fmt_num(x, digits=3) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if x != 0 and (abs(x) >= 1e5 or abs(x) < 1e-3):
        return f"{x:.{digits}g}"
    return f"{x:,.{digits}g}" if abs(x) >= 1000 else f"{x:.{digits}g}"


def fmt_mb(x) -> str:
    return "n/a" if x is None else f"{x:,.0f}"


def fmt_met(met) -> str:
    return {True: "yes", False: "**NO**", None: "-"}[met]


def cell(text) -> str:
    """Text safe inside a Markdown table cell (norm bars would split the row)."""
    return str(text).replace("|", "\\|")


def render_case(res: CaseResult) -> str:
    lines = [f"## {res.title}", ""]
    if res.setup:
        lines += [res.setup, ""]
    if not res.available:
        lines += ["**not available**: " + "; ".join(res.notes), ""]
        return "\n".join(lines)
    if res.comparisons:
        lines += [
            "| comparison | ours | reference | ours time | ref time | speedup (ref/ours) | target | met "
            "| ours peak MiB | ref peak MiB |",
            "|---|---|---|---:|---:|---:|---|---|---:|---:|",
        ]
        for c in res.comparisons:
            sp = "not available" if c.speedup is None else f"{c.speedup:.2f}x"
            lines.append(
                f"| {cell(c.label)} | {cell(c.ours)} | {cell(c.ref)} | {fmt_s(c.ours_s)} | {fmt_s(c.ref_s)} | {sp} "
                f"| {c.target_text or '-'} | {fmt_met(c.met)} | {fmt_mb(c.ours_mem_mb)} | {fmt_mb(c.ref_mem_mb)} |"
            )
        lines.append("")
    if res.metrics:
        lines += ["| measurement | value | requirement | met | note |", "|---|---:|---|---|---|"]
        for m in res.metrics:
            val = "not available" if m.value is None else f"{fmt_num(m.value)} {m.unit}".strip()
            req = "-" if m.bound is None else f"{m.op} {fmt_num(m.bound)} {m.unit}".strip()
            lines.append(f"| {cell(m.label)} | {val} | {req} | {fmt_met(m.met)} | {cell(m.note)} |")
        lines.append("")
    foot = []
    if res.seconds is not None:
        foot.append(f"case wall time {res.seconds:.1f} s")
    if res.peak_rss_mb is not None:
        foot.append(f"peak RSS of the case process {res.peak_rss_mb:,.0f} MiB")
    if foot:
        lines += ["_" + "; ".join(foot) + "_", ""]
    for note in res.notes:
        lines.append(f"- {note}")
    if res.notes:
        lines.append("")
    return "\n".join(lines)


def render_header(info: dict, quick: bool) -> str:
    env = info["env"]
    env_txt = ", ".join(f"`{k}={v}`" for k, v in env.items())
    lines = [
        "# kernelsketch benchmarks" + (" (quick mode: tiny sizes, not a measurement)" if quick else ""),
        "",
        f"- date: {info['date']}",
        f"- command: `{info['command']}`",
        f"- CPU: {info['cpu']}; cores: {info['cores']}; memory: "
        + (f"{info['memory_gib']:.1f} GiB" if info["memory_gib"] else "unknown"),
        f"- Python {info['python']}, numpy {info['numpy']}, scipy {info['scipy']}, scikit-learn {info['sklearn']}, "
        f"kernelsketch {info['kernelsketch']}",
        f"- environment: {env_txt}",
        "- load average (1, 5, 15 min) at start: "
        + (", ".join(f"{x:.2f}" for x in info["load_average"]) if info.get("load_average") else "unknown")
        + (
            f"; at end: {', '.join(f'{x:.2f}' for x in info['load_average_end'])}"
            if info.get("load_average_end")
            else ""
        ),
        *([f"- {info['byte_code']}"] if info.get("byte_code") else []),
        "- threadpools (threadpoolctl):",
    ]
    for b in info["blas"]:
        lines.append(
            f"  - {b['internal_api']} {b['version'] or ''} ({b['user_api']}), kernel/architecture "
            f"`{b['architecture'] or '-'}`, {b['num_threads']} threads, {os.path.basename(b['filepath'] or '')}"
        )
    lines += [
        "",
        "Protocol: in each comparison ours and the reference run in the same process, interleaved "
        "(ours, ref, ours, ref, ...), one warm-up round, then the median of the timed rounds; "
        f"each call is followed by a {SETTLE_S:g} s pause (its result still alive), so that the next one "
        "starts after OpenBLAS threads spinning from the previous call have gone to sleep (they spin ~0.1 s and "
        "would steal a core). "
        'Speedup = reference time / our time; a "within 1.3x of the floor" target is a speedup >= 1/1.3. '
        "Peak MiB = resident high-water mark of one call minus the RSS before it (reset through "
        "`/proc/self/clear_refs`), so BLAS and numpy buffers are counted.",
        "",
    ]
    return "\n".join(lines)


def render_summary(results: list) -> str:
    lines = ["## Summary of targets", "", "| case | requirement | measured | met |", "|---|---|---:|---|"]
    for res in results:
        if not res.available:
            lines.append(f"| {res.title} | - | not available | - |")
            continue
        for c in res.comparisons:
            if c.target is not None:
                sp = "not available" if c.speedup is None else f"{c.speedup:.2f}x"
                lines.append(f"| {res.name}: {cell(c.label)} | {c.target_text} | {sp} | {fmt_met(c.met)} |")
        for m in res.metrics:
            if m.bound is not None:
                val = "not available" if m.value is None else f"{fmt_num(m.value)} {m.unit}".strip()
                lines.append(
                    f"| {res.name}: {cell(m.label)} | {m.op} {fmt_num(m.bound)} {m.unit} | {val} | {fmt_met(m.met)} |"
                )
    lines.append("")
    return "\n".join(lines)


def render_report(info: dict, results: list, quick: bool) -> str:
    parts = [render_header(info, quick), render_summary(results)]
    parts += [render_case(r) for r in results]
    return "\n".join(parts).rstrip() + "\n"
