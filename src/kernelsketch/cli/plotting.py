"""``--plot FILE.png``: a scatter of two coordinates coloured by cluster or label (matplotlib, Agg, lazy).

``cluster`` draws the data (:func:`kernelsketch.utils.plane.two_d_view`); ``embed`` / ``transform`` draw the
embedding's first two components that are not constant.
"""

from __future__ import annotations

import numpy as np

from ..io.atomic import AtomicPath


def varying_columns(Z, n=2):
    """Indices of the first ``n`` columns of ``Z`` that are not constant (a constant one shows nothing)."""
    Z = np.asarray(Z, dtype=np.float64)
    spread = Z.max(axis=0) - Z.min(axis=0) if Z.shape[0] else np.zeros(Z.shape[1])
    scale = np.maximum(np.abs(Z).max(axis=0), np.finfo(np.float64).tiny) if Z.shape[0] else np.ones(Z.shape[1])
    return [int(j) for j in np.flatnonzero(spread > 1e-9 * scale)[:n]]


def scatter_png(path, Z, colors=None, *, title="", axes=None, force=False, protect=()):
    """Write a scatter of two columns of ``Z`` coloured by ``colors`` (labels or clusters).

    ``axes``: the two axis names, and ``Z``'s first two columns are drawn; without them, the first two
    columns that are not constant, named "component j".
    """
    try:
        import matplotlib
    except ImportError as exc:  # pragma: no cover - optional extra
        raise ImportError("--plot needs matplotlib: pip install 'kernelsketch[plot]'") from exc
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    Z = np.asarray(Z)
    if axes is None:
        cols = varying_columns(Z) or [0]
        axes = tuple(f"component {j + 1}" for j in cols) + ("",) * (2 - len(cols))
        Z = Z[:, cols]
    x = Z[:, 0]
    y = Z[:, 1] if Z.shape[1] > 1 else np.zeros_like(x)
    fig, ax = plt.subplots(figsize=(6, 5), dpi=110)
    if colors is None:
        ax.scatter(x, y, s=4, alpha=0.6, linewidths=0)
    else:
        _, codes = np.unique(np.asarray(colors).astype(str), return_inverse=True)
        sc = ax.scatter(x, y, c=codes, s=4, alpha=0.7, linewidths=0, cmap="tab20" if codes.max() >= 10 else "tab10")
        if codes.max() < 20:
            ax.legend(*sc.legend_elements(), loc="best", fontsize="small", markerscale=0.8, frameon=False)
    ax.set_xlabel(axes[0])
    ax.set_ylabel(axes[1])
    ax.set_title(title, fontsize="medium")
    fig.tight_layout()
    fmt = str(path).rsplit(".", 1)[-1].lower()
    try:
        with AtomicPath(path, force=force, protect=protect) as tmp:
            fig.savefig(tmp, format=fmt if fmt in ("png", "pdf", "svg") else "png")
    finally:
        plt.close(fig)
