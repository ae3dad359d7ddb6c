"""Every figure the README, the performance page and the quality page state beside a results file is that file's
(issue 63, item 16): each decimal number of a paragraph that names files of ``benchmarks/results`` or
``docs/results`` is one of those files' numbers (rounded as the paragraph writes it, or as a percentage).

A paragraph that names no results file states no measured figure; a figure of an earlier run, which no committed
file holds any more, has no place on these pages (the git history keeps it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", "docs/performance.md", "docs/clustering_quality.md")
RESULTS = {
    f.name: f
    for folder in ("benchmarks/results", "docs/results")
    for f in (ROOT / folder).rglob("*")
    if f.is_file() and f.suffix in (".md", ".csv", ".txt")
}
#: a decimal figure (``.742``, ``9.5``, ``2.80x``, ``1,234.5``), not part of a version, a path or a name
FIGURE = re.compile(r"(?<![\w.\-/])(\d[\d,]*\.\d+|\.\d+)(?!\.?\d)(?![A-Za-wyz_])")
#: a target or a threshold the page sets, not a measurement (``>= 0.77x``, ``<= 1.3x``, ``ARI >= .99``)
TARGET = re.compile(r"(?:>=|<=|>|<|target|within|above|below|at least|at most)\s*$")


def _numbers(text):
    return [float(m.replace(",", "")) for m in re.findall(r"-?\d[\d,]*\.?\d*(?:e[+-]?\d+)?|-?\.\d+", text) if m]


def _paragraphs():
    for page in PAGES:
        text = re.sub(r"```.*?```", "", (ROOT / page).read_text(), flags=re.S)
        for i, para in enumerate(re.split(r"\n\s*\n", text)):
            names = sorted({n for n in re.findall(r"([\w.\-]+\.(?:md|csv|txt))", para) if n in RESULTS})
            if names:
                yield pytest.param(para, names, id=f"{page}:{i}")


@pytest.mark.parametrize("para,names", list(_paragraphs()))
def test_every_figure_beside_a_results_file_is_that_files(para, names):
    held = set()
    for n in names:
        for v in _numbers(RESULTS[n].read_text(errors="ignore")):
            held.add(v)
    missing = []
    for m in FIGURE.finditer(para):
        if TARGET.search(para[max(0, m.start() - 12) : m.start()]):
            continue
        text = m.group(1).replace(",", "")
        value, places = float(text), len(text.split(".")[1])
        if not any(round(abs(v), places) == value or round(100 * abs(v), places) == value for v in held):
            missing.append(f"{m.group(1)} in '...{para[max(0, m.start() - 60) : m.end() + 10]}...'")
    assert not missing, f"figures that {names} do not hold:\n" + "\n".join(missing)


def test_round_five_was_registered_before_its_results_existed():
    """Issue 61's protocol: each round-5 candidate entered ``benchmarks/cluster_pool.py`` in a commit before the
    first commit whose ``cluster-pool.csv`` holds a row of it (``git log``'s order; skipped outside a clone)."""
    import shutil
    import subprocess

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git clone: the commit order cannot be read")
    shallow = subprocess.run(
        ["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    if shallow != "false":
        pytest.skip("a shallow clone: the history of the pool benchmark is not here")

    def first_commit(text, path):
        out = subprocess.run(
            ["git", "log", "--format=%H", "--reverse", "-S", text, "--", path],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.split()
        return out[0] if out else None

    def order(commit):
        out = subprocess.run(["git", "rev-list", "--count", commit], cwd=ROOT, capture_output=True, text=True)
        return int(out.stdout.strip())

    for name in ("G1 Dunn of default and E3", "G2 Dunn of default, E3 and Genie on 5,000 rows"):
        registered = first_commit(f'"{name}"', "benchmarks/cluster_pool.py")
        measured = first_commit(name, "benchmarks/results/cluster-pool.csv")
        if registered is None or measured is None:
            pytest.skip("a shallow clone: the history of the pool benchmark is not here")
        assert order(registered) < order(measured), name
