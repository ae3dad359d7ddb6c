"""#54 item 2: `cluster --plot` draws the data coloured by cluster, never a constant embedding component."""

import numpy as np
import pandas as pd
from sklearn.datasets import make_blobs, make_moons
from sklearn.decomposition import PCA

import kernelsketch as ks
from kernelsketch.cli.main import main
from kernelsketch.cli.plotting import varying_columns
from kernelsketch.utils.plane import two_d_view


def test_two_columns_are_shown_as_given_with_their_names():
    X, _ = make_moons(300, noise=0.05, random_state=0)
    P, axes = two_d_view(X, ["x", "y"])
    np.testing.assert_array_equal(P, X)
    assert axes == ("x", "y")


def test_more_columns_are_shown_on_their_pca_plane():
    X, _ = make_blobs(400, n_features=6, centers=3, random_state=0)
    P, axes = two_d_view(X)
    ref = PCA(2).fit(X)
    Q = ref.transform(X)
    for j in range(2):  # (up to the sign of each axis)
        assert min(np.abs(P[:, j] - Q[:, j]).max(), np.abs(P[:, j] + Q[:, j]).max()) < 1e-8
    assert axes[0] == f"PC1 ({ref.explained_variance_ratio_[0]:.0%} of the variance)"


def test_cluster_file_keeps_the_rows_it_shows_and_their_clusters(tmp_path):
    X, _ = make_moons(3000, noise=0.05, random_state=1)
    df = pd.DataFrame(X, columns=["lon", "lat"])
    df.to_csv(tmp_path / "m.csv", index=False)
    res = ks.cluster_file(str(tmp_path / "m.csv"), 2, random_state=0, plot_rows=500, keep_labels=True)
    points, labels, axes = res.sample
    assert axes == ("lon", "lat") and points.shape == (500, 2)
    # every plotted point is a row of the file, with the cluster the run gave that row
    rows = {tuple(np.round(r, 9)): i for i, r in enumerate(X)}
    idx = np.array([rows[tuple(np.round(p, 9))] for p in points])
    np.testing.assert_array_equal(labels, res.labels[idx])
    assert idx.max() > 2000  # spread over the data, not its first rows


def test_an_embedding_plot_skips_a_constant_component():
    Z = np.column_stack([np.full(50, 1.0 + 1e-13), np.arange(50.0), np.ones(50), -np.arange(50.0)])
    assert varying_columns(Z) == [1, 3]


def test_the_cli_plot_is_of_the_data(tmp_path, monkeypatch):
    """The 6 blobs of a 2-column file are drawn as the rows themselves (the spectral embedding's first
    component is constant: drawn, the clusters stacked on a line)."""
    import kernelsketch.cli.plotting as plotting

    X, _ = make_blobs(2000, n_features=2, centers=6, cluster_std=0.5, random_state=3)
    np.save(tmp_path / "smile.npy", X)
    drawn = {}
    real = plotting.scatter_png

    def spy(path, Z, colors=None, **kw):
        drawn.update(Z=np.asarray(Z), colors=np.asarray(colors), axes=kw.get("axes"))
        return real(path, Z, colors, **kw)

    monkeypatch.setattr(plotting, "scatter_png", spy)
    png = tmp_path / "c.png"
    args = ["cluster", str(tmp_path / "smile.npy"), "-k", "6", "-o", str(tmp_path / "l.npy"), "--plot", str(png)]
    assert main(args) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert drawn["axes"] == ("column 0", "column 1")
    assert np.isin(drawn["Z"][:, 0], X[:, 0]).all() and len(np.unique(drawn["colors"])) == 6
