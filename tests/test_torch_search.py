"""The PyTorch searcher (device=, --device): its CPU twin against the NumPy search, here and in CI.

The CUDA path runs the same code on another device; it is measured on a GPU machine by
``benchmarks/gpu_cluster.py`` and tested here only where a CUDA device exists.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

import kernelsketch as ks
from kernelsketch.kernels.neighbors import nearest
from kernelsketch.kernels.search import ExactSearch

torch = pytest.importorskip(
    "torch",
    reason="PyTorch is not installed (pip install torch, or kernelsketch[gpu]; ./dev installs its CPU build where "
    "one is on the machine, as in CI)",
)
from kernelsketch.cli.main import main  # noqa: E402
from kernelsketch.kernels.torch_search import TorchSearch  # noqa: E402

CUDA = pytest.mark.skipif(
    not torch.cuda.is_available(),
    reason="no CUDA device here (CI has none): the CUDA path is measured by benchmarks/gpu_cluster.py on a GPU machine",
)


def _recall(exact, other):
    """The fraction of the exact neighbours the other search found (as sets, per row)."""
    hits = sum(len(set(a) & set(b)) for a, b in zip(exact.tolist(), other.tolist(), strict=True))
    return hits / exact.size


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_torch_search_is_the_exact_search(dtype):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 7)).astype(dtype)
    L = rng.normal(size=(200, 7))
    d2, idx = TorchSearch("cpu", block_rows=700).build(L).search(X, 10)  # (several sub-blocks)
    e2, eidx = nearest(X, L, 10)
    assert d2.dtype == dtype and idx.dtype == np.int32 and d2.shape == (3000, 10)
    assert _recall(eidx, idx) >= 0.999
    np.testing.assert_allclose(d2, e2, rtol=1e-4 if dtype == np.float32 else 1e-9, atol=1e-5)
    assert np.all(np.diff(d2, axis=1) >= 0)  # each row ascending


def test_torch_search_keeps_the_digits_of_offset_data():
    """Map coordinates / timestamps: a common offset of 1e7 costs no digits (the search measures from the
    landmarks' mean), where the plain expansion |x|^2 - 2 x.l + |l|^2 would round every distance to noise."""
    rng = np.random.default_rng(1)
    X = 1e7 + rng.normal(size=(1000, 2))
    L = X[:100]
    d2, idx = TorchSearch("cpu").build(L).search(X, 5)
    e2, eidx = ExactSearch().build(L).search(X, 5)
    assert _recall(eidx, idx) >= 0.999
    np.testing.assert_allclose(d2, e2, rtol=1e-6, atol=1e-9)


def test_torch_tensor_rows_and_bad_input():
    L = np.eye(3)
    s = TorchSearch("cpu").build(L)
    d2, idx = s.search(torch.tensor([[0.9, 0.1, 0.0]], dtype=torch.float64), 2)
    assert idx.tolist() == [[0, 1]]
    with pytest.raises(ValueError, match="3 columns"):
        s.search(np.zeros((2, 4)), 1)
    with pytest.raises(ValueError, match="r must be in"):
        s.search(np.zeros((2, 3)), 4)
    with pytest.raises(ValueError, match="non-empty"):
        TorchSearch("cpu").build(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="PyTorch device"):
        TorchSearch("no-such-device").build(L)


def test_cuda_asked_where_there_is_none_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="no CUDA device"):
        ks.cluster_file(np.random.default_rng(0).normal(size=(100, 2)), 2, device="cuda")


def test_without_pytorch_the_error_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match="pip install torch"):
        TorchSearch("cpu").build(np.eye(2))


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(6000, n_features=5, centers=6, cluster_std=0.7, random_state=3)
    return X, y


def test_cluster_on_the_device_gives_the_numpy_labels(blobs):
    """The done-when's tolerance: ARI >= .99 against the NumPy route with the exact search (the device search is
    exact), on well-separated data; the fit, k-means' seeding and the assignment all search on the device."""
    X, y = blobs
    ours = ks.cluster_file(X, 6, device="cpu", init_size=2000, random_state=0)
    ref = ks.cluster_file(X, 6, embedding=ks.LandmarkSpectralEmbedding(search="exact"), init_size=2000, random_state=0)
    assert adjusted_rand_score(ref.labels, ours.labels) >= 0.99
    assert adjusted_rand_score(y, ours.labels) >= 0.99
    emb = ours.clusterer.embedding_
    assert isinstance(emb.search, TorchSearch) and isinstance(ours.clusterer.kmeans_.search, TorchSearch)
    assert any(isinstance(s, TorchSearch) for s in emb._searcher_cache[1].values())  # (the fit's own searcher)


def test_a_torch_tensor_runs_on_its_device(blobs):
    X, _ = blobs
    res = ks.cluster_file(torch.tensor(X[:1500]), 6, random_state=0)
    assert isinstance(res.clusterer.embedding_.search, TorchSearch)
    assert res.clusterer.embedding_.search.device == "cpu"
    plain = ks.cluster_file(torch.tensor(X[:1500]), 6, random_state=0, device="numpy")
    assert plain.clusterer.embedding_.search == "auto"
    assert adjusted_rand_score(plain.labels, res.labels) >= 0.99


def test_device_is_for_the_spectral_embedding(blobs):
    X, _ = blobs
    with pytest.raises(ValueError, match="has none"):
        ks.cluster_file(X[:200], 2, embedding="kjl", device="cpu")
    with pytest.raises(ValueError, match="not both"):
        ks.cluster_file(X[:200], 2, embedding=ks.LandmarkSpectralEmbedding(search=ExactSearch()), device="cpu")


def test_saved_model_predicts_where_asked(blobs, tmp_path):
    """A model fitted on a device is saved with its search (no tensor in the file) and predicts there, or on the
    NumPy path (``device="numpy"``), the same labels."""
    X, _ = blobs
    res = ks.cluster_file(X[:2000], 6, device="cpu", random_state=0)
    path = tmp_path / "m.ksm"
    ks.save(res.model, path)
    model = ks.load(path)
    labels = model.predict(X[:2000])
    np.testing.assert_array_equal(labels, res.labels)
    on_numpy = ks.transform_source(model, X[:2000], method="predict", device="numpy").embedding.ravel()
    assert adjusted_rand_score(labels, on_numpy) >= 0.99
    assert isinstance(model[-1].embedding_.search, TorchSearch)  # (a copy moved; the model as loaded)


def test_cli_device_flag(blobs, tmp_path, capsys):
    X, y = blobs
    path = tmp_path / "X.npy"
    np.save(path, X.astype(np.float32))
    out, model, pred = tmp_path / "labels.npy", tmp_path / "m.ksm", tmp_path / "pred.npy"
    assert main(["cluster", str(path), "-k", "6", "--device", "cpu", "-o", str(out), "--save", str(model), "-q"]) == 0
    assert adjusted_rand_score(y, np.load(out)) >= 0.99
    capsys.readouterr()
    assert main(["predict", str(model), str(path), "-o", str(pred), "--device", "numpy", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["shape"] == [6000, 1]
    assert adjusted_rand_score(np.load(out), np.load(pred)) >= 0.99
    assert main(["cluster", str(path), "-k", "2", "--method", "kjl", "--device", "cpu"]) != 0
    assert "--device" in capsys.readouterr().err


@CUDA
def test_cuda_gives_the_cpu_twins_labels(blobs):
    X, _ = blobs
    cpu = ks.cluster_file(X, 6, device="cpu", random_state=0)
    gpu = ks.cluster_file(torch.tensor(X, device="cuda"), 6, random_state=0)
    assert gpu.clusterer.embedding_.search.device.startswith("cuda")
    assert adjusted_rand_score(cpu.labels, gpu.labels) >= 0.99


def test_info_lists_the_devices(capsys):
    from kernelsketch.kernels.torch_search import available_devices

    found = available_devices()
    assert found["pytorch"] == torch.__version__
    assert list(found["devices"])[:2] == ["numpy", "cpu"]
    assert ("cuda:0" in found["devices"]) == torch.cuda.is_available()
    assert main(["info", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["devices"] == found["devices"]


def test_moving_a_model_without_spectral_searches_is_refused(blobs):
    X, _ = blobs
    res = ks.cluster_file(X[:500], 3, embedding=None, random_state=0)  # plain k-means: nothing searches landmarks
    with pytest.raises(ValueError, match="no spectral embedding"):
        ks.transform_source(res.model, X[:10], method="predict", device="cpu")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bandwidth", [None, 2.5])
@pytest.mark.parametrize("unit_rows", [False, True])
def test_device_routes_give_the_host_graphs_numbers(dtype, bandwidth, unit_rows, monkeypatch):
    """A block's whole work on the device (search, Gaussian weights, embedding, nearest centre; or ``Z^T Z``) gives
    the numbers of the host's work on the same search's graph: the same labels and counts, the distances, sums
    and statistics to the rounding of the dtype (numpy's and PyTorch's exp differ in the last bit)."""
    from kernelsketch.kernels.torch_search import FUSED_ROUTES
    from kernelsketch.maps.landmark_graph import LandmarkGraph

    monkeypatch.setattr(TorchSearch, "fused_routes", lambda self: FUSED_ROUTES)  # (CUDA's, on PyTorch's CPU)
    rng = np.random.default_rng(7)
    X = (3.0 * rng.normal(size=(12000, 5))).astype(dtype)
    g = LandmarkGraph(
        3.0 * rng.normal(size=(150, 5)),
        n_neighbors=7,
        bandwidth=bandwidth,
        search=TorchSearch("cpu", block_rows=2500),  # (several sub-blocks, the last one short)
        projection=rng.normal(size=(150, 4)),
        unit_rows=unit_rows,
    )
    E = g.embed_graph(*g.graph(X))
    C = E[np.argsort(E[:, 0])[[0, 2400, 4800, 7200, 9600, 11999]]]  # (centres spread over the embedded rows)
    host = g.assign_graph(*g.graph(X), C, dtype)
    dev = g.assign_searched(X, C, dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_array_equal(dev[0], host[0])
    np.testing.assert_allclose(dev[1], host[1], rtol=rtol, atol=rtol)
    np.testing.assert_allclose(dev[2], host[2], rtol=rtol)
    np.testing.assert_array_equal(dev[3], host[3])
    assert len(set(host[0].tolist())) == 6  # (every centre has rows: the sums are all compared)
    # the next pass's centres (the same searcher: what it keeps of the last pass is not reused)
    np.testing.assert_array_equal(
        g.assign_searched(X, C[::-1], dtype)[0], g.assign_graph(*g.graph(X), C[::-1], dtype)[0]
    )
    G, degrees, n = g.statistics(*g.graph(X))
    G_dev, degrees_dev, n_dev = g.rows_statistics(X)
    np.testing.assert_allclose(G_dev, G.toarray() if hasattr(G, "toarray") else G, rtol=rtol, atol=rtol * 1e-3)
    np.testing.assert_allclose(degrees_dev, degrees, rtol=rtol)
    assert n_dev == n == 12000
    with pytest.raises(ValueError, match="4 columns"):
        g.assign_searched(X, C[:, :3], dtype)


def test_the_device_does_each_blocks_whole_work(blobs, monkeypatch):
    """With a CUDA searcher the fit pass's statistics and the assignment run there as one route each: no graph
    of their rows comes back to the host, and none is kept (only k-means' seeding sample is searched and embedded
    on the host, as the labeling needs its graph)."""
    from kernelsketch.kernels.torch_search import FUSED_ROUTES

    assert TorchSearch("cpu").fused_routes() == ()  # (PyTorch's CPU: the host's sweeps, the graph kept)
    monkeypatch.setattr(TorchSearch, "fused_routes", lambda self: FUSED_ROUTES)  # (CUDA's, on PyTorch's CPU)
    X, y = blobs
    routed = {"landmark_assign": 0, "landmark_statistics": 0}
    landmark_rows = []
    for name in routed:
        real = getattr(TorchSearch, name)

        def spy(self, X, *a, _real=real, _name=name, **kw):
            routed[_name] += X.shape[0]
            return _real(self, X, *a, **kw)

        monkeypatch.setattr(TorchSearch, name, spy)
    real_search = TorchSearch.search

    def search_spy(self, X, r):
        if self.n_points_ > 6:  # (the landmarks, not k-means' centres)
            landmark_rows.append(X.shape[0])
        return real_search(self, X, r)

    monkeypatch.setattr(TorchSearch, "search", search_spy)
    res = ks.cluster_file(X, 6, device="cpu", init_size=1000, random_state=0)
    assert adjusted_rand_score(y, res.labels) >= 0.99
    assert routed == {"landmark_assign": 6000, "landmark_statistics": 6000}
    assert landmark_rows == [1000]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_row_minima_selection_is_topks(dtype):
    """``select="min"`` (r row minima, each masked before the next: the CUDA default for few neighbours) finds
    the neighbours and distances ``torch.topk`` finds, rows ascending, ties included (integer grid points)."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, size=(2000, 3)).astype(dtype)  # (many tied distances)
    L = rng.integers(0, 4, size=(60, 3)).astype(np.float64)
    for r in (1, 5, 60):
        d_min, i_min = TorchSearch("cpu", select="min", block_rows=700).build(L).search(X, r)
        d_top, i_top = TorchSearch("cpu", select="topk", block_rows=700).build(L).search(X, r)
        np.testing.assert_array_equal(d_min, d_top)
        assert np.all(np.diff(d_min, axis=1) >= 0)
        Xc = X.astype(np.float64)
        exact = ((Xc[:, None, :] - L[None, :, :]) ** 2).sum(axis=2)
        np.testing.assert_allclose(np.take_along_axis(exact, i_min, axis=1), d_min, atol=1e-5)  # (each its own)
        assert all(len(set(row)) == r for row in i_min.tolist())  # (no landmark twice)
    with pytest.raises(ValueError, match="select must be one of"):
        TorchSearch("cpu", select="heap").build(L)
