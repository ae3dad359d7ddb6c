"""``embed`` / ``fit`` / ``transform`` on Dask: ``--scheduler``, ``--workers`` and shard directories.

The data never comes to this process: it is read by the workers as one
chunk per shard (:func:`kernelsketch.distributed.read_shards`), the model is
fitted with :func:`kernelsketch.distributed.fit`, and the embedding comes
back a few blocks at a time, written in row order.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import numpy as np

from . import pipeline
from .ui import UsageError

#: output blocks computed concurrently while writing (bounds the client's memory)
WINDOW = 4


def wants_dask(args) -> bool:
    """True when the command must run on Dask (a flag given, or a directory of shards)."""
    return bool(getattr(args, "scheduler", None) or getattr(args, "workers", None)
                or Path(args.input).expanduser().is_dir())


@contextlib.contextmanager
def _client(args):
    if args.scheduler and args.workers:
        raise UsageError("give --scheduler ADDRESS or --workers N, not both")
    if not (args.scheduler or args.workers):
        yield None  # a directory of shards without a cluster: dask's local threads
        return
    from ..distributed import connect

    with connect(args.scheduler, args.workers) as client:
        yield client


def _open(args):
    from ..distributed import read_shards

    if args.format not in (None, "npy", "parquet"):
        raise UsageError("--scheduler/--workers read .npy or Parquet shards only")
    columns = [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns else None
    return read_shards(args.input, columns=columns, label_column=args.label_column,
                       dtype=np.float32 if args.dtype == "float32" else None)


def _write(Z, args, ui):
    import dask

    writer = pipeline.LazyWriter(args.output, force=args.force, protect=[args.input])
    t0 = time.perf_counter()
    n = 0
    blocks = [Z.blocks[i] for i in range(Z.numblocks[0])]
    try:
        with ui.progress(total=Z.shape[0] if not np.isnan(Z.shape[0]) else None, desc="transform") as bar:
            for start in range(0, len(blocks), WINDOW):
                for part in dask.compute(*blocks[start:start + WINDOW]):
                    if writer.opened is None:
                        writer.open(part.shape[1], part.dtype)
                    writer.opened.write(part)
                    n += part.shape[0]
                    bar.update(part.shape[0])
    except BaseException:
        if writer.opened is not None:
            writer.opened.abort()
        raise
    if writer.opened is not None:
        writer.opened.close()
    seconds = time.perf_counter() - t0
    ui.say(f"wrote {n} x {Z.shape[1]} embedding to {args.output} in {seconds:.2f} s")
    ui.record(output=str(args.output), shape=[n, int(Z.shape[1])], transform_seconds=round(seconds, 4))


def embed(args, ui, *, save_only=False, model=None):
    """``embed``/``fit`` (``model`` None) or ``transform`` (a loaded model) on Dask."""
    from ..distributed import fit, transform

    if getattr(args, "plot", None):
        raise UsageError("--plot is not supported with --scheduler/--workers or a shard directory")
    with _client(args) as client:
        X = _open(args)
        ui.say(f"{args.input}: {X.numblocks[0]} shard(s), {X.shape[1]} features, {X.shape[0]} rows"
               + (f" on {client.scheduler.address}" if client is not None else " (local threads)"))
        if model is None:
            est = pipeline.build_estimator(args.method, kernel=args.kernel, bandwidth=args.bandwidth, dim=args.dim,
                                           landmarks=args.landmarks, seed=args.seed)
            t0 = time.perf_counter()
            fit(est, X, fit_rows=max(args.fit_rows, 2))
            seconds = time.perf_counter() - t0
            ui.say(f"fitted {type(est).__name__} on {X.shape[0]} rows with dask in {seconds:.2f} s")
            ui.record(command="save" if save_only else "embed", input=str(args.input), method=args.method,
                      estimator=type(est).__name__, n_rows=int(X.shape[0]), fit_seconds=round(seconds, 4),
                      dask=True)
            if args.save:
                from ..persistence import save

                save(est, args.save, overwrite=args.force)
                ui.say(f"model saved to {args.save}")
                ui.record(model=str(args.save))
            if save_only:
                return 0
        else:
            est = model
            ui.record(command="transform", model=str(args.model), input=str(args.input),
                      estimator=type(est).__name__, dask=True)
        _write(transform(est, X, client=client), args, ui)
    return 0
