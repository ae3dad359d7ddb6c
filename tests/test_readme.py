"""Every ```python block of README.md and docs/*.md runs as written."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCKS = [
    pytest.param(code, id=f"{path.name}:{i}")
    for path in DOCS if path.exists()
    for i, code in enumerate(re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S))
    if "# doc: skip" not in code
]


@pytest.mark.parametrize("code", BLOCKS)
def test_doc_example_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files
    exec(compile(code, "<doc example>", "exec"), {"__name__": "__doc_example__"})
