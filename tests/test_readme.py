"""Every ```python block of README.md and docs/*.md runs as written, as a script.

Each block is saved to a file and run with ``python file.py`` in a scratch
folder (so ``if __name__ == "__main__":`` guards run, as they do for a
user who copies the block into a script; Dask's worker processes re-import
that script).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCKS = [
    pytest.param(code, id=f"{path.name}:{i}")
    for path in DOCS
    if path.exists()
    for i, code in enumerate(re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S))
    if "# doc: skip" not in code
]
ENV = {**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


@pytest.mark.parametrize("code", BLOCKS)
def test_doc_example_runs_as_a_script(code, tmp_path):
    if code.startswith("# needs PyTorch"):
        pytest.importorskip("torch", reason="PyTorch is not installed: the block's first line says how to get it")
    script = tmp_path / "example.py"
    script.write_text(code)
    r = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
