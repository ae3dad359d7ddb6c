"""The console script imports scikit-learn without scipy.stats and pandas, and both still load when used."""

import subprocess
import sys

import numpy as np

REPORT = (
    "import atexit, sys\n"
    "atexit.register(lambda: print('LOADED', sorted(m for m in ('scipy.stats', 'pandas') if m in sys.modules)))\n"
)


def _run(code, cwd=None):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=cwd).stdout


def test_a_cluster_run_of_the_console_script_loads_neither(tmp_path):
    X = np.random.default_rng(0).normal(size=(3000, 3)) + np.repeat(np.eye(3) * 8, 1000, axis=0)
    np.save(tmp_path / "x.npy", X)
    argv = ["kernelsketch", "cluster", "x.npy", "-k", "3", "-o", "labels.npy"]
    code = REPORT + f"sys.argv = {argv!r}\nfrom kernelsketch.cli.console import main\nmain()\n"
    out = _run(code, cwd=tmp_path)
    assert "LOADED []" in out, out[-500:]
    labels = np.load(tmp_path / "labels.npy")
    assert np.unique(labels[:1000]).size == np.unique(labels[1000:2000]).size == 1 and np.unique(labels).size == 3
    # the same call in a Python process of its own (no console script): scikit-learn's import loads both
    out = _run(REPORT + f"from kernelsketch.cli.main import main\nmain({argv[1:]!r} + ['--force'])\n", cwd=tmp_path)
    assert "LOADED ['pandas', 'scipy.stats']" in out, out[-500:]


def test_the_placeholders_hand_on_every_use():
    code = (
        REPORT + "from kernelsketch.cli.lean_imports import install\n"
        "assert install() and not install()\n"  # (once)
        "import numpy as np\n"
        "import sklearn.base, sklearn.utils.fixes as fixes\n"
        "assert 'scipy.stats' not in sys.modules and 'pandas' not in sys.modules\n"
        "assert not any(type(f).__name__ == '_ShimFinder' for f in sys.meta_path)\n"  # (gone once used)
        "import pandas as pd\n"
        "assert fixes.pd.__version__ == pd.__version__ and fixes.pd.DataFrame is pd.DataFrame\n"
        "from sklearn.utils.validation import check_array\n"
        "assert check_array(pd.DataFrame({'a': [1.0, 2.0]})).shape == (2, 1)\n"
        "import scipy.stats\n"
        "assert type(scipy.stats).__name__ == 'module' and scipy.stats.norm.cdf(0.0) == 0.5\n"
        "assert fixes.scipy.stats is scipy.stats\n"  # (the shims' own reference: the real module)
        "print('MODE', int(scipy.stats.mode(np.array([3, 1, 3])).mode))\n"
    )
    out = _run(code)
    assert "MODE 3" in out and "LOADED ['pandas', 'scipy.stats']" in out, out[-500:]


def test_a_placeholder_used_while_the_shim_runs_loads_the_real_module():
    code = (
        "import sys\n"
        "from kernelsketch.cli import lean_imports\n"
        "placeholder = lean_imports._Deferred('json')\n"
        "sys.modules['json'] = placeholder\n"
        "assert placeholder.dumps([1]) == '[1]'\n"  # (the real json, and the placeholder no longer listed)
        "assert type(sys.modules['json']).__name__ == 'module'\n"
        "print('OK')\n"
    )
    assert "OK" in _run(code)
    # a process that has imported scikit-learn already: nothing to do, nothing installed
    code = "import sys, sklearn\nfrom kernelsketch.cli import lean_imports\nn = len(sys.meta_path)\n"
    code += "print(lean_imports.install(), len(sys.meta_path) - n)"
    assert _run(code).split() == ["False", "0"]
