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

from ..io import check_output_path, output_format
from . import pipeline
from .ui import UsageError


def _check_outputs(args, outputs, inputs):
    """Fail before any work: suffixes, existing files, outputs equal to an input or to each other."""
    paths = [p for p in outputs if p is not None]
    resolved = [Path(p).expanduser().resolve() for p in paths]
    if len(set(resolved)) != len(resolved):
        raise UsageError(f"the same file is given for two outputs: {[str(p) for p in paths]}")
    for p in paths:
        check_output_path(p, force=args.force, protect=inputs)


def _check_output_folder(folder, *, force):
    """Before any work: an output folder must not be a file, nor (without ``force``) hold files already."""
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"output {str(folder)!r} is a file; -o takes a folder")
    if not force and folder.is_dir() and any(folder.iterdir()):
        raise UsageError(f"output folder {str(folder)!r} already holds files; pass --force to write over them")


def _check_suffix(path):
    try:
        output_format(path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _say_fit(ui, engine, fit):
    from ..out_of_core import FitResult

    assert isinstance(fit, FitResult)
    extra = []
    if fit.n_landmarks is not None:
        extra.append(f"n = {fit.n_landmarks} landmarks")
    if fit.bandwidth is not None:
        extra.append(f"bandwidth h = {fit.bandwidth:.6g}")
    how = {
        "landmarks": f"landmarks from {fit.fit_rows} rows read",
        "stream": "one pass of partial_fit",
        "random_features": "random features",
        "kernel_kmeans": f"k-means on {fit.fit_rows} rows",
        "landmarks_then_pass": f"landmarks from {fit.fit_rows} rows read, one pass of graph statistics",
        "embedding_then_sample": f"landmarks from {fit.fit_rows} rows read, one pass, k-means on a sample",
        "sample": f"a sample of {fit.fit_rows} rows",
    }[fit.strategy]
    if fit.landmark_choice is not None:
        ui.say(f"landmarks chosen for --landmark-target: {fit.landmark_choice.reason}")
    ui.say(
        f"fitted {type(fit.estimator).__name__} on {fit.n_rows} rows ({how}"
        + (f"; {', '.join(extra)}" if extra else "")
        + f") in {fit.seconds:.2f} s"
    )


def _spread_reason(scaler, engine):
    """Why the columns were standardized: the widest and the narrowest column's spreads, by name."""
    scale = np.asarray(scaler.scale_, dtype=np.float64)
    names = getattr(scaler, "feature_names_in_", None)
    names = list(names) if names is not None else list(engine.feature_names or range(scale.size))
    wide = int(np.argmax(scale))
    narrow = int(np.argmin(np.where(scale > 0, scale, np.inf)))
    return (
        f"their spreads differ: {names[wide]}'s standard deviation is {scale[wide] / scale[narrow]:.2g}x "
        f"{names[narrow]}'s"
    )


def _labeling_line(clusterer):
    """What labelled the rows (``--assign-labels``) and, when a rule chose among partitions, their scores."""
    what = {
        "kmeans": "k-means on the spectral embedding",
        "genie": "Genie on the landmarks, each row by its graph's vote",
        "genie_sample": "Genie on a sample of rows, each row by its landmarks' vote",
    }
    plain = {"kmeans": "k-means", "genie": "Genie", "genie_sample": "Genie on a sample"}
    own = {"kmeans": "k-means'", "genie": "Genie's", "genie_sample": "Genie-on-a-sample's"}
    chosen = clusterer.labeling_
    scores = getattr(clusterer, "labeling_scores_", None) or {"cut": clusterer.normalized_cuts_}
    line = f"labels: {what.get(chosen, chosen)}"
    if len(scores["cut"]) < 2:
        return line
    parts = []
    for chooser, by in scores.items():
        if chooser == "clusters":
            continue
        name = {"cut": "normalized cut", "dunn": "near-neighbour Dunn index"}.get(chooser, chooser)
        others = ", ".join(f"{own.get(c, c)} {v:.4f}" for c, v in by.items() if c != chosen)
        parts.append(f"{name} {by[chosen]:.4f}, {others}")
    filled = scores.get("clusters", {})
    emptier = [plain.get(c, c) for c, n in filled.items() if n < filled[chosen]]
    return line + f" ({'; '.join(parts)}" + (f"; {' and '.join(emptier)} left a cluster empty)" if emptier else ")")


#: the methods whose landmark count --landmark-target chooses (Nystroem's Gram error applies to them)
TARGET_METHODS = ("kjl", "nystroem", "subsample-kpca", "nystroem-kkm")


def _landmark_target(args):
    target = getattr(args, "landmark_target", None)
    if target is None:
        return None
    if args.landmarks is not None:
        raise UsageError("give -n/--landmarks or --landmark-target, not both")
    if args.method not in TARGET_METHODS:
        raise UsageError(f"--landmark-target applies to --method {', '.join(TARGET_METHODS)}, not {args.method}")
    return target


def _scores_line(res):
    """The labels against the label column: the adjusted Rand index first (0 at chance), then the Rand index."""
    return (
        f"adjusted Rand index {res.adjusted_rand_index:.4f}   Rand index {res.rand_index:.4f}   "
        "(against the label column)"
    )


def _predict_hint(args):
    """The ``predict`` command line that labels ``args.input`` with the model just saved, as it runs."""
    import shlex

    line = ["kernelsketch", "predict", str(args.save), str(args.input)]
    if args.label_column is not None:
        line += ["--label-column", str(args.label_column)]
    if args.columns:
        line += ["--columns", str(args.columns)]
    out = Path(args.output).with_name(Path(args.output).stem + "-predicted.csv") if args.output else "labels.csv"
    return shlex.join([*line, "-o", str(out)])


def _refuse_label_as_feature(args, engine):
    """A column named like the labels is never embedded silently: say --label-column or --columns (the library's
    rule, :func:`~kernelsketch.out_of_core.engine.label_like_columns`, in the command line's words)."""
    from ..out_of_core.engine import label_like_columns

    names = engine.feature_names
    if names is None or args.label_column is not None or args.columns:
        return
    suspects = label_like_columns(engine)
    if suspects:
        raise UsageError(
            f"column {suspects[0]!r} of {args.input} looks like the class labels; pass "
            f"--label-column {suspects[0]} to leave it out, or --columns {','.join(map(str, names))} to keep it "
            "as a feature (e.g. coordinates x,y)"
        )


def _say_input(ui, args, engine):
    _refuse_label_as_feature(args, engine)
    described = engine.describe()
    ui.say(described if described.startswith(str(args.input)) else f"{args.input}: {described}")
    names = engine.feature_names
    ui.say(
        f"features: {', '.join(map(str, names)) if names is not None else f'{engine.n_features} columns'}"
        + (f"; labels: column {args.label_column}" if args.label_column is not None else "")
    )
    ui.record(
        input=str(args.input),
        n_features=engine.n_features,
        columns=list(names) if names is not None else None,
        label_column=args.label_column,
    )


def cmd_embed(args, ui, *, save_only=False):
    """``embed`` (fit + transform to -o) and ``fit`` (fit + --save)."""
    from ..out_of_core import fit_source

    if not save_only:
        _check_suffix(args.output)  # before reading anything
    _check_outputs(args, [getattr(args, "output", None), args.save, getattr(args, "plot", None)], [args.input])
    if getattr(args, "plot", None) and pipeline.wants_dask(args):
        raise UsageError("--plot is not supported with --scheduler/--workers or a shard directory")
    est = pipeline.build_estimator(
        args.method,
        kernel=args.kernel,
        bandwidth=args.bandwidth,
        dim=args.dim,
        landmarks=args.landmarks,
        seed=args.seed,
        gamma=args.gamma,
        sketch_size=args.sketch_size,
    )
    with pipeline.engine_for(args, ui) as engine:
        _say_input(ui, args, engine)
        engine, scaler = _maybe_standardize(args, ui, engine)
        fit = fit_source(
            est, engine, fit_rows=args.fit_rows, random_state=args.seed, landmark_target=_landmark_target(args)
        )
        _say_fit(ui, engine, fit)
        ui.record(command="save" if save_only else "embed", method=args.method, engine=engine.name, **fit.to_dict())
        # the embedding first, the model last: an interrupt during the long transform leaves the
        # previous model in place; the interrupt message lists whatever was committed
        if not save_only:
            _transform_to_output(est, engine, args, ui)
        if args.save:
            from sklearn.pipeline import make_pipeline

            from ..persistence import save

            # with --standardize the model is the Pipeline (scaler, estimator): `transform` re-applies the scaling
            save(est if scaler is None else make_pipeline(scaler, est), args.save, overwrite=args.force)
            ui.wrote(args.save)
            ui.say(f"model saved to {args.save}")
            ui.record(model=str(args.save))
    return 0


def _maybe_standardize(args, ui, engine):
    """``--standardize``: one pass of column moments; the engine then reads z-scored rows."""
    if not getattr(args, "standardize", False):
        return engine, None
    from ..out_of_core import standardize_source

    engine, scaler = standardize_source(engine)
    constant = int(np.sum(scaler.scale_ == 1.0))
    ui.say(
        f"standardized {scaler.n_features_in_} columns over {int(scaler.n_samples_seen_)} rows"
        + (f" ({constant} with unit or zero spread left unscaled)" if constant else "")
    )
    ui.record(standardized=True, column_means=scaler.mean_.tolist(), column_scales=scaler.scale_.tolist())
    return engine, scaler


def _transform_to_output(est, engine, args, ui, method="transform"):
    from ..out_of_core import transform_source

    res = transform_source(
        est,
        engine,
        args.output,
        force=args.force,
        sample_rows=pipeline.PLOT_ROWS if getattr(args, "plot", None) else 0,
        random_state=args.seed,
        method=method,
        device=getattr(args, "device", None),
    )
    if res.reordered is not None:
        ui.say(f"columns matched to the model's by name (the input's order: {', '.join(res.reordered)})")
    if res.ignored_columns:
        ui.say(f"columns the model was not fitted on, left out: {', '.join(map(str, res.ignored_columns))}")
    ui.wrote(args.output)
    what = "labels" if method == "predict" else f"{res.n_rows} x {res.n_columns} embedding"
    ui.say(f"wrote {what} of {res.n_rows} rows to {args.output} in {res.seconds:.2f} s")
    if res.cluster_sizes is not None:
        ui.say(f"cluster sizes {res.cluster_sizes.tolist()}")
    if res.adjusted_rand_index is not None:
        ui.say(_scores_line(res))
    ui.record(**res.to_dict())
    if getattr(engine, "stats", None) and engine.name == "dask":
        ui.record(dask=dict(engine.stats, worker_peak_mib=engine.worker_peak_mib()))
    if getattr(args, "plot", None) and res.sample is not None:
        from .plotting import scatter_png

        Zs, ys = res.sample
        scatter_png(
            args.plot,
            Zs,
            ys,
            title=f"{getattr(args, 'method', type(est).__name__)}: {Path(args.input).name}",
            force=args.force,
            protect=[args.input],
        )
        ui.wrote(args.plot)
        ui.say(f"plot written to {args.plot}")
        ui.record(plot=str(args.plot))


def cmd_transform(args, ui, method="transform"):
    """``transform`` (the embedding of a saved model) and ``predict`` (the labels of a saved clustering)."""
    from ..persistence import load

    _check_suffix(args.output)
    _check_outputs(args, [args.output, args.plot], [args.input, args.model])
    if args.plot and pipeline.wants_dask(args):
        raise UsageError("--plot is not supported with --scheduler/--workers or a shard directory")
    est = load(args.model)
    if method == "predict" and not callable(getattr(est, "predict", None)):
        raise UsageError(
            f"{args.model} holds a {type(est).__name__}, which does not label rows; predict takes a model "
            "saved by `kernelsketch cluster --save MODEL`"
        )
    if getattr(args, "n_features", None) is None and not pipeline.wants_dask(args):
        from ..out_of_core import model_read_options
        from ..out_of_core.drivers import model_missing_rule

        # a libsvm file's largest index may be short of the model's width
        args.n_features = model_read_options(est, args.input, {"format": args.format}).get("n_features")
        args.missing = model_missing_rule(est) or "error"  # (the fitted rule for empty and NA cells)
    with pipeline.engine_for(args, ui) as engine:
        by_name = getattr(est, "feature_names_in_", None) is not None and engine.feature_names is not None
        if not by_name:  # (matched by name, the model's columns are taken and any other left out)
            _refuse_label_as_feature(args, engine)
        expected = getattr(est, "n_features_in_", None)
        if expected is not None and expected != engine.n_features and not by_name:
            raise ValueError(
                f"{args.input} has {engine.n_features} feature columns but the model "
                f"{args.model} was fitted on {expected}"
            )
        ui.record(
            command=method,
            model=str(args.model),
            input=str(args.input),
            estimator=type(est).__name__,
            engine=engine.name,
        )
        _transform_to_output(est, engine, args, ui, method=method)
    return 0


CLUSTER_METHODS = ("spectral", "kjl", "subsample-kpca", "nystroem-kkm", "kmeans")


def _cluster_embedding(args, k):
    """The embedding of ``cluster --method``: the Kernel JL paper's choices unless -d / -n say otherwise."""
    if args.sketch_size is not None:
        raise UsageError("--sketch-size applies to embed/fit --method skpca, not to cluster")
    common = dict(
        kernel=args.kernel, bandwidth=args.bandwidth, landmarks=args.landmarks, seed=args.seed, gamma=args.gamma
    )
    if args.n_neighbors is not None and args.method != "spectral":
        raise UsageError("--n-neighbors applies to --method spectral")
    selection = getattr(args, "landmark_selection", None)
    if selection is not None and args.method != "spectral":
        raise UsageError("--landmark-selection applies to --method spectral")
    search = getattr(args, "search", None)
    if search is not None and args.method != "spectral":
        raise UsageError("--search applies to --method spectral")
    if args.method == "spectral":
        if args.kernel not in (None, "gaussian") or args.gamma is not None:
            raise UsageError("--method spectral uses Gaussian affinities: --kernel and --gamma do not apply")
        if args.dim not in (None, k):
            raise UsageError(f"--method spectral keeps k = {k} eigenvectors: -d does not apply")
        est = pipeline.build_estimator(
            "spectral",
            dim=None if k == "auto" else k,  # ("auto": the clustering solves for the k it chooses)
            bandwidth=args.bandwidth,
            landmarks=args.landmarks,
            seed=args.seed,
            n_neighbors=args.n_neighbors,
        )
        if selection is not None:
            est.set_params(landmarks=selection)
        if search == "faiss":  # (a searcher object: the fit, k-means' seeding and the assignment all use it)
            from ..kernels.search import FaissSearch

            search = FaissSearch()
        return est if search is None else est.set_params(search=search)
    if args.method == "kjl":
        return pipeline.build_estimator("kjl", dim=args.dim or 10 * k, centered=True, **common)
    if args.method == "subsample-kpca":
        return pipeline.build_estimator("subsample-kpca", dim=args.dim or k, **common)
    if args.method == "nystroem-kkm":
        # kernel k-means on the rank-d Nystroem features (as NystroemKernelKMeans), landmarks "auto" by default
        if args.landmarks is None:
            common["landmarks"] = "auto"
        return pipeline.build_estimator("nystroem", dim=args.dim or min(10 * k, 200), **common)
    if any(v is not None for v in (args.dim, args.landmarks, args.kernel, args.bandwidth, args.gamma)):
        raise UsageError(
            "--method kmeans clusters the raw features: -d, -n, --kernel, --bandwidth and --gamma do not apply"
        )
    return None


def _say_preparation(ui, res, engine, standardize):
    """What ``cluster`` did to the rows before clustering them: codes, missing cells, scaling, the fit."""
    from ..utils.missing_codes import column_label

    replaced = [c for c in res.missing_codes if c["replaced"]]
    if replaced:
        ui.say(
            "missing-value codes read as their column's median: "
            + ", ".join(f"{column_label(c)}: {c['value']:g} -> {c['replacement']:g}" for c in replaced)
        )
    if res.missing_cells is not None and res.missing_cells["action"] == "drop":
        ui.say(f"{res.missing_cells['dropped']} rows with an empty or NA cell labelled -1 (--missing drop)")
    if res.scaler is not None:
        ui.say(
            f"standardized {res.scaler.n_features_in_} columns over {int(res.scaler.n_samples_seen_)} rows "
            f"({_spread_reason(res.scaler, engine)})"
        )
        ui.record(column_means=res.scaler.mean_.tolist(), column_scales=res.scaler.scale_.tolist())
    elif standardize == "auto" and getattr(engine, "sparse", False):
        ui.say("sparse columns left unscaled (z-scoring centres them, which would make them dense)")
    elif standardize == "auto":
        ui.say("columns left unscaled (their magnitudes are within 10x of each other)")
    if res.fit is not None:
        _say_fit(ui, engine, res.fit)
    if res.k_choice is not None:
        ui.say(f"-k auto chose {res.k_choice}")
    if res.clusterer is not None:
        ui.say(_labeling_line(res.clusterer))


def cmd_cluster(args, ui):
    if args.output is not None:
        _check_suffix(args.output)
    _check_outputs(args, [args.output, args.plot, args.save], [args.input])
    if args.plot and pipeline.wants_dask(args):
        raise UsageError("--plot is not supported with --scheduler/--workers or a shard directory")
    k = args.k
    if k == "auto" and args.method != "spectral":
        raise UsageError("-k auto chooses k from the spectral method's landmark graph: use --method spectral")
    if args.assign_labels != "auto" and args.method != "spectral":
        raise UsageError(f"--assign-labels applies to --method spectral, not {args.method}")
    target = _landmark_target(args)
    if args.standardize and args.no_standardize:
        raise UsageError("give --standardize or --no-standardize, not both")
    # --workers N: the local cluster starts here, its workers importing while this process imports the rest
    with pipeline.early_cluster(args):
        from ..out_of_core import cluster_file

        embedding = _cluster_embedding(args, k)
        with pipeline.engine_for(args, ui) as engine:
            _say_input(ui, args, engine)
            # (one rule for every method: each measures distances between rows)
            standardize = True if args.standardize else (False if args.no_standardize else "auto")
            ui.say(f"k = {k}, method {args.method}, seed {args.seed}")
            res = cluster_file(
                engine,
                k,
                embedding=embedding,
                standardize=standardize,
                output=args.output,
                force=args.force,
                keep_labels=False,
                init_size=args.init_size,
                lloyd_passes=args.lloyd_passes,
                fit_rows=args.fit_rows,
                random_state=args.seed,
                plot_rows=pipeline.PLOT_ROWS if args.plot else 0,
                landmark_target=target,
                missing_codes=args.missing_codes,
                device=args.device,
                assign_labels=args.assign_labels,
                missing=args.missing,
            )
            _say_preparation(ui, res, engine, standardize)
            k = res.n_clusters
            sec = res.seconds
            ui.say(
                f"clustered {res.n_rows} rows into {k} clusters in {sec['total']:.2f} s "
                f"(fit {sec['fit']:.2f} s, k-means on {res.sample_rows} sampled rows {sec['kmeans']:.2f} s, "
                f"{res.passes} Lloyd pass(es) {sec['passes']:.2f} s, assignment {sec['assign']:.2f} s); cluster sizes "
                f"{res.cluster_sizes.tolist()}"
            )
            ui.record(command="cluster", method=args.method, engine=engine.name, **res.to_dict())
            if engine.name == "dask":
                ui.record(dask=dict(engine.stats, worker_peak_mib=engine.worker_peak_mib()))
            if args.output is not None:
                ui.wrote(args.output)
                ui.say(f"labels written to {args.output}")
            if args.save:
                from ..persistence import save

                save(res.model, args.save, overwrite=args.force)
                ui.wrote(args.save)
                ui.say(f"model saved to {args.save}; to label rows with it (these or new ones): {_predict_hint(args)}")
                ui.record(model=str(args.save))
            if res.rand_index is not None:
                ui.say(_scores_line(res))
            if args.plot and res.sample is not None:
                from .plotting import scatter_png

                points, labels, axes = res.sample
                scatter_png(
                    args.plot,
                    points,
                    labels,
                    title=f"{Path(args.input).name}: {len(labels)} rows coloured by cluster ({args.method}, k={k})",
                    axes=axes,
                    force=args.force,
                    protect=[args.input],
                )
                ui.wrote(args.plot)
                ui.say(f"plot written to {args.plot}")
                ui.record(plot=str(args.plot))
        return 0


def cmd_diagnose(args, ui):
    from ..diagnostics import diagnose

    if not 0 < args.target < 1:
        raise UsageError("--target must be a relative error in (0, 1)")
    if args.output is not None:
        _check_output_folder(Path(args.output), force=True)  # a file there fails now, not after the work
    if args.output is not None and Path(args.output).is_dir():  # a new folder is created by the report
        _check_outputs(args, [Path(args.output) / "report.md", Path(args.output) / "report.json"], [args.input])
    opts = pipeline.read_options(args)
    res = diagnose(
        args.input,
        kernel=args.kernel,
        bandwidth=args.bandwidth,
        n_landmarks=args.landmarks,
        n_components=args.dim,
        sample_size=args.sample_size,
        target=args.target,
        random_state=args.seed,
        n_clusters=args.clusters,
        **{k: v for k, v in opts.items() if v is not None},
    )
    ui.say(f"{args.input}: {res.sample_size} of {res.n_rows} rows sampled (seed {res.seed})")
    if res.clustering is not None:  # the clustering answer first
        c = res.clustering
        ui.say(c["text"])
    ui.say(
        f"the Gram matrix of a {res.kernel} kernel, bandwidth {res.bandwidth:.4g}, on the columns as given (the "
        "embedding methods' kernel, not cluster's default graph): captured trace of the centred Gram: "
        + ", ".join(f"rank {r} {v:.3f}" for r, v in res.captured_trace.items())
    )
    for e in res.errors:
        ui.say(
            f"  {e['method']:<26} size {e['size']:>5}  relative Gram error: spectral {e['relative_spectral']:.4f}, "
            f"Frobenius {e['relative_frobenius']:.4f}"
        )
    ui.say(res.recommendation["text"])
    record = res.to_dict()
    if args.output is not None:
        paths = res.write_report(args.output, force=args.force)
        ui.say(f"report written to {Path(args.output) / 'report.md'} (with {', '.join(p.name for p in paths[2:])})")
        record["report"] = str(Path(args.output) / "report.md")
    ui.record(command="diagnose", **record)
    return 0


def cmd_datasets(args, ui):
    from ..datasets import list_datasets

    rows = list_datasets(verify=not args.no_verify)
    ui.say(f"{'name':<10} {'available':<9} {'checksum':<12} {'shape':<16} path")
    for r in rows:
        ui.say(
            f"{r['name']:<10} {'yes' if r['available'] else 'no':<9} {r['checksum']:<12} "
            f"{tuple(r['shape'])!s:<16} {r['path'] or '-'}"
        )
    ui.record(
        command="datasets",
        datasets=[
            {**r, "path": None if r["path"] is None else str(r["path"]), "shape": list(r["shape"])} for r in rows
        ],
    )
    return 0


def cmd_info(args, ui):
    import platform

    import scipy
    import sklearn
    from threadpoolctl import threadpool_info

    from .._config import get_config
    from .._version import __version__
    from ..datasets import shipped_datasets
    from ..kernels.tiled_gemm import tile_bytes
    from ..kernels.torch_search import available_devices
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
        "tile_kib": tile_bytes() // 1024,
        "threadpools": [
            {k: p.get(k) for k in ("user_api", "internal_api", "num_threads", "version", "filepath")} for p in pools
        ],
        "vendored_datasets": shipped_datasets(),
        **available_devices(),
    }
    for key in ("kernelsketch", "python", "platform", "numpy", "scipy", "scikit-learn", "cpu_count"):
        ui.say(f"{key:<18} {info[key]}")
    ui.say(f"{'working memory':<18} {info['working_memory_mib']:g} MiB")
    ui.say(
        f"{'kernel threads':<18} {info['kernel_threads']} (tiles of {info['tile_kib']} KiB; set with "
        "threadpoolctl or OPENBLAS_NUM_THREADS)"
    )
    for p in info["threadpools"]:
        ui.say(
            f"{p['user_api'] + ' (' + str(p['internal_api']) + ')':<18} {p['num_threads']} threads, "
            f"version {p['version']}, {p['filepath']}"
        )
    for name, state in info["vendored_datasets"].items():
        ui.say(f"{'shipped dataset':<18} {name}: {state}")
    torch_line = f"PyTorch {info['pytorch']}" if info["pytorch"] else "PyTorch not installed: pip install torch"
    ui.say(f"{'--device':<18} {', '.join(info['devices'])} ({torch_line})")
    ui.record(command="info", **info)
    return 0 if all(state == "ok" for state in info["vendored_datasets"].values()) else 1


def cmd_reproduce(args, ui):
    from ..experiments import get_reproduction

    out = Path(args.output or Path("kernelsketch-results") / args.name)
    _check_output_folder(out, force=args.force)
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
    ui.record(
        command="reproduce",
        name=args.name,
        output=str(out),
        seconds=round(seconds, 3),
        figures=figures,
        tables=sorted(result.get("tables", {})) if isinstance(result, dict) else [],
    )
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
        raise RuntimeError(
            "the benchmark suite (benchmarks/run.py) is not here: run `kernelsketch bench` from a "
            "kernelsketch checkout (it is not part of the installed package)"
        )
    ui.say(f"running benchmarks in {root}")
    return subprocess.call([sys.executable, "-m", "benchmarks.run", *args.bench_args], cwd=root)
