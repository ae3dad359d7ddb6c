"""``--plot FILE.png``: scatter of the first two embedding coordinates (matplotlib, Agg, lazy)."""

from __future__ import annotations

import numpy as np

from ..io.atomic import AtomicPath


def scatter_png(path, Z, colors=None, *, title="", force=False, protect=()):
    """Write a scatter of ``Z[:, 0]`` vs ``Z[:, 1]`` coloured by ``colors`` (labels or clusters)."""
    try:
        import matplotlib
    except ImportError as exc:  # pragma: no cover - optional extra
        raise ImportError("--plot needs matplotlib: pip install 'kernelsketch[plot]'") from exc
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    Z = np.asarray(Z)
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
    ax.set_xlabel("component 1")
    ax.set_ylabel("component 2" if Z.shape[1] > 1 else "")
    ax.set_title(title, fontsize="medium")
    fig.tight_layout()
    fmt = str(path).rsplit(".", 1)[-1].lower()
    try:
        with AtomicPath(path, force=force, protect=protect) as tmp:
            fig.savefig(tmp, format=fmt if fmt in ("png", "pdf", "svg") else "png")
    finally:
        plt.close(fig)
