"""The console script ends its process without module teardown once its command has returned, after every exit
handler (:mod:`kernelsketch.utils.process_exit`)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import atexit, os, sys
from kernelsketch.cli.main import main

class Mark:  # (the file made now; written by __del__ with what it holds, as names may be gone by then)
    def __init__(self, path):
        self.fd, self.write = os.open(path, os.O_WRONLY | os.O_CREAT), os.write
    def __del__(self):
        self.write(self.fd, b"module teardown ran")

import kernelsketch
folder = sys.argv[1]
kernelsketch._mark = Mark(folder + "/teardown")  # (freed only by module teardown)
atexit.register(lambda: open(folder + "/handler", "w").write("exit handler ran"))
args = ["cluster", folder + "/missing.npy", "-k", "2", "-o", folder + "/labels.npy"]
if sys.argv[2] == "console":
    sys.argv = ["kernelsketch", *args]
    sys.exit(main())
sys.exit(main(args))  # (a caller's argv: a Python caller's process, left to end as it will)
"""


def _run(folder, how):
    return subprocess.run([sys.executable, "-c", SCRIPT, str(folder), how], capture_output=True, text=True, timeout=120)


def test_the_console_script_runs_exit_handlers_then_ends_without_module_teardown(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    console = _run(tmp_path / "a", "console")
    assert console.returncode == 1, console.stderr  # (the command's own exit code: the input does not exist)
    assert "does not exist" in console.stderr
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["handler", "teardown"]
    assert (tmp_path / "a" / "teardown").read_text() == ""
    caller = _run(tmp_path / "b", "caller")  # the control: the ordinary ending writes the teardown mark
    assert caller.returncode == 1, caller.stderr
    assert (tmp_path / "b" / "teardown").read_text() == "module teardown ran"
