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


#: the quantiles of each axis that bound a plot (a few far points do not squash the rest into a corner)
BULK = (0.005, 0.995)


def _bulk_limits(ax, x, y):
    """Set the axes to the bulk of the points (:data:`BULK`, widened by a quarter) when some lie far beyond it;
    returns how many points are then outside the axes (0: the limits are left to matplotlib)."""
    limits = []
    for v in (x, y):
        lo, hi = np.quantile(v, BULK)
        pad = 0.25 * (hi - lo) if hi > lo else 1.0
        limits.append((lo - pad, hi + pad))
    (x0, x1), (y0, y1) = limits
    out = (x < x0) | (x > x1) | (y < y0) | (y > y1)
    full = max(np.ptp(x), np.ptp(y))
    bulk = max(x1 - x0, y1 - y0)
    if not out.any() or full <= 2 * bulk:  # (nothing far out: the whole data drawn)
        return 0
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    return int(out.sum())


def _same_unit(x, y, axes):
    """Whether the two axes share a unit: principal axes of one space, or two columns whose spreads are within 10x
    of each other (map coordinates, two lengths); then one unit is as long on both axes."""
    if any(str(a).startswith(("component", "PC", "principal")) for a in axes):
        return True
    sx, sy = float(np.std(x)), float(np.std(y))
    return sx > 0 and sy > 0 and max(sx, sy) / min(sx, sy) <= 10.0


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
        values = np.asarray(colors)
        names, codes = np.unique(values if values.dtype.kind in "iub" else values.astype(str), return_inverse=True)
        sc = ax.scatter(x, y, c=codes, s=4, alpha=0.7, linewidths=0, cmap="tab20" if codes.max() >= 10 else "tab10")
        if codes.max() < 20:
            sizes = np.bincount(codes, minlength=names.size)
            handles = sc.legend_elements()[0]
            legend = [f"{n} ({s:,})" for n, s in zip(names, sizes, strict=True)]  # (each cluster with its size)
            ax.legend(handles, legend, loc="best", fontsize="small", markerscale=0.8, frameon=False)
    outside = _bulk_limits(ax, x, y)
    if _same_unit(x, y, axes):  # (limits set to the bulk stay: the box takes the aspect then)
        ax.set_aspect("equal", adjustable="box" if outside else "datalim")
    ax.set_xlabel(axes[0])
    ax.set_ylabel(axes[1])
    if outside:
        title = f"{title}\n{outside:,} points beyond the axes (the bulk of the data drawn)"
    ax.set_title(title, fontsize="medium")
    fig.tight_layout()
    fmt = str(path).rsplit(".", 1)[-1].lower()
    try:
        with AtomicPath(path, force=force, protect=protect) as tmp:
            fig.savefig(tmp, format=fmt if fmt in ("png", "pdf", "svg") else "png")
    finally:
        plt.close(fig)
