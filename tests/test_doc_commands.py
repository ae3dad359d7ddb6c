"""Every ``kernelsketch`` command in a ```bash block of README.md and docs/*.md runs verbatim.

The commands run in a scratch folder holding the small files they name
(``data.csv`` with a ``label`` column, ``data.parquet``, ``new.csv``,
``X.npy``), generated here, so a README line that fails fails this test.
``./dev demo`` runs as the command it executes (``kernelsketch demo``);
``./dev test`` and ``./dev bench`` are this suite and the benchmarks.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
ENV = {**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def _commands():
    out = []
    for path in DOCS:
        for block in re.findall(r"```bash\n(.*?)```", path.read_text(), flags=re.S):
            for line in block.splitlines():
                cmd = line.split("  #", 1)[0].strip()
                if cmd.startswith("./dev demo"):
                    cmd = "kernelsketch demo" + cmd[len("./dev demo") :]
                if cmd.startswith("kernelsketch "):
                    out.append(pytest.param(cmd, id=f"{path.name}:{cmd[:60]}"))
    return out


COMMANDS = _commands()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    from sklearn.datasets import make_blobs

    from kernelsketch.io import write_matrix

    folder = tmp_path_factory.mktemp("doc-commands")
    X, y = make_blobs(n_samples=3000, centers=2, n_features=4, random_state=0)
    with open(folder / "data.csv", "w") as f:
        f.write("a,b,c,d,label\n")
        for row, c in zip(X, y, strict=True):
            f.write(",".join(repr(float(v)) for v in row) + f",{'yes' if c else 'no'}\n")
    write_matrix(folder / "data.parquet", X, column_names=["a", "b", "c", "d"])
    with open(folder / "new.csv", "w") as f:
        f.write("a,b,c,d\n")
        for row in X[:500] + 0.1:
            f.write(",".join(repr(float(v)) for v in row) + "\n")
    Xb, _ = make_blobs(n_samples=30_000, centers=10, n_features=10, random_state=1)
    np.save(folder / "X.npy", Xb)
    _write_my_csv(folder / "my.csv")
    return folder


def _write_my_csv(path):
    """The README's first example: 3,000 points with columns ``x,y``, two moons and a blob, no label column."""
    from sklearn.datasets import make_blobs, make_moons

    moons, _ = make_moons(2000, noise=0.06, random_state=0)
    blob, _ = make_blobs(1000, centers=[(3.2, 1.5)], cluster_std=0.25, random_state=0)
    X = np.vstack([moons, blob])
    np.random.default_rng(0).shuffle(X)
    with open(path, "w") as f:
        f.write("x,y\n")
        for r in X:
            f.write(f"{r[0]:.5f},{r[1]:.5f}\n")


def test_the_docs_have_commands():
    names = " ".join(p.values[0] for p in COMMANDS)
    for sub in ("embed", "cluster", "fit", "transform", "reproduce", "datasets", "info", "demo"):
        assert f"kernelsketch {sub}" in names


@pytest.mark.slow
@pytest.mark.parametrize("cmd", COMMANDS)
def test_doc_command_runs_verbatim(cmd, workdir):
    argv = shlex.split(cmd)
    r = subprocess.run(
        [sys.executable, "-m", "kernelsketch.cli", *argv[1:]],
        cwd=workdir,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, f"{cmd}\n{r.stdout}\n{r.stderr}"
    # each command's output file exists (and the next command can read it)
    for flag in ("-o", "--save", "--plot", "--output"):
        if flag in argv and argv[0:2] != ["kernelsketch", "demo"]:
            target = workdir / argv[argv.index(flag) + 1]
            assert target.exists(), f"{cmd}: {target} was not written"


def _numbers_free(line):
    """A printed line with its numbers (timings vary) replaced by one placeholder."""
    return re.sub(r"\d[\d,.]*", "#", line.strip())


def test_the_readme_shows_what_its_first_command_prints(tmp_path):
    """#54: the README's first example prints what the README says it prints (numbers aside: timings vary)."""
    text = (ROOT / "README.md").read_text()
    m = re.search(r"```bash\n(kernelsketch cluster my\.csv[^\n]*)\n```\n.*?```text\n(.*?)```", text, flags=re.S)
    assert m, "the README's first example and its output block"
    cmd, shown = m.group(1), m.group(2).strip().splitlines()
    _write_my_csv(tmp_path / "my.csv")
    r = subprocess.run(
        [sys.executable, "-m", "kernelsketch.cli", *shlex.split(cmd)[1:]],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    # (not in a terminal, each pass prints a one-line summary where a terminal shows a progress bar on stderr)
    printed = [
        ln
        for ln in r.stdout.splitlines()
        if not ln.startswith("compiling the numba kernels") and not re.match(r"\[[^]]+\] [\d,]+ rows in ", ln)
    ]
    assert [_numbers_free(ln) for ln in printed] == [_numbers_free(ln) for ln in shown]
    sizes = re.search(r"cluster sizes \[([\d, ]+)\]", r.stdout).group(1)
    assert sizes == re.search(r"cluster sizes \[([\d, ]+)\]", "\n".join(shown)).group(1)  # the same clusters


def _pool_page():
    return (ROOT / "benchmarks" / "results" / "cluster-pool.md").read_text()


def test_the_readmes_comparison_with_k_means_is_the_pool_benchmarks():
    """The README's numbers against k-means and Genie are those of benchmarks/results/cluster-pool.csv (the shipped
    default is the recipe ``F1``, chosen there by leave-one-group-out)."""
    import pandas as pd

    d = pd.read_csv(ROOT / "benchmarks" / "results" / "cluster-pool.csv")
    per = d.groupby(["group", "set", "method", "features"]).ari.mean().reset_index()
    best = per.groupby(["group", "set", "method"]).ari.max().unstack("method")
    c0, km, genie = best["F1 lower Ncut of default and E3"], best["KMeans"], best["Genie"]  # (F1: the shipped default)
    text = " ".join((ROOT / "README.md").read_text().split())

    def bare(x):
        return f"{x:.3f}".lstrip("0")

    raw = per[(per.method == "Genie") & (per.features == "raw")].ari
    left_out = re.search(r"\| \*\*all 48\*\* \| 48 \| \| \*\*0(\.\d{3})\*\* \|", _pool_page())
    assert left_out, "cluster-pool.md's left-out total"
    assert f"not chosen on at **{left_out.group(1)}**" in text
    assert f"scores **{bare(c0.mean())}** on the 48, k-means **{bare(km.mean())}**" in text
    assert f"**{int((c0 >= km - 0.02).sum())} of {len(c0)}** sets" in text
    assert f"reaches {bare(raw.mean())} on raw features and {bare(genie.dropna().mean())} with the" in text
    ran = genie.notna()
    assert f"on the {int(ran.sum())} sets it runs on (the default {bare(c0[ran].mean())} there)" in text
    recipes = sorted({m for m in d.method.unique() if re.match(r"[A-Z]\d ", m)})
    assert f"leave-one-group-out over the {len(recipes)} recipes tried" in text


def test_the_readmes_speed_figure_is_the_floor_benchmarks():
    """The README's 5M-row time, memory and ratio to MiniBatchKMeans are the floor benchmark's latest page's (the
    one the quality page cites too)."""
    import sys

    sys.path.insert(0, str(ROOT))
    from benchmarks.cluster_quality import FLOOR_PAGE

    page = (ROOT / "benchmarks" / "results" / FLOOR_PAGE).read_text()
    row = re.search(r"\| `kernelsketch cluster X\.npy -k 8 -o labels\.npy` \| ([\d.]+) \| (\d+) \|", page)
    ratio = re.search(r"Ours / MiniBatchKMeans wall, the median of the rounds' ratios: \*\*([\d.]+x)\*\*", page)
    assert row and ratio, "cluster-floor.md's job table and ratio"
    text = " ".join((ROOT / "README.md").read_text().split())
    assert f"in {row.group(1)} s and {row.group(2)} MiB, {ratio.group(1)} scikit-learn's" in text
    assert f"]({'benchmarks/results/' + FLOOR_PAGE})" in text
