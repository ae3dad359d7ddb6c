"""Is the approximation any good?  :func:`diagnose` measures it on a seeded sample of the data.

On a uniform sample of at most ``sample_size`` rows (read by index from a file, an
array or a Dask array, so memory is bounded whatever the input size) it forms the
exact kernel matrix once and reports:

* the spectrum of the centred Gram (``eigenvalues``, divided by the sample size),
  its effective dimension ``(sum lambda)^2 / sum lambda^2`` and its eigengaps;
* the fraction of the centred Gram's trace that ranks 1, 2, 5, 10, ... capture
  (``captured_trace``): the best any rank-r method can do on this sample;
* the relative Gram errors, spectral and Frobenius, of Nystroem, SubsampleKPCA,
  random Fourier features and StreamingKPCA at the requested sizes, fitted on the
  sample and compared with the exact Gram of the sample (uncentred for the maps of
  ``K``, centred for SubsampleKPCA, whose ``Y Y^T`` approximates ``H K H``);
* a bandwidth sweep (0.25x to 4x the chosen bandwidth, the heuristics marked) with
  the trace captured at a few ranks;
* a recommendation: the smallest number of Nystroem landmarks on a doubling grid
  whose relative Frobenius error is at most ``target``, or a plain statement that
  none up to half the sample size reaches it (as many landmarks as sampled rows
  would reproduce the sample's Gram exactly and prove nothing).

With ``n_clusters=k`` it also answers the clustering question (``clustering``): what
``cluster_file`` / ``kernelsketch cluster -k k`` would do on this data and why: whether
it standardizes (the columns' magnitude spread), the landmark spectral graph for a few
``n_neighbors``, each scored by the relative eigengap of its normalized affinity at
``k``, the one it recommends, and how stable the clustering is for each ``k`` (the same
clusters from two random halves of the sample: Lange et al. 2004).

KernelJL is not in the error table: its inner products estimate ``<f, C^3 g>``
(Theorem 1), not the Gram itself, so a Gram error would not measure it; the
captured trace at its ``d`` says how much of the covariance its sketch can see.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._typing import BandwidthLike, DataLike, KernelLike
from .utils.missing_codes import MissingValueCodeWarning, describe_codes, missing_value_codes

__all__ = [
    "DiagnoseResult",
    "MissingValueCodeWarning",
    "clustering_advice",
    "diagnose",
    "missing_value_codes",
]

#: ranks at which the captured trace is reported
RANKS = (1, 2, 5, 10, 20, 50, 100, 200)
#: bandwidth multipliers of the sweep
SWEEP = (0.25, 0.5, 1.0, 2.0, 4.0)


@dataclass
class DiagnoseResult:
    """What :func:`diagnose` measured.

    Attributes
    ----------
    n_rows : int
        Rows of the input.
    sample_size : int
        Rows of the seeded uniform sample everything is measured on.
    kernel : str
    bandwidth : float or None
        The bandwidth used (resolved from the heuristic on the sample).
    heuristics : dict
        The value of each bandwidth heuristic on the sample.
    eigenvalues : ndarray
        Top eigenvalues of the centred sample Gram divided by the sample size.
    effective_dimension : float
        ``(sum lambda)^2 / sum lambda^2`` over the whole spectrum.
    eigengaps : ndarray
        ``lambda_r - lambda_{r+1}`` of ``eigenvalues``.
    captured_trace : dict
        Rank -> fraction of the centred Gram's trace its top-r eigenvalues hold.
    errors : list of dict
        One row per method: ``method``, ``size``, ``relative_spectral``,
        ``relative_frobenius``, ``seconds``.
    sweep : list of dict
        One row per bandwidth: ``bandwidth``, ``factor`` and the captured trace
        at a few ranks.
    recommendation : dict
        ``n_landmarks`` (or None), ``n_components`` (the smallest rank holding
        ``1 - target`` of the centred trace, or None), ``target``, ``text`` and
        the Nystroem error ``grid`` it was read from.
    seconds : float
    seed : int
    source : str
        The path read, or the kind of in-memory data.
    clustering : dict or None
        With ``n_clusters``: ``n_clusters``, ``standardize`` (and the ``magnitude_spread``
        that decided it), ``graphs`` (one per ``n_neighbors``: the normalized affinity's
        top eigenvalues, its relative eigengap at ``k``, connected parts), the
        recommended ``n_neighbors``, ``k_ranking`` (every candidate ``k``, best first by
        ``k_criterion``: ``"stability"``, the adjusted Rand index between the default clustering
        of two random halves of the sample, with its ``spread`` over halvings, and the
        recommended graph's relative ``eigengap`` beside it; ``"eigengap"`` alone when the sample
        is too small to halve), ``missing_value_codes`` (what :func:`missing_value_codes` finds in
        the sample) and ``text``.
    """

    n_rows: int
    sample_size: int
    kernel: str
    bandwidth: float | None
    heuristics: dict
    eigenvalues: np.ndarray
    effective_dimension: float
    eigengaps: np.ndarray
    captured_trace: dict
    errors: list
    sweep: list
    recommendation: dict
    seconds: float = 0.0
    seed: int = 0
    source: str = ""
    figures: list = field(default_factory=list)
    clustering: dict | None = None

    def to_dict(self):
        """Plain JSON-ready values."""
        out = asdict(self)
        out["eigenvalues"] = [float(v) for v in self.eigenvalues]
        out["eigengaps"] = [float(v) for v in self.eigengaps]
        out["captured_trace"] = {str(k): float(v) for k, v in self.captured_trace.items()}
        return out

    def to_json(self, **kwargs):
        """The result as a JSON document."""
        return json.dumps(self.to_dict(), **{"indent": 2, **kwargs})

    def write_report(self, folder, *, force=False):
        """Write ``report.md``, ``report.json``, ``spectrum.png``, ``errors.png`` and ``sweep.png`` into ``folder``.

        With ``n_clusters``, also ``eigengap.png``. Files are written atomically; existing
        ones are refused unless ``force``. Returns the paths.
        """
        from .io.atomic import AtomicPath

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        figures = [
            ("spectrum.png", self._plot_spectrum),
            ("errors.png", self._plot_errors),
            ("sweep.png", self._plot_sweep),
        ]
        if self.clustering is not None:
            figures.append(("eigengap.png", self._plot_eigengap))
        for name, writer in figures:
            with AtomicPath(folder / name, force=force) as tmp:
                fig = writer()
                fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
                _close(fig)
            paths.append(folder / name)
        self.figures = [p.name for p in paths]
        with AtomicPath(folder / "report.json", force=force) as tmp:
            tmp.write_text(self.to_json())
        with AtomicPath(folder / "report.md", force=force) as tmp:
            tmp.write_text(self.markdown())
        return [folder / "report.md", folder / "report.json", *paths]

    def _clustering_lines(self):
        """The report's clustering section (first: it answers what ``cluster`` would do)."""
        c = self.clustering
        lines = []
        if c is not None:
            lines += [
                f"## Clustering into k = {c['n_clusters']}",
                "",
                "| n_neighbors | relative eigengap at k | connected parts | top eigenvalues, normalized affinity |",
                "|---|---|---|---|",
            ]
            for g in c["graphs"]:
                mark = " (the default)" if g["n_neighbors"] == c["n_neighbors"] else ""
                mark += " (largest gap)" if g["n_neighbors"] == c.get("largest_gap_n_neighbors") else ""
                lines.append(
                    f"| {g['n_neighbors']}{mark} | {g['eigengap']:.3f} | {g['n_connected_components']} | "
                    + ", ".join(f"{v:.3f}" for v in g["eigenvalues"][: c["n_clusters"] + 2])
                    + " |"
                )
            if c.get("k_criterion") == "stability":
                lines += [
                    "",
                    "| k | stability: ARI between two halves' clusterings | spread (sd over halvings) | "
                    "relative eigengap |",
                    "|---|---|---|---|",
                ]
                for row in _k_table_rows(c["k_ranking"], c["n_clusters"]):
                    mark = " (asked)" if row["k"] == c["n_clusters"] else ""
                    lines.append(
                        f"| {row['k']}{mark} | {row['stability']:.3f} | {row['spread']:.3f} | {row['eigengap']:.3f} |"
                    )
            lines += ["", "![eigengap](eigengap.png)", "", c["text"], ""]
        return lines

    def markdown(self):
        """The report as Markdown (what ``report.md`` holds): the clustering answer first, then the Gram's."""
        lines = [
            f"# kernelsketch diagnose: {self.source} (seed {self.seed})",
            "",
            *self._clustering_lines(),
            "## The Gram matrix of one Gaussian kernel",
            "",
            f"{self.sample_size} of {self.n_rows} rows (uniform sample), {self.kernel} kernel, bandwidth "
            f"{_fmt(self.bandwidth)}; heuristics on the sample: "
            + ", ".join(f"{k} {_fmt(v)}" for k, v in self.heuristics.items())
            + ". This is the kernel of the embedding methods (`--method kjl`, `nystroem`, `rff`, ...) on the columns "
            "as given; `cluster`'s default does not use it: it z-scores columns in different units and joins each "
            "row to its nearest landmarks with a bandwidth of its own (the section above).",
            "",
            "## Spectrum of the centred Gram",
            "",
            f"Effective dimension {self.effective_dimension:.1f}. Fraction of the trace captured by rank r:",
            "",
            "| r | " + " | ".join(str(r) for r in self.captured_trace) + " |",
            "|---|" + "---|" * len(self.captured_trace),
            "| captured | " + " | ".join(f"{v:.3f}" for v in self.captured_trace.values()) + " |",
            "",
            "![spectrum](spectrum.png)",
            "",
            "## Gram approximation error at your sizes",
            "",
            "| method | size | relative spectral | relative Frobenius | seconds |",
            "|---|---|---|---|---|",
        ]
        for e in self.errors:
            lines.append(
                f"| {e['method']} | {e['size']} | {e['relative_spectral']:.4f} | {e['relative_frobenius']:.4f} "
                f"| {e['seconds']:.3f} |"
            )
        lines += [
            "",
            "![errors](errors.png)",
            "",
            "## Bandwidth sweep",
            "",
            "| factor | bandwidth | " + " | ".join(f"rank {r}" for r in self.sweep[0]["captured"]) + " |",
            "|---|---|" + "---|" * len(self.sweep[0]["captured"]),
        ]
        for s in self.sweep:
            lines.append(
                f"| {s['factor']:g} | {_fmt(s['bandwidth'])} | "
                + " | ".join(f"{v:.3f}" for v in s["captured"].values())
                + " |"
            )
        lines += [
            "",
            "![sweep](sweep.png)",
            "",
            "## Recommendation",
            "",
            self.recommendation["text"],
            "",
        ]
        lines.append(f"Measured in {self.seconds:.1f} s.")
        return "\n".join(lines)

    # -- figures ---------------------------------------------------------------------------------
    def _plot_spectrum(self):
        plt = _pyplot()
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
        lam = np.maximum(self.eigenvalues, 1e-300)
        axes[0].semilogy(np.arange(1, lam.size + 1), lam, ".-", ms=3)
        axes[0].set_xlabel("rank r")
        axes[0].set_ylabel("eigenvalue / n")
        axes[0].set_title(f"spectrum (effective dimension {self.effective_dimension:.1f})", fontsize=9)
        ranks = list(self.captured_trace)
        axes[1].plot(ranks, list(self.captured_trace.values()), "o-")
        axes[1].set_xscale("log")
        axes[1].set_ylim(0, 1.02)
        axes[1].set_xlabel("rank r")
        axes[1].set_ylabel("fraction of the trace captured")
        axes[1].set_title("the best any rank-r method can do", fontsize=9)
        fig.suptitle(f"{self.kernel}, bandwidth {_fmt(self.bandwidth)}, {self.sample_size} sampled rows", fontsize=9)
        return fig

    def _plot_errors(self):
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(6.5, 3.4), layout="constrained")
        grid = self.recommendation["grid"]
        if grid:
            ax.loglog(
                [g["n_landmarks"] for g in grid],
                [g["relative_frobenius"] for g in grid],
                "o-",
                label="Nystroem, relative Frobenius, by landmark count"
                if len(grid) > 1
                else f"Nystroem, relative Frobenius (target met at the search's first size, {grid[0]['n_landmarks']})",
            )
        for e in self.errors:
            ax.scatter(
                [e["size"]],
                [max(e["relative_frobenius"], 1e-16)],
                marker="s",
                zorder=3,
                label=f"{e['method']} (size {e['size']})",
            )
        ax.axhline(self.recommendation["target"], color="k", ls="--", lw=0.8, label="target")
        ax.set_xlabel("landmarks / features")
        ax.set_ylabel("relative Gram error")
        ax.legend(fontsize=7)
        ax.set_title("Gram approximation error on the sample", fontsize=9)
        return fig

    def _plot_sweep(self):
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(6.5, 3.4), layout="constrained")
        hs = [s["bandwidth"] for s in self.sweep]
        for r in self.sweep[0]["captured"]:
            ax.semilogx(hs, [s["captured"][r] for s in self.sweep], "o-", label=f"rank {r}")
        for name, h in self.heuristics.items():
            ax.axvline(h, color="grey", lw=0.8, ls=":")
            ax.annotate(name, (h, 0.02), rotation=90, fontsize=7, color="grey")
        ax.axvline(self.bandwidth, color="k", lw=1)
        ax.set_ylim(0, 1.02)
        _readable_log_ticks(ax, hs)
        ax.set_xlabel("bandwidth h")
        ax.set_ylabel("fraction of the trace captured")
        ax.legend(fontsize=7)
        ax.set_title("bandwidth sweep (black: the bandwidth used)", fontsize=9)
        return fig

    def _plot_eigengap(self):
        return _plot_eigengap_figure(self.clustering)


def _plot_eigengap_figure(c):
    plt = _pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.4), layout="constrained")  # (no label over the other panel)
    k = c["n_clusters"]
    for g in c["graphs"]:
        lam = np.asarray(g["eigenvalues"])
        style = "o-" if g["n_neighbors"] == c["n_neighbors"] else ".--"
        axes[0].plot(np.arange(1, lam.size + 1), 1.0 - lam, style, ms=4, label=f"n_neighbors {g['n_neighbors']}")
    axes[0].axvline(k + 0.5, color="k", lw=0.8, ls=":")
    axes[0].set_xlabel("index i")
    axes[0].set_ylabel("1 - lambda_i (normalized Laplacian)")
    axes[0].set_title(f"a gap after i = k = {k} means k separated groups", fontsize=9)
    axes[0].legend(fontsize=7)
    rows = sorted((r for r in c["k_ranking"] if np.isfinite(r["eigengap"])), key=lambda r: r["k"])
    ks_ = [r["k"] for r in rows]
    axes[1].bar(ks_, [r["eigengap"] for r in rows], color=["C1" if kk == k else "C0" for kk in ks_])
    axes[1].set_xlabel("k")
    axes[1].set_ylabel("relative eigengap")
    axes[1].set_title(f"the default graph (n_neighbors {c['n_neighbors']}) scored for each k", fontsize=9)
    if c.get("k_criterion") == "stability":
        rows = sorted(c["k_ranking"], key=lambda r: r["k"])
        ks_ = [r["k"] for r in rows]
        axes[2].bar(
            ks_,
            [r["stability"] for r in rows],
            yerr=[r["spread"] for r in rows],
            color=["C1" if kk == k else "C0" for kk in ks_],
            capsize=2,
        )
        axes[2].set_ylabel("ARI between two halves")
        axes[2].set_title("stability: the same clusters from either half?", fontsize=9)
    else:
        axes[2].text(0.5, 0.5, "too few rows for\nthe stability of k", ha="center", va="center")
        axes[2].set_axis_off()
    axes[2].set_xlabel("k")
    return fig


def _readable_log_ticks(ax, values):
    """Tick labels on a log x axis that never run together: decades only, or the values themselves on a short span."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    lo, hi = min(values), max(values)
    ax.xaxis.set_minor_formatter(NullFormatter())
    if hi / lo < 30:  # under a decade and a half: label a few of the swept values, no minor labels
        step = max(1, len(values) // 5)
        ax.xaxis.set_major_locator(FixedLocator(sorted(values)[::step]))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _close(fig):
    import matplotlib.pyplot as plt

    plt.close(fig)


def _fmt(v):
    return "-" if v is None else f"{v:.4g}"


def _centred(K):
    from .utils.eigen import centered_gram

    return centered_gram(K.copy())[0]


def _captured(lam, ranks):
    lam = np.clip(lam, 0.0, None)
    total = float(lam.sum())
    cum = np.cumsum(lam)
    return {int(r): (float(cum[min(r, lam.size) - 1] / total) if total > 0 else 0.0) for r in ranks}


def diagnose(
    data: DataLike,
    *,
    kernel: KernelLike = "gaussian",
    bandwidth: BandwidthLike = "percentile",
    n_landmarks: int = 200,
    n_components: int | None = None,
    n_random_features: int | None = None,
    sketch_size: int = 20,
    sample_size: int = 2000,
    target: float = 0.05,
    random_state: int = 0,
    client: Any = None,
    n_clusters: int | None = None,
    **read_options: Any,
) -> DiagnoseResult:
    """Measure how well the kernel approximations do on ``data``; returns a :class:`DiagnoseResult`.

    Parameters
    ----------
    data : path, array, MatrixSource or dask array
        Read as :func:`~kernelsketch.fit_source` reads it; only the sampled rows are gathered.
    kernel : {"gaussian", "laplacian", "cauchy"}
    bandwidth : float or {"percentile", "median", "mean_sq"}
        Resolved on the sample.
    n_landmarks : int
        Landmarks of Nystroem and SubsampleKPCA (capped at the sample size).
    n_components : int, optional
        Rank of Nystroem and SubsampleKPCA, components of StreamingKPCA (default: all that the sizes allow).
    n_random_features : int, optional
        Random features of RFF and StreamingKPCA (default ``n_landmarks``).
    sketch_size : int
        StreamingKPCA's Frequent Directions rows.
    sample_size : int
        Rows of the uniform sample (at most 2000 keeps the exact Gram at 32 MB and the run under a minute).
    target : float
        Relative Frobenius error the recommendation aims for.
    random_state : int
        Seeds the sample, the heuristics and every method.
    n_clusters : int >= 2, optional
        Also say how :func:`~kernelsketch.cluster_file` would cluster this data into
        ``n_clusters`` groups, and how good the landmark spectral graph looks for it
        (``clustering``; see :func:`clustering_advice`).

    Examples
    --------
    >>> import numpy as np, kernelsketch as ks
    >>> X = np.random.default_rng(0).normal(size=(3000, 4))
    >>> res = ks.diagnose(X, n_landmarks=100, sample_size=500)
    >>> sorted(res.captured_trace)[:3], res.sample_size
    ([1, 2, 5], 500)
    >>> 0.0 < res.captured_trace[10] <= 1.0
    True
    """
    from .kernels import estimate_bandwidth
    from .utils.progress import progress

    t0 = time.perf_counter()
    seed = int(random_state)
    if n_clusters is not None and (
        isinstance(n_clusters, bool) or not isinstance(n_clusters, (int, np.integer)) or n_clusters < 2
    ):
        raise ValueError(f"n_clusters must be an int >= 2, got {n_clusters!r}")
    N, X, sparse = _diagnose_sample(data, sample_size, seed, client, read_options)
    n = X.shape[0]
    heuristics = {
        name: float(estimate_bandwidth(X, name, random_state=seed)) for name in ("percentile", "median", "mean_sq")
    }
    h = float(bandwidth) if not isinstance(bandwidth, str) else heuristics[bandwidth]
    K, lam = _gram_spectrum(X, kernel, h)
    lam_pos = np.clip(lam, 0.0, None)
    eff = float(lam_pos.sum() ** 2 / np.sum(lam_pos**2)) if lam_pos.any() else 0.0

    bar = progress(total=4 + len(SWEEP) + 7, desc="diagnose", unit="step")
    errors_of = _GramErrors(seed)
    m = int(min(n_landmarks, n))
    m_rf = int(n_random_features or m)
    errors = _method_errors(X, K, kernel, h, m, m_rf, n_components, sketch_size, seed, errors_of, bar)
    recommendation = _landmark_recommendation(X, K, kernel, h, target, lam_pos, eff, seed, errors_of, bar)
    sweep = _bandwidth_sweep(X, kernel, h, bar)
    bar.close()

    clustering = None if n_clusters is None else clustering_advice(X, int(n_clusters), random_state=seed, sparse=sparse)
    top = min(n, 200)
    return DiagnoseResult(
        n_rows=N,
        sample_size=n,
        kernel=str(kernel),
        bandwidth=h,
        heuristics=heuristics,
        eigenvalues=lam[:top],
        effective_dimension=eff,
        eigengaps=-np.diff(lam[: top + 1])[:top],
        captured_trace=_captured(lam, [r for r in RANKS if r <= n]),
        errors=errors,
        sweep=sweep,
        recommendation=recommendation,
        seconds=time.perf_counter() - t0,
        seed=seed,
        source=str(data) if isinstance(data, (str, Path)) else f"{type(data).__name__} of {N} rows",
        clustering=clustering,
    )


def _diagnose_sample(data, sample_size, seed, client, read_options):
    """``(N, X, sparse)``: the source's row count, a seeded uniform sample of ``sample_size`` rows (dense float64)
    and whether the source is sparse (``cluster`` neither z-scores nor looks for missing-value codes in sparse data)."""
    from .maps.landmarks import sample_row_indices
    from .out_of_core import open_engine

    engine = open_engine(data, client=client, **read_options)
    if engine.n_rows is None:
        engine.reduce(lambda X, _: X.shape[0], sum, desc="count rows")
    N = int(engine.n_rows)
    if N < 3:
        raise ValueError(f"diagnose needs at least 3 rows, got {N}")
    X, _ = engine.gather(sample_row_indices(N, int(sample_size), [seed, 0xD1A6]))
    sparse = bool(getattr(engine, "sparse", False) or hasattr(X, "toarray"))
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
    return N, np.asarray(X, dtype=np.float64), sparse


def _gram_spectrum(X, kernel, h):
    """The sample's Gram and the eigenvalues of its centred version over n, largest first."""
    import scipy.linalg

    from .kernels import pairwise_kernel

    K = pairwise_kernel(X, kernel=kernel, bandwidth=h).astype(np.float64, copy=False)
    lam = scipy.linalg.eigh(_centred(K), eigvals_only=True, check_finite=False)[::-1] / X.shape[0]
    return K, lam


class _GramErrors:
    """Relative spectral and Frobenius errors of ``Y Y^T`` against a Gram; each Gram's own norms computed once."""

    def __init__(self, seed):
        self.seed, self.norms = seed, {}

    def __call__(self, G, Y, key):
        from .metrics import gram_residual_norms

        if key not in self.norms:  # the Gram's own norms, once per target (its residual against Y = 0)
            self.norms[key] = gram_residual_norms(G, np.zeros((G.shape[0], 0)), random_state=self.seed)
        spec, frob = gram_residual_norms(G, Y, random_state=self.seed)
        return spec / self.norms[key][0], frob / self.norms[key][1]


def _method_errors(X, K, kernel, h, m, m_rf, r, sketch_size, seed, errors_of, bar):
    """The Gram error of each method at the user's sizes (Nystroem, SubsampleKPCA, RFF, StreamingKPCA), timed."""
    from .decomposition import StreamingKPCA, SubsampleKPCA
    from .maps import Nystroem, RandomFourierFeatures

    def nystroem():
        return Nystroem(n_landmarks=m, n_components=r, kernel=kernel, bandwidth=h, random_state=seed).fit_transform(X)

    def subsample_kpca():
        # its map is centred on the landmarks' mean; centring the columns on the sample's makes
        # Y Y^T an approximation of H K H exactly (the offsets are rank-one terms H removes)
        Y = SubsampleKPCA(n_components=r, n_landmarks=m, kernel=kernel, bandwidth=h, random_state=seed).fit_transform(X)
        return Y - Y.mean(axis=0)

    ell = int(min(sketch_size, m_rf))
    methods = [
        ("Nystroem", m, nystroem, K, "K"),
        ("SubsampleKPCA (centred)", m, subsample_kpca, _centred(K), "Kc"),
        (
            "RandomFourierFeatures",
            m_rf,
            lambda: RandomFourierFeatures(m_rf, kernel=kernel, bandwidth=h, random_state=seed).fit_transform(X),
            K,
            "K",
        ),
        (
            "StreamingKPCA",
            m_rf,
            lambda: (
                StreamingKPCA(
                    n_components=None if r is None else min(r, ell),
                    n_random_features=m_rf,
                    sketch_size=ell,
                    kernel=kernel,
                    bandwidth=h,
                    random_state=seed,
                )
                .fit(X)
                .gram_factor(X)
            ),
            K,
            "K",
        ),
    ]
    errors = []
    for name, size, fit_y, target_K, key in methods:
        t = time.perf_counter()
        spec, frob = errors_of(target_K, np.asarray(fit_y(), dtype=np.float64), key)
        errors.append(
            {
                "method": name,
                "size": size,
                "relative_spectral": spec,
                "relative_frobenius": frob,
                "seconds": time.perf_counter() - t,
            }
        )
        bar.update(1)
    return errors


def _landmark_recommendation(X, K, kernel, h, target, lam_pos, eff, seed, errors_of, bar):
    """Nystroem on a doubling grid of landmarks up to half the sample, and the rank the target needs."""
    from .maps import Nystroem

    n = X.shape[0]
    # up to half the sample: landmarks that are the whole sample reproduce its Gram exactly and say nothing
    grid = []
    cap = max(2, n // 2)
    size = 25
    while True:
        size = min(size * 2, cap)
        Y = Nystroem(n_landmarks=size, kernel=kernel, bandwidth=h, random_state=seed).fit_transform(X)
        spec, frob = errors_of(K, Y, "K")
        grid.append({"n_landmarks": size, "relative_spectral": spec, "relative_frobenius": frob})
        bar.update(1)
        if frob <= target or size >= cap:
            break
    hit = next((g for g in grid if g["relative_frobenius"] <= target), None)
    if hit is not None:
        text = (
            f"Nystroem reaches a relative Frobenius error of {hit['relative_frobenius']:.3f} <= {target:g} "
            f"with n_landmarks = {hit['n_landmarks']} on this sample; use at least that many landmarks "
            f"(and as many random features for a similar error with RFF, which typically needs more)."
        )
    else:
        text = (
            f"No size up to {cap} landmarks (half the {n}-row sample) reaches a relative Frobenius error of {target:g} "
            f"(best {grid[-1]['relative_frobenius']:.3f}): at this bandwidth the kernel matrix has a slowly "
            f"decaying spectrum (effective dimension {eff:.1f}); a larger bandwidth, or a larger target, is "
            "needed. The bandwidth sweep shows how the captured trace moves."
        )
    # the rank a map needs: the smallest r whose top-r eigenvalues hold 1 - target of the centred trace
    frac = np.cumsum(lam_pos) / lam_pos.sum() if lam_pos.any() else np.zeros(1)
    rank_needed = int(np.searchsorted(frac, 1.0 - target) + 1) if frac[-1] >= 1.0 - target else None
    if rank_needed is not None:
        text += (
            f" A rank-r embedding (n_components / -d) needs r >= {rank_needed} to hold {1 - target:.0%} of the "
            "centred Gram's trace on this sample."
        )
    return {
        "n_landmarks": None if hit is None else hit["n_landmarks"],
        "n_components": rank_needed,
        "target": float(target),
        "text": text,
        "grid": grid,
    }


def _bandwidth_sweep(X, kernel, h, bar):
    """The centred trace the top 1, 5, 20 eigenvalues capture at each bandwidth factor of :data:`SWEEP`."""
    import scipy.linalg

    from .kernels import pairwise_kernel

    sweep = []
    sweep_ranks = [rr for rr in (1, 5, 20) if rr <= X.shape[0]]
    for f in SWEEP:
        Kf = pairwise_kernel(X, kernel=kernel, bandwidth=h * f).astype(np.float64, copy=False)
        lf = scipy.linalg.eigh(_centred(Kf), eigvals_only=True, check_finite=False)[::-1]
        sweep.append({"factor": f, "bandwidth": h * f, "captured": _captured(lf, sweep_ranks)})
        bar.update(1)
    return sweep


#: n_neighbors of the landmark graph that ``clustering_advice`` compares (10 is the default)
NEIGHBOR_GRID = (5, 10, 20, 40)
#: the default's n_neighbors, which the advice keeps (:data:`POOL_RECORD`)
DEFAULT_NEIGHBORS = 10
#: what the 48-set pool measured of choosing n_neighbors by the relative eigengap (candidate "D5 r by eigengap")
#: against the fixed default ("C0 default"): ``benchmarks/results/cluster-pool.csv`` (a test reads it back)
POOL_RECORD = {
    "sets": 48,
    "by_eigengap": 0.672,
    "default": 0.717,
    "source": "benchmarks/results/cluster-pool.md, D5 against C0",
}
#: rows of the k-ranking table in the report: the most stable k and the one asked, whatever the candidate count
K_TABLE_ROWS = 8


#: candidate k of the stability ranking: 2 .. max(k + 5, STABILITY_K_MAX)
STABILITY_K_MAX = 10
#: random halvings per candidate k
STABILITY_PAIRS = 5
#: what the choose-k benchmark measured (``benchmarks/results/choose-k.csv``; a test reads it back): picks within 1
#: of the true k on its tuning and its confirmation half, 18 samples each
STABILITY_RECORD = "within 1 of the true k on 14 of 18 tuning and 12 of 18 confirmation samples of 12 labelled sets"
#: the same for the relative eigengap (used when the sample is too small to halve)
EIGENGAP_RECORD = "within 1 of the true k on 6 of 18 tuning and 9 of 18 confirmation samples of 12 labelled sets"


def _k_table_rows(ranking, asked, n=K_TABLE_ROWS):
    """The rows of the k table: the ``n`` most stable k and the one asked, in order of k."""
    keep = {row["k"] for row in ranking[:n]} | {asked}
    return sorted((row for row in ranking if row["k"] in keep), key=lambda r: r["k"])


def _stability_ranking(X, n_clusters, random_state):
    """``[{"k", "stability", "spread"}]`` best first (:func:`~kernelsketch.cluster.stability.clustering_stability`),
    or None when the sample is too small for two halves of more than k rows."""
    from .cluster.stability import clustering_stability

    k_hi = min(max(n_clusters + 5, STABILITY_K_MAX), X.shape[0] // 2 - 1)
    if k_hi < max(2, n_clusters):
        return None
    res = clustering_stability(X, range(2, k_hi + 1), n_pairs=STABILITY_PAIRS, random_state=random_state)
    spread = dict(zip(res.ks, res.ari.std(axis=0), strict=True))
    return [dict(row, spread=float(spread[row["k"]])) for row in res.ranking("ari")]


def _advice_text(n_clusters, spread, standardize, m, graphs, best, ranking, codes, criterion="eigengap", sparse=False):
    """The prose of :func:`clustering_advice`: what ``cluster -k`` would do, and what to watch for."""
    from .out_of_core import UNIT_SPREAD

    why = (
        "sparse input: the columns are left unscaled (z-scoring would make them dense) and not searched for "
        "missing-value codes"
        if sparse
        else f"the columns' magnitudes spread over a factor {spread:.3g} > {UNIT_SPREAD:g}: z-scored first"
        if standardize
        else f"the columns' magnitudes spread over a factor {spread:.3g} <= {UNIT_SPREAD:g}: not standardized"
    )
    text = (
        f"`kernelsketch cluster -k {n_clusters}` (the default, landmark spectral clustering; how it compares with "
        f"k-means on labelled data: docs/clustering_quality.md) would use: {why}; "
        f"{m} landmarks on this sample, the local bandwidth (each row's distance to its n_neighbors-th nearest "
        f"landmark). Of n_neighbors {[g['n_neighbors'] for g in graphs]}, {best['n_neighbors']} gives the largest "
        f"relative eigengap at k = {n_clusters} ({best['eigengap']:.3f}; 1 = perfectly separated groups, "
        "0 = no gap)"
    )
    text += (
        f". No clear choice of n_neighbors follows from it: on the {POOL_RECORD['sets']}-set pool, n_neighbors chosen "
        f"this way gave a mean adjusted Rand index of {POOL_RECORD['by_eigengap']:.3f} against "
        f"{POOL_RECORD['default']:.3f} for the fixed default 10 ({POOL_RECORD['source']}), so keep the default "
        "unless labels of your own say otherwise."
    )
    top_k = ranking[0]["k"]
    if criterion == "stability":
        mine = next((row for row in ranking if row["k"] == n_clusters), None)
        top = ranking[0]
        text += (
            f" Stability (the same clustering from two random halves of the sample, {STABILITY_PAIRS} times; "
            f"adjusted Rand index between them, 1 = identical): k = {n_clusters} gives "
            + (f"{mine['stability']:.2f} ± {mine['spread']:.2f}" if mine else "(not scored)")
        )
        if top_k != n_clusters and mine is not None and top["stability"] - mine["stability"] > mine["spread"]:
            text += (
                f", k = {top_k} the most stable, {top['stability']:.2f} ± {top['spread']:.2f}: the data may hold "
                f"{top_k} rather than {n_clusters} stable groups (classes need not be clusters; this criterion was "
                f"{STABILITY_RECORD}: a guide, not a verdict)."
            )
        elif top_k != n_clusters:
            text += (
                f"; k = {top_k} scores {top['stability']:.2f}, within the spread over halvings: k = {n_clusters} is "
                "about as stable as any."
            )
        else:
            text += f", the most stable of k = 2 .. {max(r['k'] for r in ranking)}."
    elif top_k != n_clusters:
        text += (
            f" The spectrum's largest relative gap is at k = {top_k} ({ranking[0]['eigengap']:.3f}): the data may "
            f"hold {top_k} rather than {n_clusters} well-separated groups (the eigengap was {EIGENGAP_RECORD}: "
            "check with what you know of the data)."
        )
    if best["n_connected_components"] > n_clusters:
        text += (
            f" The graph has {best['n_connected_components']} disconnected parts, more than k: isolated groups "
            "(outliers, duplicated rows) will take clusters of their own."
        )
    if codes:
        listed = describe_codes(codes)
        text += (
            f" Missing-value codes? {listed}. Rows sharing such a code are far from all others and tend to take a "
            "cluster of their own (the benchmark's diabetes set, and this graph, which is built on the rows as they "
            "are). `kernelsketch cluster` warns of them and clusters the rows as given; --missing-codes impute reads "
            "each code as its column's median, as sklearn.impute.SimpleImputer(missing_values=CODE, "
            "strategy='median') on those columns would."
        )
    return text


def clustering_advice(X, n_clusters, *, random_state=0, n_landmarks=1000, neighbor_grid=NEIGHBOR_GRID, sparse=False):
    """How ``cluster_file(X, n_clusters)`` would cluster ``X`` (a sample, in memory), and how well it can.

    Standardizes as the driver's default does (``standardize="auto"``: when the columns'
    magnitudes spread over more than :data:`~kernelsketch.out_of_core.UNIT_SPREAD`), fits
    the default embedding (:class:`~kernelsketch.maps.LandmarkSpectralEmbedding`, local
    bandwidth) for each ``n_neighbors`` in ``neighbor_grid`` and scores each graph by the
    relative eigengap of its normalized affinity at ``k``
    (:func:`~kernelsketch.metrics.relative_eigengap`); the advice keeps the default ``n_neighbors``
    (10) whatever the gaps say, because on the 48-set pool choosing it by the largest gap did worse
    than the fixed default (:data:`POOL_RECORD`).  Other ``k`` are ranked by stability
    (:func:`~kernelsketch.cluster.stability.clustering_stability`: the default clustering of
    two random halves, compared on one of them), which ``benchmarks/results/choose-k.md`` chose
    over the relative eigengap by a tuning / confirmation protocol: a guide, not a verdict.

    Returns
    -------
    dict
        See :attr:`DiagnoseResult.clustering`.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from kernelsketch.diagnostics import clustering_advice
    >>> X, _ = make_blobs(600, centers=[[0, 0], [6, 0], [0, 6]], cluster_std=0.5, random_state=0)
    >>> advice = clustering_advice(X, 3)
    >>> advice["k_ranking"][0]["k"]
    3
    """
    from .maps.landmark_spectral import LandmarkSpectralEmbedding
    from .metrics import relative_eigengap
    from .out_of_core import UNIT_SPREAD, magnitude_spread

    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if n_clusters >= n:
        raise ValueError(f"n_clusters={n_clusters} must be < the {n} sampled rows")
    # as cluster does: sparse data is neither searched for missing-value codes nor z-scored (it would become dense)
    codes = [] if sparse else missing_value_codes(X)
    spread = magnitude_spread(np.abs(X).max(axis=0))
    standardize = bool(spread > UNIT_SPREAD) and not sparse
    if standardize:
        from sklearn.preprocessing import StandardScaler

        X = StandardScaler().fit_transform(X)
    m = int(min(n_landmarks, n))
    graphs = []
    import warnings

    grid = [r for r in neighbor_grid if r <= m] or [m]  # a sample smaller than the grid: every landmark
    for r in grid:
        with warnings.catch_warnings():  # a disconnected graph is reported in the table, not warned twice
            warnings.simplefilter("ignore")
            emb = LandmarkSpectralEmbedding(
                n_components=n_clusters, n_landmarks=m, n_neighbors=r, random_state=random_state
            ).fit(X)
        lam = np.asarray(emb.eigenvalues_, dtype=np.float64)
        graphs.append(
            {
                "n_neighbors": int(r),
                "eigenvalues": [float(v) for v in lam],
                "eigengap": float(relative_eigengap(lam, n_clusters)),
                "n_connected_components": int(emb.n_connected_components_),
            }
        )
    best = max(graphs, key=lambda g: g["eigengap"])
    advised = next((g for g in graphs if g["n_neighbors"] == DEFAULT_NEIGHBORS), best)  # (see POOL_RECORD)
    lam = np.asarray(advised["eigenvalues"])
    gaps = {kk: float(relative_eigengap(lam, kk)) for kk in range(2, lam.size)}
    stability = _stability_ranking(X, n_clusters, random_state)
    if stability is not None:
        ranking = [dict(row, eigengap=gaps.get(row["k"], float("nan"))) for row in stability]
        criterion = "stability"
    else:  # too few rows for two halves of more than k rows: the spectrum alone
        ranking = sorted(({"k": kk, "eigengap": g} for kk, g in gaps.items()), key=lambda row: -row["eigengap"])
        criterion = "eigengap"
    text = _advice_text(n_clusters, spread, standardize, m, graphs, best, ranking, codes, criterion, sparse)
    return {
        "n_clusters": int(n_clusters),
        "missing_value_codes": codes,
        "standardize": standardize,
        "magnitude_spread": float(spread),
        "n_landmarks": m,
        "graphs": graphs,
        "n_neighbors": advised["n_neighbors"],
        "largest_gap_n_neighbors": best["n_neighbors"],
        "k_ranking": ranking,
        "k_criterion": criterion,
        "text": text,
    }
