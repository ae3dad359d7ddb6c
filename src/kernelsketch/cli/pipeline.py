"""Command-line method names -> estimators (the only CLI knowledge of the library's classes).

Everything that runs is in :mod:`kernelsketch.out_of_core`: the CLI builds an
estimator from the flags, opens an engine (this process or Dask), calls the
driver and prints what it returns.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from .ui import UsageError

#: CLI method name -> estimator class exported by kernelsketch
METHODS = {
    "kjl": "KernelJL",
    "nystroem": "Nystroem",
    "kpca": "KernelPCA",
    "subsample-kpca": "SubsampleKPCA",
    "rff": "RandomFourierFeatures",
    "rf-kpca": "RFKPCA",
    "rnca": "RNCA",
    "skpca": "StreamingKPCA",
    "spectral": "LandmarkSpectralEmbedding",
}
#: rows of the plot sample
PLOT_ROWS = 20000


def estimator_class(name):
    from ..estimators import estimator_class as lookup

    try:
        return lookup(name)
    except (ImportError, ValueError) as exc:
        raise UsageError(f"{name} is not available in this installation ({exc})") from exc


def build_estimator(method, *, kernel=None, bandwidth=None, dim=None, landmarks=None, seed=0, **extra):
    """Instantiate the estimator of ``method`` with the options the user gave."""
    cls = estimator_class(METHODS[method]) if method in METHODS else estimator_class(method)
    names = set(cls().get_params(deep=False))
    params = {}
    if kernel is not None:
        params["kernel"] = kernel
    if bandwidth is not None:
        params["bandwidth"] = bandwidth
    if "random_state" in names:
        params["random_state"] = seed
    # each estimator class declares which of its parameters -d and -n set
    if dim is not None:
        if getattr(cls, "_dim_param", None) is None:
            raise UsageError(f"-d/--dim does not apply to --method {method}")
        params[cls._dim_param] = dim
    if landmarks is not None:
        if getattr(cls, "_size_param", None) is None:
            raise UsageError(f"-n/--landmarks does not apply to --method {method}")
        if cls._size_param in params and params[cls._size_param] != landmarks:
            raise UsageError(
                f"-d {dim} and -n {landmarks} both set {cls._size_param} of --method {method} "
                "(its output is its random features); give one"
            )
        params[cls._size_param] = landmarks
    for k, v in extra.items():
        if v is None:
            continue
        if k not in names:
            raise UsageError(f"--{k.replace('_', '-')} does not apply to --method {method}")
        params[k] = v
    bad = sorted(set(params) - names)
    if bad:
        raise UsageError(f"options {bad} do not apply to --method {method}")
    return cls(**params)


def wants_dask(args) -> bool:
    """True when the command must run on Dask (a flag given, or a directory of shards)."""
    return bool(
        getattr(args, "scheduler", None) or getattr(args, "workers", None) or Path(args.input).expanduser().is_dir()
    )


def read_options(args):
    columns = None
    if getattr(args, "columns", None):
        columns = [c.strip() for c in args.columns.split(",") if c.strip()]
    import numpy as np

    opts = dict(
        format=args.format,
        columns=columns,
        label_column=args.label_column,
        dtype={"float32": np.float32, "float64": np.float64}.get(args.dtype),  # (None: the file's)
    )
    header = True if getattr(args, "header", False) else False if args.no_header else None
    n_features = getattr(args, "n_features", None)
    if not wants_dask(args):
        opts.update(delimiter=args.delimiter, header=header)
        if getattr(args, "missing", "error") != "error":  # (a text file's empty and NA cells read as missing)
            opts.update(na_values=None)
        if n_features is not None:
            opts.update(n_features=n_features)
    elif args.delimiter is not None or header is not None or n_features is not None:
        raise UsageError(
            "--delimiter/--header/--no-header/--n-features apply to text and libsvm files; "
            "--scheduler/--workers read .npy or Parquet shards"
        )
    return opts


@contextlib.contextmanager
def early_cluster(args):
    """For ``--workers N``: the local cluster started now, on a thread
    (:class:`~kernelsketch.distributed.cluster.LocalClusterStart`), so that its workers spawn and import while the
    command imports the rest (a command enters this once its own arguments are checked: a usage error never waits
    for a cluster); :func:`engine_for` connects to it.  Stopped on exit, used or not."""
    n = getattr(args, "workers", None)
    if not n or getattr(args, "scheduler", None):
        yield
        return
    from ..distributed.cluster import LocalClusterStart

    start = LocalClusterStart(n, memory_limit=getattr(args, "worker_memory", None) or "auto")
    args.cluster_start = start
    try:
        yield
    finally:
        start.close()


@contextlib.contextmanager
def engine_for(args, ui):
    """The engine the command runs on: this process, or a Dask cluster (``--scheduler`` / ``--workers``)."""
    from ..out_of_core import open_engine

    opts = read_options(args)
    if getattr(args, "worker_memory", None) is not None and not getattr(args, "workers", None):
        raise UsageError("--worker-memory sets the memory of --workers N processes (a running cluster has its own)")
    if not wants_dask(args):
        yield open_engine(args.input, **opts)
        return
    if args.scheduler and args.workers:
        raise UsageError("give --scheduler ADDRESS or --workers N, not both")
    if opts["format"] not in (None, "npy", "parquet"):
        raise UsageError("--scheduler/--workers read .npy or Parquet shards only")
    from ..distributed.engine import DaskEngine

    if not (args.scheduler or args.workers):
        yield DaskEngine.open(args.input, **opts)  # a directory of shards without a cluster: dask's local threads
        return
    from ..distributed import connect

    start = getattr(args, "cluster_start", None)
    if start is not None:  # (--workers N, started by early_cluster)
        from ..distributed._dask import import_dask

        import_dask("dask.array")  # (the engine's: imported while the workers start, not after)
        with connect(start=start) as client:
            yield DaskEngine.open(args.input, client=client, **opts)
        return
    memory = getattr(args, "worker_memory", None)
    with connect(args.scheduler, args.workers, memory_limit=memory or "auto") as client:
        yield DaskEngine.open(args.input, client=client, **opts)
