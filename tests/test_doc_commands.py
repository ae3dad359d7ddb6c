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
    return folder


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
