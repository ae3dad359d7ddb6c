"""Nothing silently wrong (issue 63): a searcher's answer and its build are checked, a labeling that cannot apply is
refused, faiss's float32 range is said, every method names underflowing distances, a killed run's graph folder goes
at the next run of any size, progress off a terminal is lines, and a decimal comma is named."""

import os
import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

import kernelsketch as ks
from kernelsketch.kernels.search import ExactSearch, FaissSearch

NO_FAISS = "faiss is optional (pip install faiss-cpu, or kernelsketch[faiss]; ./dev installs it)"


@pytest.fixture(scope="module")
def blobs():
    return make_blobs(1500, centers=[[0, 0], [8, 0], [0, 8]], cluster_std=0.7, random_state=0)


class _Repeating(ExactSearch):
    """Returns its nearest point ``r`` times: ARI .001 where the exact search gives 1.0, if accepted."""

    def search(self, X, r):
        d, i = super().search(X, r)
        return np.repeat(d[:, :1], r, 1), np.repeat(i[:, :1], r, 1)


class _BuildsNothing(ExactSearch):
    def build(self, points):
        super().build(points)  # (no return)


def test_a_searcher_returning_a_point_twice_in_a_row_is_refused(blobs):
    with pytest.raises(ValueError, match="same point more than once in a row"):
        ks.cluster.LandmarkSpectralClustering(3, n_landmarks=200, search=_Repeating(), random_state=0).fit(blobs[0])


def test_a_build_that_returns_nothing_is_named(blobs):
    with pytest.raises(TypeError, match=r"_BuildsNothing.build\(points\) returned NoneType.*return self"):
        ks.cluster.LandmarkSpectralClustering(3, n_landmarks=200, search=_BuildsNothing(), random_state=0).fit(blobs[0])


def test_assign_labels_applies_to_the_spectral_clustering_only(blobs):
    with pytest.raises(ValueError, match=r"assign_labels='genie'.*embedding='spectral'"):
        ks.cluster_file(blobs[0], 3, embedding="kjl", assign_labels="genie")


def test_an_unknown_keyword_for_in_memory_data_is_refused(blobs):
    # (it went to the read options, which an array has none of, and was dropped: search='faiss' did nothing)
    with pytest.raises(TypeError, match=r"unexpected keyword argument.*search"):
        ks.cluster_file(blobs[0], 3, search="faiss")


@pytest.mark.parametrize("scale,what", [(1e20, "overflow"), (1e-25, "underflow")])
def test_faiss_says_its_float32_range_does_not_fit(blobs, scale, what):
    pytest.importorskip("faiss", reason=NO_FAISS)
    X = blobs[0] * scale
    with pytest.raises(ValueError, match=f"FaissSearch computes in float32.*{what}.*search='exact'"):
        ks.cluster.LandmarkSpectralClustering(3, n_landmarks=200, search=FaissSearch(), random_state=0).fit(X)
    exact = ks.cluster.LandmarkSpectralClustering(3, n_landmarks=200, search="exact", random_state=0).fit(X)
    assert adjusted_rand_score(blobs[1], exact.labels_) > 0.99  # (the exact search computes in float64)


@pytest.mark.parametrize("embedding", ["kjl", "spectral"])
def test_every_method_names_distances_that_underflow(blobs, embedding):
    with pytest.raises(ValueError, match=r"squared distances underflow in float64.*rescale"):
        ks.cluster_file(blobs[0] * 1e-200, 3, embedding=embedding, random_state=0)


def test_a_killed_runs_graph_folder_goes_at_a_small_run_too(tmp_path):
    code = (
        "import os, signal, numpy as np\n"
        "from kernelsketch.out_of_core.spilled_blocks import SpilledBlocks\n"
        "c = SpilledBlocks()\n"
        "c.append((np.zeros((3, 2), np.int32), np.ones((3, 2))))\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", code], check=False, env=env)
    assert [p.name.startswith("kernelsketch-graph-") for p in tmp_path.iterdir()] == [True]
    small = (
        "import numpy as np, kernelsketch as ks\n"
        "ks.cluster_file(np.random.default_rng(0).normal(size=(300, 2)), 2, random_state=0)\n"
    )
    subprocess.run([sys.executable, "-c", small], check=True, env=env)  # 300 rows: no graph of its own kept
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("kernelsketch-graph-")]


def test_k_auto_off_a_terminal_prints_lines_not_carriage_returns(tmp_path):
    X, _ = make_blobs(1200, centers=3, random_state=0)
    path = tmp_path / "b.csv"
    np.savetxt(path, X, delimiter=",", header="a,b", comments="", fmt="%.6g")
    out = subprocess.run(
        [sys.executable, "-m", "kernelsketch.cli", "cluster", str(path), "-k", "auto"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "\r" not in out.stdout + out.stderr
    assert "[stability over random halvings]" in out.stdout


def test_a_decimal_comma_is_named(tmp_path):
    path = tmp_path / "dc.csv"
    path.write_text("a;b;c\n-2,6768;-8,7050;1,0\n1,5;2,0;3,0\n")
    with pytest.raises(ValueError, match="non-numeric value '-2,6768' \\(a decimal comma\\?"):
        ks.cluster_file(path, 2, delimiter=";")
