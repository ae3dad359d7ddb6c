"""Runs tests/array_api_suite.py (the device paths) in a subprocess with SCIPY_ARRAY_API=1.

scipy reads SCIPY_ARRAY_API once, at import; the main test process must keep scipy's default
mode, so the array-API checks get their own interpreter.
"""

import os
import pathlib
import subprocess
import sys

import pytest

SUITE = pathlib.Path(__file__).with_name("array_api_suite.py")


def test_array_api_paths():
    pytest.importorskip("array_api_strict")
    env = {**os.environ, "SCIPY_ARRAY_API": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "pytest", "-q", "--no-header", "-p", "no:cacheprovider", str(SUITE)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=SUITE.parent.parent)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and "skipped" not in out.stdout.splitlines()[-1], out.stdout[-2000:]
