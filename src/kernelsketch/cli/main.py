"""``kernelsketch`` command line: argument parsing, dispatch and error handling.

Exit codes: 0 success, 1 data or runtime error (bad file, impossible fit),
2 usage error (bad flags, an output that exists without ``--force`` or is
an input), 130 interrupted.  Errors are one line on stderr; ``--debug``
shows the traceback.
"""

from __future__ import annotations

import argparse
import signal
import sys

from .ui import UI, UsageError

_HEURISTICS = ("percentile", "median", "mean_sq")


def _bandwidth(value):
    if value in _HEURISTICS:
        return value
    try:
        h = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number or one of {', '.join(_HEURISTICS)}, "
                                         f"got {value!r}") from None
    if not h > 0 or h == float("inf"):
        raise argparse.ArgumentTypeError(f"bandwidth must be a positive finite number, got {value!r}")
    return h


def _int_at_least(low, what):
    def parse(value):
        try:
            n = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {what} integer, got {value!r}") from None
        if n < low:
            raise argparse.ArgumentTypeError(f"expected a {what} integer, got {value!r}")
        return n

    return parse


_positive_int = _int_at_least(1, "positive")
_nonnegative_int = _int_at_least(0, "non-negative")


def _landmarks(value):
    return value if value == "auto" else _positive_int(value)


def _seed(value):
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed must be a non-negative integer, got {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"seed must be a non-negative integer, got {value!r}")
    return n


def _kernels():
    from ..kernels.kernel_functions import KERNELS

    return sorted(KERNELS)


def build_parser():
    from .commands import CLUSTER_METHODS
    from .pipeline import METHODS

    common = argparse.ArgumentParser(add_help=False)
    g = common.add_argument_group("output control")
    g.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="no messages, no progress bars")
    g.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                   help="print a machine-readable JSON summary on stdout")
    g.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    g.add_argument("--working-memory", type=float, metavar="MIB", default=argparse.SUPPRESS,
                   help="memory budget in MiB for temporaries of chunked computations")

    inp = argparse.ArgumentParser(add_help=False)
    g = inp.add_argument_group("input")
    g.add_argument("input", metavar="INPUT", help="CSV/TSV/TXT (.gz ok), .npy, .parquet or libsvm file")
    g.add_argument("--format", choices=["csv", "npy", "parquet", "libsvm"], help="input format (default: from the suffix)")
    g.add_argument("--delimiter", help="text delimiter (default: ',' for .csv, tab for .tsv, sniffed otherwise)")
    g.add_argument("--no-header", action="store_true", help="the first line is data (default: auto-detected)")
    g.add_argument("--columns", help="comma-separated feature columns (names or 0-based indices)")
    g.add_argument("--label-column", help="column holding class labels (name or 0-based index)")
    g.add_argument("--dtype", choices=["float64", "float32"], default="float64", help="computation dtype")
    g.add_argument("--scheduler", metavar="ADDRESS", help="run on a running Dask cluster (INPUT: .npy/Parquet "
                   "file or directory of shards)")
    g.add_argument("--workers", type=_positive_int, metavar="N", help="run on a local Dask cluster of N processes")

    model = argparse.ArgumentParser(add_help=False)
    g = model.add_argument_group("model")
    g.add_argument("--kernel", choices=_kernels(), default=None, help="kernel (default: gaussian)")
    g.add_argument("--bandwidth", type=_bandwidth, default=None, metavar="VALUE|percentile|median|mean_sq",
                   help="kernel bandwidth h, or the heuristic that sets it (default: percentile)")
    g.add_argument("-d", "--dim", type=_positive_int, help="embedding dimension")
    g.add_argument("-n", "--landmarks", type=_landmarks, help="landmarks / random features / sketch size")
    g.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
    g.add_argument("--fit-rows", type=_positive_int, default=20000,
                   help="batch methods fit on a uniform sample of this many rows (default 20000)")

    out = argparse.ArgumentParser(add_help=False)
    g = out.add_argument_group("output")
    g.add_argument("-o", "--output", required=True, help="output file: .npy, .csv, .tsv or .parquet")
    g.add_argument("--force", action="store_true", help="overwrite existing outputs (never an input)")
    g.add_argument("--plot", metavar="FILE.png", help="scatter plot of the first two components")

    parser = argparse.ArgumentParser(prog="kernelsketch", parents=[common],
                                     description="Kernel embeddings, kernel PCA and kernel clustering at scale.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    methods = sorted(METHODS)

    p = sub.add_parser("embed", parents=[common, inp, model, out], help="embed a data file",
                       description="Fit a kernel embedding and write the embedding of every row.")
    p.add_argument("--method", choices=methods, required=True)
    p.add_argument("--save", metavar="MODEL", help="also save the fitted model")

    p = sub.add_parser("fit", parents=[common, inp, model], help="fit a model and save it",
                       description="Fit a kernel embedding on a data file and save it (see `transform`).")
    p.add_argument("--method", choices=methods, required=True)
    p.add_argument("--save", metavar="MODEL", required=True, help="model file to write (.ksm)")
    p.add_argument("--force", action="store_true", help="overwrite an existing model file")

    p = sub.add_parser("transform", parents=[common], help="embed a data file with a saved model",
                       description="Embed a data file with a model saved by `fit --save`.")
    p.add_argument("model", metavar="MODEL")
    for a in inp._actions:
        p._add_action(a)
    for a in out._actions:
        p._add_action(a)
    p.set_defaults(seed=0)

    p = sub.add_parser("cluster", parents=[common, inp, model], help="embed and cluster; write labels",
                       description="Embed, then k-means seeded on a sample and streamed over every row (bounded "
                       "memory at any size); prints the (adjusted) Rand index when --label-column is given.")
    p.add_argument("-k", type=_positive_int, required=True, help="number of clusters (>= 2)")
    p.add_argument("--method", choices=CLUSTER_METHODS, default="kjl",
                   help="kjl: centred Kernel JL, d = 10 k (default); subsample-kpca: d = k; nystroem-kkm: kernel "
                   "k-means on rank-d Nystroem features; kmeans: the raw features")
    p.add_argument("-o", "--output", help="labels file: .npy, .csv, .tsv or .parquet (default: write nothing, "
                   "print the scores)")
    p.add_argument("--force", action="store_true", help="overwrite existing outputs (never an input)")
    p.add_argument("--plot", metavar="FILE.png", help="scatter plot of the embedding of a sample, by cluster")
    p.add_argument("--init-size", type=_positive_int, default=None,
                   help="rows of the sample k-means++ and Lloyd run on (default 100000; all rows when fewer)")
    p.add_argument("--lloyd-passes", type=_nonnegative_int, default=0,
                   help="exact Lloyd passes over every row after the sample (each embeds the data again; default 0)")

    p = sub.add_parser("demo", parents=[common], help="the main job: Kernel JL clustering of Bank Notes (and Avila)")
    p.add_argument("--output", default="kernelsketch-demo", help="output folder (default ./kernelsketch-demo)")
    p.add_argument("--seed", type=_seed, default=0)

    p = sub.add_parser("reproduce", parents=[common], help="reproduce a figure or table of the papers")
    from ..experiments import REPRODUCTIONS

    p.add_argument("name", choices=sorted(REPRODUCTIONS), metavar="NAME", help=", ".join(sorted(REPRODUCTIONS)))
    p.add_argument("--output", help="output folder (default ./kernelsketch-results/NAME)")
    p.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    p.add_argument("--seed", type=_seed, default=0)

    p = sub.add_parser("datasets", parents=[common], help="datasets available locally, where, checksum status")
    p.add_argument("--no-verify", action="store_true", help="do not hash the files")

    sub.add_parser("info", parents=[common], help="versions, BLAS and threads")

    p = sub.add_parser("bench", parents=[common], help="run benchmarks/run.py of the checkout")
    p.add_argument("bench_args", nargs=argparse.REMAINDER, help="arguments passed to benchmarks.run")
    return parser


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None):
    """Entry point of the ``kernelsketch`` console script; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: 2 for usage errors, 0 for --help
        return exc.code if isinstance(exc.code, int) else 2
    debug = getattr(args, "debug", False)
    ui = UI(quiet=getattr(args, "quiet", False), json_output=getattr(args, "json", False))
    # SIGTERM and SIGHUP (a closed terminal) unwind like Ctrl-C, so temporary outputs are removed.
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is None:
            continue
        try:
            signal.signal(sig, _raise_interrupt)
        except ValueError:  # not the main thread
            pass
    try:
        code = _dispatch(args, ui)
        ui.finish()
        return code
    except KeyboardInterrupt:
        print("kernelsketch: interrupted; no output was written", file=sys.stderr)
        return 130
    except UsageError as exc:
        if debug:
            raise
        print(f"kernelsketch {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - one line per error is the CLI contract
        from ..io import OutputExistsError, SameFileError

        if debug:
            raise
        code = 2 if isinstance(exc, (OutputExistsError, SameFileError)) else 1
        msg = str(exc) or type(exc).__name__
        if isinstance(exc, MemoryError):
            msg = f"out of memory: {msg}"
        print(f"kernelsketch {args.command}: error: {msg.splitlines()[0] if msg else msg}", file=sys.stderr)
        return code


def _dispatch(args, ui):
    from .. import config_context
    from . import commands

    cfg = {"show_progress": ui.show_progress}
    if getattr(args, "working_memory", None) is not None:
        if not args.working_memory > 0:
            raise UsageError("--working-memory must be > 0 MiB")
        cfg["working_memory"] = args.working_memory
    with config_context(**cfg):
        if args.command == "embed":
            return commands.cmd_embed(args, ui)
        if args.command == "fit":
            return commands.cmd_embed(args, ui, save_only=True)
        if args.command == "transform":
            return commands.cmd_transform(args, ui)
        if args.command == "cluster":
            return commands.cmd_cluster(args, ui)
        if args.command == "demo":
            from .demo import run_demo

            ui.record(command="demo", output=str(args.output), results=run_demo(args.output, seed=args.seed, ui=ui))
            return 0
        if args.command == "reproduce":
            return commands.cmd_reproduce(args, ui)
        if args.command == "datasets":
            return commands.cmd_datasets(args, ui)
        if args.command == "info":
            return commands.cmd_info(args, ui)
        if args.command == "bench":
            return commands.cmd_bench(args, ui)
    raise UsageError(f"unknown command {args.command!r}")  # pragma: no cover - argparse checks


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
