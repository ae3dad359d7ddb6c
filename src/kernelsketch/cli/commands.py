"""The subcommands: each parses nothing, calls the library, reports through a UI."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ..io import check_output_path, open_matrix, output_format
from . import dask_run, pipeline
from .ui import UsageError


def _open_source(args):
    columns = None
    if args.columns:
        columns = [c.strip() for c in args.columns.split(",") if c.strip()]
    return open_matrix(args.input, format=args.format, delimiter=args.delimiter,
                       header=False if args.no_header else None, columns=columns,
                       label_column=args.label_column, dtype=np.float32 if args.dtype == "float32" else None)


def _check_outputs(args, outputs, inputs):
    """Fail before any work: suffixes, existing files, outputs equal to an input or to each other."""
    paths = [p for p in outputs if p is not None]
    resolved = [Path(p).expanduser().resolve() for p in paths]
    if len(set(resolved)) != len(resolved):
        raise UsageError(f"the same file is given for two outputs: {[str(p) for p in paths]}")
    for p in paths:
        check_output_path(p, force=args.force, protect=inputs)


def _check_suffix(path):
    try:
        output_format(path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _embed_params(args):
    return dict(kernel=args.kernel, bandwidth=args.bandwidth, dim=args.dim, landmarks=args.landmarks, seed=args.seed)


def cmd_embed(args, ui, *, save_only=False):
    """``embed`` (fit + transform to -o) and ``fit`` (fit + --save)."""
    if dask_run.wants_dask(args):
        return _dask_embed(args, ui, save_only=save_only)
    if not save_only:
        _check_suffix(args.output)  # before reading anything
    _check_outputs(args, [getattr(args, "output", None), args.save, getattr(args, "plot", None)], [args.input])
    est = pipeline.build_estimator(args.method, **_embed_params(args))
    source = _open_source(args)
    ui.say(f"{args.input}: {source.format}, {source.n_features} features"
           + (f", {source.n_rows} rows" if source.n_rows is not None else ""))
    fit = pipeline.fit_on_source(est, source, method=args.method, fit_rows=args.fit_rows, seed=args.seed, ui=ui)
    ui.say(f"fitted {type(est).__name__} on {fit['fit_rows']} of {fit['n_rows']} rows in {fit['seconds']:.2f} s")
    ui.record(command="save" if save_only else "embed", input=str(args.input), method=args.method,
              estimator=type(est).__name__, n_rows=fit["n_rows"], fit_rows=fit["fit_rows"],
              fit_seconds=round(fit["seconds"], 4))
    if args.save:
        from ..persistence import save

        save(est, args.save, overwrite=args.force)
        ui.say(f"model saved to {args.save}")
        ui.record(model=str(args.save))
    if save_only:
        return 0
    _transform_to_output(est, source, args, ui, data=fit["data"])
    return 0


def _transform_to_output(est, source, args, ui, data=None):
    writer = pipeline.LazyWriter(args.output, force=args.force, protect=[args.input])
    t0 = time.perf_counter()
    n, _, _, sample = pipeline.transform_source(est, source, make_writer=writer, ui=ui, data=data,
                                                plot=bool(args.plot), seed=args.seed)
    seconds = time.perf_counter() - t0
    width = writer.opened.n_columns if writer.opened is not None else 0
    ui.say(f"wrote {n} x {width} embedding to {args.output} in {seconds:.2f} s")
    ui.record(output=str(args.output), shape=[n, width], transform_seconds=round(seconds, 4))
    if args.plot and sample is not None:
        from .plotting import scatter_png

        Zs, ys = sample
        scatter_png(args.plot, Zs, ys, title=f"{getattr(args, 'method', type(est).__name__)}: {Path(args.input).name}",
                    force=args.force, protect=[args.input])
        ui.say(f"plot written to {args.plot}")
        ui.record(plot=str(args.plot))


def _dask_embed(args, ui, save_only):
    if not save_only:
        _check_suffix(args.output)
    _check_outputs(args, [getattr(args, "output", None), args.save], [args.input])
    return dask_run.embed(args, ui, save_only=save_only)


def cmd_transform(args, ui):
    from ..persistence import load

    _check_suffix(args.output)
    _check_outputs(args, [args.output, args.plot], [args.input, args.model])
    est = load(args.model)
    if dask_run.wants_dask(args):
        return dask_run.embed(args, ui, model=est)
    source = _open_source(args)
    expected = getattr(est, "n_features_in_", None)
    if expected is not None and expected != source.n_features:
        raise ValueError(f"{args.input} has {source.n_features} feature columns but the model "
                         f"{args.model} was fitted on {expected}")
    ui.record(command="transform", model=str(args.model), input=str(args.input), estimator=type(est).__name__)
    _transform_to_output(est, source, args, ui)
    return 0


CLUSTER_METHODS = ("kjl", "subsample-kpca", "nystroem-kkm", "kmeans")


def cmd_cluster(args, ui):
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_rand_score, rand_score

    from ..io import coerce_labels, open_writer

    if dask_run.wants_dask(args):
        raise UsageError("cluster does not run on Dask yet; use embed --scheduler/--workers, then cluster the embedding")
    _check_suffix(args.output)
    _check_outputs(args, [args.output, args.plot], [args.input])
    k = args.k
    source = _open_source(args)
    ui.say(f"{args.input}: {source.format}, {source.n_features} features; k = {k}, method {args.method}")
    t0 = time.perf_counter()
    if args.method == "kmeans":
        X, y = source.read()
        Z = X
        labels = KMeans(n_clusters=k, n_init=10, random_state=args.seed).fit_predict(X)
        fit_info = {"n_rows": X.shape[0], "fit_rows": X.shape[0]}
    else:
        if args.method == "kjl":
            est = pipeline.build_estimator("kjl", kernel=args.kernel, bandwidth=args.bandwidth,
                                           dim=args.dim or 10 * k, landmarks=args.landmarks, seed=args.seed,
                                           centered=True)
        elif args.method == "subsample-kpca":
            est = pipeline.build_estimator("subsample-kpca", kernel=args.kernel, bandwidth=args.bandwidth,
                                           dim=args.dim or k, landmarks=args.landmarks, seed=args.seed)
        else:
            est = pipeline.build_estimator("NystroemKernelKMeans", kernel=args.kernel, bandwidth=args.bandwidth,
                                           dim=args.dim, landmarks=args.landmarks, seed=args.seed, n_clusters=k)
        fit_info = pipeline.fit_on_source(est, source, method=args.method, fit_rows=args.fit_rows, seed=args.seed,
                                          ui=ui)
        if args.method == "nystroem-kkm":
            predictor = _Predictor(est)
            _, labels, y, _ = pipeline.transform_source(predictor, source, ui=ui, data=fit_info["data"], keep=True,
                                                        desc="assign clusters")
            labels = labels.ravel()
            Z = None
        else:
            _, Z, y, _ = pipeline.transform_source(est, source, ui=ui, data=fit_info["data"], keep=True,
                                                   desc="embed")
            labels = KMeans(n_clusters=k, n_init=10, random_state=args.seed).fit_predict(Z)
    seconds = time.perf_counter() - t0
    labels = labels.astype(np.int64)
    with open_writer(args.output, 1, np.int64, column_names=["cluster"], force=args.force,
                     protect=[args.input]) as w:
        w.write(labels)
    ui.say(f"clustered {labels.shape[0]} rows into {len(np.unique(labels))} clusters in {seconds:.2f} s; "
           f"labels written to {args.output}")
    ui.record(command="cluster", input=str(args.input), method=args.method, k=k, n_rows=int(labels.shape[0]),
              fit_rows=fit_info["fit_rows"], seconds=round(seconds, 4), output=str(args.output))
    if y is not None:
        y = coerce_labels(y)
        ri, ari = rand_score(y, labels), adjusted_rand_score(y, labels)
        ui.say(f"Rand index {ri:.4f}   adjusted Rand index {ari:.4f}   (against the label column)")
        ui.record(rand_index=float(ri), adjusted_rand_index=float(ari))
    if args.plot:
        from .plotting import scatter_png

        if Z is None:
            Z = _open_source(args).read()[0]
        Z = Z.toarray() if hasattr(Z, "toarray") else np.asarray(Z)
        idx = np.random.default_rng(args.seed).permutation(Z.shape[0])[: pipeline.PLOT_ROWS]
        scatter_png(args.plot, Z[idx], labels[idx], title=f"{args.method}, k={k}: {Path(args.input).name}",
                    force=args.force, protect=[args.input])
        ui.record(plot=str(args.plot))
    return 0


class _Predictor:
    """Adapter so cluster assignment streams like a transform (one column of labels)."""

    def __init__(self, est):
        self.est = est

    def __sklearn_tags__(self):
        return self.est.__sklearn_tags__()

    def transform(self, X):
        return np.asarray(self.est.predict(X)).reshape(-1, 1)


def cmd_datasets(args, ui):
    from ..datasets import list_datasets

    rows = list_datasets(verify=not args.no_verify)
    ui.say(f"{'name':<10} {'available':<9} {'checksum':<12} {'shape':<16} path")
    for r in rows:
        ui.say(f"{r['name']:<10} {'yes' if r['available'] else 'no':<9} {r['checksum']:<12} "
               f"{str(tuple(r['shape'])):<16} {r['path'] or '-'}")
    ui.record(command="datasets", datasets=[{**r, "path": None if r["path"] is None else str(r["path"]),
                                             "shape": list(r["shape"])} for r in rows])
    return 0


def cmd_info(args, ui):
    import platform

    import scipy
    import sklearn
    from threadpoolctl import threadpool_info

    from .. import __version__, get_config
    from ..kernels.tiled_gemm import TILE_BYTES
    from ..utils.threads import blas_num_threads

    pools = threadpool_info()
    info = {
        "kernelsketch": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "cpu_count": os.cpu_count(),
        "working_memory_mib": get_config()["working_memory"],
        # threads the tiled kernel blocks use (the BLAS limit, capped by the usable cores)
        "kernel_threads": blas_num_threads(),
        "tile_kib": TILE_BYTES // 1024,
        "threadpools": [{k: p.get(k) for k in ("user_api", "internal_api", "num_threads", "version", "filepath")}
                        for p in pools],
    }
    for key in ("kernelsketch", "python", "platform", "numpy", "scipy", "scikit-learn", "cpu_count"):
        ui.say(f"{key:<18} {info[key]}")
    ui.say(f"{'working memory':<18} {info['working_memory_mib']:g} MiB")
    ui.say(f"{'kernel threads':<18} {info['kernel_threads']} (tiles of {info['tile_kib']} KiB; set with "
           "threadpoolctl or OPENBLAS_NUM_THREADS)")
    for p in info["threadpools"]:
        ui.say(f"{p['user_api'] + ' (' + str(p['internal_api']) + ')':<18} {p['num_threads']} threads, "
               f"version {p['version']}, {p['filepath']}")
    ui.record(command="info", **info)
    return 0


def cmd_reproduce(args, ui):
    from ..experiments import get_reproduction

    out = Path(args.output or Path("kernelsketch-results") / args.name)
    out.mkdir(parents=True, exist_ok=True)
    try:
        run = get_reproduction(args.name)
    except ImportError as exc:
        raise RuntimeError(f"reproduction {args.name!r} is not available yet ({exc})") from exc
    ui.say(f"reproducing {args.name} into {out} (seed {args.seed}{', quick' if args.quick else ''})")
    t0 = time.perf_counter()
    if ui.quiet or ui.json:
        # the reproduction prints its parameters and tables; --quiet / --json keep stdout clean
        with contextlib.redirect_stdout(io.StringIO()):
            result = run(out, quick=args.quick, seed=args.seed, progress=False) or {}
    else:
        result = run(out, quick=args.quick, seed=args.seed, progress=ui.show_progress) or {}
    seconds = time.perf_counter() - t0
    figures = [str(f) for f in result.get("figures", [])] if isinstance(result, dict) else []
    ui.say(f"done in {seconds:.1f} s; outputs in {out}")
    for f in figures:
        ui.say(f"  figure: {f}")
    ui.record(command="reproduce", name=args.name, output=str(out), seconds=round(seconds, 3), figures=figures,
              tables=sorted(result.get("tables", {})) if isinstance(result, dict) else [])
    return 0


def find_repo_root(start=None):
    """The checkout holding ``benchmarks/run.py``: above the working directory or the package."""
    here = Path(__file__).resolve()
    for base in (Path(start or os.getcwd()).resolve(), here):
        for folder in (base, *base.parents):
            if (folder / "benchmarks" / "run.py").is_file():
                return folder
    return None


def cmd_bench(args, ui):
    root = find_repo_root()
    if root is None:
        raise RuntimeError("the benchmark suite (benchmarks/run.py) is not here: run `kernelsketch bench` from a "
                           "kernelsketch checkout (it is not part of the installed package)")
    ui.say(f"running benchmarks in {root}")
    return subprocess.call([sys.executable, "-m", "benchmarks.run", *args.bench_args], cwd=root)
