"""``kernelsketch`` command line: argument parsing, dispatch and error handling.

Exit codes: 0 success, 1 data or runtime error (bad file, impossible fit),
2 usage error (bad flags, an output that exists without ``--force`` or is
an input), 130 interrupted.  Errors are one line on stderr; ``--debug``
shows the traceback.
"""

from __future__ import annotations

import argparse
import difflib
import gc
import json
import os
import re
import signal
import sys
import threading
import time
import warnings

from ..cluster.landmark_labels import LABELINGS
from ..utils.missing_codes import MISSING_CELL_ACTIONS
from ..utils.warnings import EmptyClusterWarning
from .ui import UI, UsageError

_HEURISTICS = ("percentile", "median", "mean_sq", "local")


def _bandwidth(value):
    if value in _HEURISTICS:
        return value
    try:
        h = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a positive number or one of {', '.join(_HEURISTICS)}, got {value!r}"
        ) from None
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
    """A positive integer or ``auto`` (``-n``)."""
    return value if value == "auto" else _positive_int(value)


def _clusters(value):
    """``cluster -k``: an integer or ``auto`` (its range is ``cluster_file``'s to check: a usage error, exit 2)."""
    if value == "auto":
        return value
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of clusters or 'auto', got {value!r}") from None


def _fraction(value):
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1, got {value!r}") from None
    if not 0.0 < x < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1 (exclusive), got {value!r}")
    return x


def _seed(value):
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed must be a non-negative integer, got {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"seed must be a non-negative integer, got {value!r}")
    return n


def _kernels():
    from ..kernels.names import KERNEL_NAMES  # (not the kernels: --help stays light)

    return sorted(KERNEL_NAMES)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors and a "did you mean" for mistyped flags and choices."""

    #: the last usage error (main() repeats it as JSON under --json)
    last_error = None

    def error(self, message):
        message = _suggest(self, message)
        _Parser.last_error = (self.prog, message)
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _suggest(parser, message):
    m = re.match(r"unrecognized arguments: (.*)", message)
    if m:
        options = [o for a in parser._actions for o in a.option_strings]
        for sub in (a for a in parser._actions if isinstance(a, argparse._SubParsersAction)):
            for p in sub.choices.values():
                options += [o for a in p._actions for o in a.option_strings]
        hints = []
        for word in m.group(1).split():
            if word.startswith("-"):
                close = difflib.get_close_matches(word.split("=")[0], options, n=1, cutoff=0.6)
                if close:
                    hints.append(f"did you mean {close[0]} for {word.split('=')[0]}?")
        return message + ("; " + " ".join(hints) if hints else "")
    m = re.match(r"argument (.*?): invalid choice: '(.*?)' \(choose from (.*)\)", message)
    if m:
        choices = [c.strip().strip("'") for c in m.group(3).split(",")]
        close = difflib.get_close_matches(m.group(2), choices, n=1, cutoff=0.5)
        if close:
            return f"argument {m.group(1)}: invalid choice {m.group(2)!r}; did you mean {close[0]!r}?"
    return message


#: one line per --method, shown by --help
METHOD_HELP = {
    "kjl": "Kernel JL: Gaussian sketch of a landmark Gram (-d sketch dimension, -n landmarks)",
    "nystroem": "Nystroem features of rank -d from -n landmarks",
    "kpca": "exact kernel PCA (-d components; the Gram of --fit-rows rows)",
    "subsample-kpca": "kernel PCA of -n landmarks, extended to every row (-d components)",
    "rff": "random Fourier features (-n features)",
    "rf-kpca": "kernel PCA in -n random Fourier features (-d components)",
    "rnca": "random-features PCA of a stream, Lopez-Paz et al. (-d components, -n features)",
    "skpca": "streaming KPCA: random features + Frequent Directions (-d components, -n features, --sketch-size rows)",
    "spectral": "landmark spectral embedding: top -d eigenvectors of the rows-to--n-landmarks graph",
}


def _common_options():
    """Flags every command takes: quiet, json, debug, working memory."""
    common = _Parser(add_help=False)
    g = common.add_argument_group("output control")
    g.add_argument(
        "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="no messages, no progress bars"
    )
    g.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print a machine-readable JSON summary on stdout"
    )
    g.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    g.add_argument(
        "--working-memory",
        type=float,
        metavar="MIB",
        default=argparse.SUPPRESS,
        help="memory budget in MiB for temporaries of chunked computations",
    )
    g.add_argument(
        "--threads",
        type=int,
        metavar="N",
        default=argparse.SUPPRESS,
        help="threads for BLAS, OpenMP and the compiled loops (default: every usable core; 1 on a shared machine "
        "keeps this command to one core)",
    )
    return common


def _input_options():
    """INPUT and how to read it (format, header, columns, labels, dtype, Dask)."""
    inp = _Parser(add_help=False)
    g = inp.add_argument_group("input")
    g.add_argument("input", metavar="INPUT", help="CSV/TSV/TXT (.gz ok), .npy, .parquet or libsvm file")
    g.add_argument(
        "--format", choices=["csv", "npy", "parquet", "libsvm"], help="input format (default: from the suffix)"
    )
    g.add_argument("--delimiter", help="text delimiter (default: ',' for .csv, tab for .tsv, sniffed otherwise)")
    hdr = g.add_mutually_exclusive_group()
    hdr.add_argument(
        "--header",
        action="store_true",
        help="the first line is a header (default: auto-detected, pandas' 0,1,2,... headers included)",
    )
    hdr.add_argument("--no-header", action="store_true", help="the first line is data (default: auto-detected)")
    g.add_argument(
        "--n-features",
        type=_positive_int,
        metavar="D",
        help="libsvm: number of features (default: the largest index in the file; transform: the model's)",
    )
    g.add_argument("--columns", help="comma-separated feature columns (names or 0-based indices)")
    g.add_argument("--label-column", help="column holding class labels (name or 0-based index)")
    g.add_argument(
        "--dtype",
        choices=["float64", "float32"],
        default=None,
        help="computation dtype (default: the file's: a float32 .npy / Parquet stays float32, the rest float64)",
    )
    g.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on a running Dask cluster (INPUT: .npy/Parquet file or directory of shards)",
    )
    g.add_argument("--workers", type=_positive_int, metavar="N", help="run on a local Dask cluster of N processes")
    g.add_argument(
        "--worker-memory",
        metavar="SIZE",
        default=None,
        help="memory limit of each --workers process (e.g. 2GB; default: the machine's memory shared among them)",
    )
    return inp


def _model_options():
    """The model: kernel, bandwidth, -d, -n or --landmark-target, seed, fit rows."""
    model = _Parser(add_help=False)
    g = model.add_argument_group("model")
    g.add_argument("--kernel", choices=_kernels(), default=None, help="kernel (default: gaussian)")
    g.add_argument(
        "--bandwidth",
        type=_bandwidth,
        default=None,
        metavar="VALUE|percentile|median|mean_sq|local",
        help="kernel bandwidth h, or the heuristic that sets it (default: percentile; cluster --method "
        "spectral: local, each row's distance to its n-th nearest landmark)",
    )
    g.add_argument("-d", "--dim", type=_positive_int, help="embedding dimension")
    g.add_argument(
        "-n",
        "--landmarks",
        type=_landmarks,
        help="landmarks (spectral, kjl, nystroem, subsample-kpca, nystroem-kkm) or random features (rff, rf-kpca, "
        "rnca, skpca)",
    )
    g.add_argument(
        "--landmark-target",
        type=_fraction,
        metavar="ERROR",
        help="choose the landmark count (in place of -n): the fewest whose Nystroem Gram error on held-out rows "
        "is at most ERROR, e.g. 0.05 (kjl, nystroem, subsample-kpca, nystroem-kkm)",
    )
    g.add_argument("--sketch-size", type=_positive_int, help="Frequent Directions sketch rows (skpca)")
    g.add_argument("--gamma", type=float, help="scikit-learn's gamma in place of --bandwidth (rbf: h = 1/sqrt(gamma))")
    g.add_argument(
        "--standardize",
        action="store_true",
        help="z-score every feature (mean and standard deviation from one pass over the input) before "
        "the kernel; saved with the model",
    )
    g.add_argument("--seed", "--random-state", dest="seed", type=_seed, default=0, help="random seed (default 0)")
    g.add_argument(
        "--fit-rows",
        type=int,  # (its range is the library's to check)
        default=20000,
        help="batch methods fit on a uniform sample of this many rows (default 20000)",
    )
    return model


def _output_options():
    """-o (required), --force, --plot."""
    out = _Parser(add_help=False)
    g = out.add_argument_group("output")
    g.add_argument("-o", "--output", required=True, help="output file: .npy, .csv, .tsv or .parquet")
    g.add_argument("--force", action="store_true", help="overwrite existing outputs (never an input)")
    g.add_argument("--plot", metavar="FILE.png", help="scatter plot of the first two components")
    return out


def _add_embed(sub, parents, methods, method_help):
    """``embed``: fit + transform to -o."""
    p = sub.add_parser(
        "embed",
        parents=parents,
        help="embed a data file",
        description="Fit a kernel embedding and write the embedding of every row.",
    )
    p.add_argument(
        "--method",
        choices=methods,
        default="spectral",
        help=method_help + " (default: spectral, the embedding `cluster` clusters)",
    )
    p.add_argument("--save", metavar="MODEL", help="also save the fitted model (.ksm)")


def _add_fit(sub, parents, methods, method_help):
    """``fit``: fit and save the model."""
    p = sub.add_parser(
        "fit",
        parents=parents,
        help="fit a model and save it",
        description="Fit a kernel embedding on a data file and save it (see `transform`).",
    )
    p.add_argument("--method", choices=methods, required=True, help=method_help)
    p.add_argument(
        "-o",
        "--output",
        "--save",
        dest="save",
        metavar="MODEL",
        required=True,
        help="model file to write (.ksm); --save is the same flag",
    )
    p.add_argument("--force", action="store_true", help="overwrite an existing model file")


_DEVICE_HELP = (
    "run the spectral searches (nearest landmarks, k-means' seeding, the assignment) with PyTorch on this "
    "device: cuda, cuda:1, cpu (PyTorch's CPU), or numpy (default: the NumPy path); needs PyTorch"
)


def _add_model_command(sub, common, inp, out, name, help, description, plot=True):
    """A command that applies a saved MODEL to a data file: the input and output flags, no model flags
    (``plot=False``: no ``--plot``, for a command that does not draw)."""
    p = sub.add_parser(name, parents=[common], help=help, description=description)
    p.add_argument("model", metavar="MODEL")
    for a in inp._actions:
        p._add_action(a)
    for a in out._actions:
        if plot or "--plot" not in a.option_strings:
            p._add_action(a)
    if not plot:
        p.set_defaults(plot=None)
    p.set_defaults(seed=0)
    return p


def _add_transform(sub, common, inp, out):
    """``transform``: embed with a saved model."""
    _add_model_command(
        sub,
        common,
        inp,
        out,
        "transform",
        help="embed a data file with a saved model",
        description="Embed a data file with a model saved by `fit -o MODEL`.",
    )


def _add_predict(sub, common, inp, out):
    """``predict``: label a data file with a clustering saved by ``cluster --save``."""
    p = _add_model_command(
        sub,
        common,
        inp,
        out,
        "predict",
        help="label a data file with a saved clustering",
        description="Label every row of a data file with a clustering saved by `cluster --save MODEL` "
        "(streamed: any size, bounded memory). Columns are matched to the model's by name when both have names "
        "(others, such as a label column, are left out); prints the cluster sizes, and the adjusted Rand index "
        "with --label-column.",
        plot=False,
    )
    p.add_argument("--device", default=None, help=_DEVICE_HELP + "; default: where the model was fitted")


def _add_cluster(sub, parents):
    """``cluster``: embed, k-means, labels."""
    from .commands import CLUSTER_METHODS

    p = sub.add_parser(
        "cluster",
        parents=parents,
        help="embed and cluster; write labels",
        description="Embed, then k-means seeded on a sample and streamed over every row (bounded "
        "memory at any size); prints the (adjusted) Rand index when --label-column is given.",
    )
    p.add_argument(
        "-k",
        "--n-clusters",
        dest="k",
        type=_clusters,
        required=True,
        help="number of clusters (>= 2), or 'auto': chosen without labels from the spectral method's fit "
        "(k = 2..20; the k and why are printed)",
    )
    p.add_argument(
        "--method",
        choices=CLUSTER_METHODS,
        default="spectral",
        help="spectral: landmark spectral clustering, n = 1000 landmarks, each row joined to its "
        "--n-neighbors nearest with a local bandwidth (default: the best clusters across the "
        "clustering-quality benchmark); kjl: centred Kernel JL, d = 10 k (the Kernel JL paper's); "
        "subsample-kpca: d = k; nystroem-kkm: kernel k-means on rank-d Nystroem features; kmeans: the raw features",
    )
    p.add_argument(
        "--n-neighbors",
        type=_positive_int,
        default=None,
        help="spectral: nearest landmarks each row is joined to (default 10)",
    )
    p.add_argument(
        "--landmark-selection",
        choices=("uniform", "kmeans"),
        default=None,
        help="spectral: the landmarks are uniform rows (default) or the k-means centres of a 10 n-row sample "
        "(Chen & Cai's LSC-K, U-SPEC's hybrid selection); the same labels on a file, in memory and on Dask",
    )
    p.add_argument(
        "--search",
        choices=("auto", "exact", "approximate", "faiss"),
        default=None,
        help="spectral: how each row's nearest landmarks are found: all 1000 distances (exact) or U-SPEC's "
        "coarse-to-fine search (approximate: 2-5x faster with few columns; its recall and ARI on every "
        "labelled set: benchmarks/results/approximate-search.md); auto (default): approximate for data of "
        "at most 40 columns; faiss: faiss's exact search for every search of the run (needs faiss-cpu)",
    )
    p.add_argument("--device", default=None, help=_DEVICE_HELP)
    p.add_argument(
        "--assign-labels",
        choices=LABELINGS,
        default="auto",
        help="spectral: how rows get their labels: k-means on the embedding, Genie's hierarchy on the landmarks "
        "with each row following its graph's vote, or (auto, default) the one of lower normalized cut on k-means' "
        "sample (benchmarks/results/cluster-pool.md)",
    )
    p.add_argument(
        "--no-standardize",
        action="store_true",
        help="never z-score (default, for every method: z-score when the columns are in different units, "
        "i.e. their largest values spread over more than 10x)",
    )
    _add_cluster_input_options(p)
    _add_cluster_output_options(p)


def _add_cluster_input_options(p):
    """``cluster``'s options for what is read: missing cells and codes."""
    p.add_argument(
        "--missing",
        choices=MISSING_CELL_ACTIONS,
        default="impute",
        help="a text file's empty and NA cells (also NaN, N/A, ?, null): read as their column's median in 5000 "
        "sampled rows (impute, the default), the same for the fit with those rows labelled -1 (drop), or refused "
        "(error); the count per column is said either way",
    )
    p.add_argument(
        "--missing-codes",
        choices=("impute", "warn", "off"),
        default="warn",
        help="missing-value codes (a blood pressure of 0 for 'not measured') found in 5000 sampled rows: "
        "only warned of (warn, the default: the rows are clustered as given), read as their column's median "
        "(impute), or not looked for (off)",
    )


def _add_cluster_output_options(p):
    """``cluster``'s options for what is written and how k-means runs on the sample."""
    p.add_argument(
        "-o", "--output", help="labels file: .npy, .csv, .tsv or .parquet (default: write nothing, print the scores)"
    )
    p.add_argument("--force", action="store_true", help="overwrite existing outputs (never an input)")
    p.add_argument(
        "--plot",
        metavar="FILE.png",
        help="scatter plot of a sample of the rows (two columns, or their PCA plane), by cluster",
    )
    p.add_argument(
        "--save",
        metavar="MODEL",
        help="also save the fitted clustering (.ksm: codes, scaling, embedding, k-means); "
        "`kernelsketch predict MODEL FILE` labels new rows with it",
    )
    p.add_argument(
        "--init-size",
        type=int,  # (its range is the library's to check)
        default=None,
        help="rows of the sample k-means++ and Lloyd run on (default 100000; all rows when fewer)",
    )
    p.add_argument(
        "--lloyd-passes",
        type=int,  # (its range is the library's to check)
        default=0,
        help="exact Lloyd passes over every row after the sample (each embeds the data again; default 0)",
    )


def _add_diagnose(sub, parents):
    """``diagnose``: spectrum, errors and advice on a sample."""
    p = sub.add_parser(
        "diagnose",
        parents=parents,
        help="is the approximation good? spectrum, errors, advice",
        description="On a seeded sample of INPUT: the centred Gram's spectrum and captured trace, the "
        "Gram error of Nystroem, SubsampleKPCA, RFF and StreamingKPCA at your sizes, a bandwidth "
        "sweep and the smallest number of landmarks reaching --target; writes report.md, "
        "report.json and PNG figures with -o.",
    )
    p.add_argument(
        "--kernel",
        choices=["gaussian", "rbf", "laplacian", "cauchy"],
        default="gaussian",
        help="kernel (default: gaussian)",
    )
    p.add_argument(
        "--bandwidth",
        type=_bandwidth,
        default="percentile",
        metavar="VALUE|percentile|median|mean_sq",
        help="kernel bandwidth h, or the heuristic that sets it (default: percentile)",
    )
    p.add_argument(
        "-n",
        "--landmarks",
        type=_positive_int,
        default=200,
        help="landmarks (and random features) to measure (default 200)",
    )
    p.add_argument("-d", "--dim", type=_positive_int, help="rank / components to measure (default: all)")
    p.add_argument(
        "--sample-size",
        type=_positive_int,
        default=2000,
        help="rows of the uniform sample everything is measured on (default 2000)",
    )
    p.add_argument(
        "--target", type=float, default=0.05, help="relative Frobenius error the recommendation aims for (default 0.05)"
    )
    p.add_argument("--seed", "--random-state", dest="seed", type=_seed, default=0, help="random seed (default 0)")
    p.add_argument(
        "-k",
        "--n-clusters",
        "--clusters",
        dest="clusters",
        type=_positive_int,
        metavar="K",
        help="also say how `cluster -k K` would cluster this data: standardization, the landmark graph's "
        "n_neighbors chosen by the eigengap at K, how the eigengap ranks other K (eigengap.png)",
    )
    p.add_argument("-o", "--output", help="report folder: report.md, report.json, spectrum/errors/sweep .png")
    p.add_argument("--force", action="store_true", help="overwrite an existing report")


def _add_tools(sub, common):
    """``demo``, ``reproduce``, ``datasets``, ``info``, ``bench``."""
    p = sub.add_parser(
        "demo",
        parents=[common],
        help="the main job: kernel clustering of Bank Notes (and Avila), spectral and Kernel JL",
    )
    p.add_argument(
        "-o",
        "--output",
        default="kernelsketch-demo",
        help="output folder (default ./kernelsketch-demo); a rerun replaces the demo's own files there and says so",
    )
    p.add_argument("--seed", "--random-state", dest="seed", type=_seed, default=0, help="random seed (default 0)")

    p = sub.add_parser("reproduce", parents=[common], help="reproduce a figure or table of the papers")
    from ..experiments import REPRODUCTIONS

    p.add_argument("name", choices=sorted(REPRODUCTIONS), metavar="NAME", help=", ".join(sorted(REPRODUCTIONS)))
    p.add_argument("-o", "--output", help="output folder (default ./kernelsketch-results/NAME)")
    p.add_argument("--force", action="store_true", help="write into an output folder that already holds files")
    p.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    p.add_argument("--seed", "--random-state", dest="seed", type=_seed, default=0, help="random seed (default 0)")

    p = sub.add_parser("datasets", parents=[common], help="datasets available locally, where, checksum status")
    p.add_argument("--no-verify", action="store_true", help="do not hash the files")

    sub.add_parser("info", parents=[common], help="versions, BLAS and threads")

    p = sub.add_parser("bench", parents=[common], help="run benchmarks/run.py of the checkout")
    p.add_argument("bench_args", nargs=argparse.REMAINDER, help="arguments passed to benchmarks.run")


def build_parser():
    """The ``kernelsketch`` parser: shared option groups, then one small builder per command."""
    from .pipeline import METHODS

    common, inp, model, out = _common_options(), _input_options(), _model_options(), _output_options()
    parser = _Parser(
        prog="kernelsketch",
        parents=[common],
        description="Kernel embeddings, kernel PCA and kernel clustering at scale.",
    )
    from .._version import __version__

    parser.add_argument("--version", action="version", version=f"kernelsketch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    methods = sorted(METHODS)
    method_help = "; ".join(f"{m}: {METHOD_HELP[m]}" for m in methods)
    _add_embed(sub, [common, inp, model, out], methods, method_help)
    _add_fit(sub, [common, inp, model], methods, method_help)
    _add_transform(sub, common, inp, out)
    _add_predict(sub, common, inp, out)
    _add_cluster(sub, [common, inp, model])
    _add_diagnose(sub, [common, inp])
    _add_tools(sub, common)
    return parser


class _Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, unwound as Ctrl-C is (temporary outputs removed); the exit code is 128 + the signal."""

    def __init__(self, signum):
        super().__init__()
        self.signum = signum


#: this run's signal being unwound (``signum``), whether the command line has caught its exception (``caught``) and
#: whether its exception was dropped at a C callback's edge since it was last sent (``dropped``): a new dict for each
#: run of :func:`_main`
_UNWINDING: dict = {"signum": None, "caught": False}
#: seconds between deliveries of a signal whose exception has not reached the command line yet
_AGAIN_AFTER = 0.25


def _raise_interrupt(signum, frame):
    """SIGTERM / SIGHUP: raise :class:`_Terminated` where the main thread is.

    Python runs a signal's handler at the main thread's next line of Python; when that line is a C library's callback
    into Python (numba compiling a kernel: llvmlite's object cache), the exception is dropped at the callback's edge
    (reported to :data:`sys.unraisablehook`, :func:`_unraisable`) and the run would go on to its end.  So a dropped
    one is sent again after :data:`_AGAIN_AFTER` seconds, until the command line has caught it (:func:`_main`).  One
    that was not dropped is never sent again: its unwinding (a Dask cluster's close, temporary files removed) runs
    undisturbed (a second delivery inside a cluster's close left it half closed, and the exit then waited 10 s for
    it)."""
    run = _UNWINDING
    if run["caught"]:
        return
    if run["signum"] is None:
        run["signum"] = signum
        threading.Thread(target=_deliver_again, args=(run, signum), name="kernelsketch-signal", daemon=True).start()
    raise _Terminated(signum)


def _deliver_again(run, signum):
    while True:
        time.sleep(_AGAIN_AFTER)
        if run["caught"]:
            return
        if run.pop("dropped", False):
            os.kill(os.getpid(), signum)


def _unraisable(hook):
    """``sys.unraisablehook`` without the report of a :class:`_Terminated` dropped at a C callback's edge (marked, so
    that the signal is sent again: :func:`_raise_interrupt`); anything else goes to ``hook``.  Installed once."""
    if getattr(hook, "_kernelsketch", False):
        return hook

    def unraisable(info):
        if isinstance(info.exc_value, _Terminated):
            _UNWINDING["dropped"] = True  # (sent again: _deliver_again)
            return
        hook(info)

    unraisable._kernelsketch = True
    return unraisable


def main(argv=None):
    """Entry point of the ``kernelsketch`` console script; returns the exit code.

    The console script (``argv`` None), once the command has returned (its outputs written and closed, its
    temporary files removed), ends its process without the teardown of every imported module
    (:func:`~kernelsketch.utils.process_exit.end_without_teardown`: 0.4 s on the 2-core host) after every
    exit handler has run."""
    code = _main(argv)
    if argv is None:
        from ..utils.process_exit import end_without_teardown

        end_without_teardown(code if isinstance(code, int) else 1)
    return code


def _main(argv=None):
    console = argv is None  # the console script (not a caller in a Python process of its own)
    if console:
        from .lean_imports import install

        install()  # scikit-learn without the scipy.stats and pandas its shims import and a command does not use
        if any(a == "--workers" or a.startswith("--workers=") for a in sys.argv[1:]):
            from ..distributed.cluster import start_worker_forkserver

            # the workers' fork server imports their modules beside this process's own imports (a usage error found
            # later ends it with this process)
            start_worker_forkserver()
        gc.disable()  # the imports make ~1e6 objects and no garbage: no collection while they load
    try:
        parser = build_parser()
    except KeyboardInterrupt:  # (Ctrl-C while the parser's imports load: as any other interrupt)
        print("kernelsketch: interrupted; no output was written", file=sys.stderr)
        return 130
    finally:
        if console:
            # then the collector leaves them alone: each full collection during a run would walk them all
            # while the main thread's share of the work stalls (benchmarks/results/design-measurements.md)
            gc.freeze()
            gc.enable()
    _Parser.last_error = None
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: 2 for usage errors, 0 for --help
        argv_list = sys.argv[1:] if argv is None else list(argv)
        if _Parser.last_error is not None and "--json" in argv_list:
            prog, message = _Parser.last_error
            print(json.dumps({"command": prog.split()[-1], "error": message}, indent=2))
        return exc.code if isinstance(exc.code, int) else 2
    debug = getattr(args, "debug", False)
    ui = UI(quiet=getattr(args, "quiet", False), json_output=getattr(args, "json", False))
    from ..utils.numba_cache import on_first_compile

    forget_listener = on_first_compile(
        lambda: ui.say("compiling the numba kernels (once: seconds; later runs load them from the cache)")
    )
    # SIGTERM and SIGHUP (a closed terminal) unwind like Ctrl-C, so temporary outputs are removed.
    global _UNWINDING
    _UNWINDING = {"signum": None, "caught": False}
    sys.unraisablehook = _unraisable(sys.unraisablehook)
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is None:
            continue
        try:
            signal.signal(sig, _raise_interrupt)
        except ValueError:  # not the main thread
            pass
    formatwarning = warnings.formatwarning
    warnings.formatwarning = _format_warning  # a library warning reads as the command's, not as a traceback line
    try:
        with warnings.catch_warnings():
            if ui.quiet:  # -q means quiet: warnings too (errors still print), except that the labels lack clusters
                warnings.simplefilter("ignore")
                warnings.simplefilter("default", EmptyClusterWarning)
            warnings.showwarning = _recording(ui, warnings.showwarning)
            code = _dispatch(args, ui)
            ui.finish()
        return code
    except KeyboardInterrupt as exc:
        _UNWINDING["caught"] = True
        written = ui.written
        if written:
            print(
                f"kernelsketch: interrupted; written before the interrupt: {', '.join(written)} "
                "(no other output was written)",
                file=sys.stderr,
            )
        else:
            print("kernelsketch: interrupted; no output was written", file=sys.stderr)
        return 128 + exc.signum if isinstance(exc, _Terminated) else 130
    except UsageError as exc:
        if debug:
            raise
        _report_error(ui, args.command, str(exc))
        return 2
    except Exception as exc:
        from sklearn.utils._param_validation import InvalidParameterError

        from ..io import OutputExistsError, SameFileError

        if debug:
            raise
        # a value a library function's constraints refuse is a usage error: the CLI does not check it twice
        code = 2 if isinstance(exc, (OutputExistsError, SameFileError, InvalidParameterError)) else 1
        msg = str(exc) or type(exc).__name__
        if isinstance(exc, MemoryError):
            msg = f"out of memory: {msg}"
        _report_error(ui, args.command, _flag_names(msg.splitlines()[0] if msg else msg))
        return code
    finally:
        warnings.formatwarning = formatwarning
        forget_listener()


def _recording(ui, show):
    """``warnings.showwarning`` that also lists each warning in the ``--json`` summary (``"warnings"``)."""

    def showwarning(message, category, filename, lineno, file=None, line=None):
        ui.summary.setdefault("warnings", []).append({"category": category.__name__, "message": str(message)})
        show(message, category, filename, lineno, file, line)

    return showwarning


def _format_warning(message, category, filename, lineno, line=None):
    """``kernelsketch: warning (MissingValueCodeWarning): ...`` with the flags the user typed."""
    return f"kernelsketch: warning ({category.__name__}): {_flag_names(str(message))}\n"


#: Python parameter names -> the CLI flags that set them (error messages name the flag the user typed)
_FLAG_OF = {
    "n_landmarks": "-n/--landmarks",
    "n_random_features": "-n/--landmarks",
    "n_components": "-d/--dim",
    "sketch_size": "--sketch-size",
    "n_clusters": "-k",
    "bandwidth": "--bandwidth",
    "gamma": "--gamma",
    "working_memory": "--working-memory",
    "n_jobs": "--threads",
    "random_state": "--seed",
    "init_size": "--init-size",
    "n_neighbors": "--n-neighbors",
    "lloyd_passes": "--lloyd-passes",
    "fit_rows": "--fit-rows",
    "landmark_target": "--landmark-target",
    "device": "--device",
    "assign_labels": "--assign-labels",
}


def _flag_names(msg):
    """``n_landmarks=500 must be <= ...`` -> ``-n/--landmarks=500 must be <= ...``.

    Only parameter names written as parameters are renamed: ``name=`` and ``'name'``
    (scikit-learn's "The 'n_components' parameter of ..."), not the words in prose.
    """
    names = "|".join(_FLAG_OF)
    msg = re.sub(r"(?<![\w-])(" + names + r")(?==)", lambda m: _FLAG_OF[m.group(1)], msg)
    msg = re.sub(r"'(" + names + r")'", lambda m: f"'{_FLAG_OF[m.group(1)]}'", msg)
    # (a library function's name means nothing on the command line: "The '-k' parameter of cluster_file must")
    return re.sub(r"The ('-[^']+') parameter of [\w.]+ must", r"\1 must", msg)


def _report_error(ui, command, msg):
    """One line on stderr; with --json also ``{"error": ...}`` on stdout (a script's parser gets a document)."""
    print(f"kernelsketch {command}: error: {msg}", file=sys.stderr)
    if ui.json:
        print(json.dumps({"command": command, "error": msg}, indent=2))


def _dispatch(args, ui):
    from .._config import config_context
    from . import commands

    cfg = {"show_progress": ui.pass_progress}
    if getattr(args, "working_memory", None) is not None:
        if not args.working_memory > 0:
            raise UsageError("--working-memory must be > 0 MiB")
        cfg["working_memory"] = args.working_memory
    threads = getattr(args, "threads", None)
    if threads is not None and threads < 1:
        raise UsageError(f"--threads must be >= 1, got {threads}")
    from ..utils.threads import thread_limit

    with config_context(**cfg), thread_limit(threads):
        if args.command == "embed":
            return commands.cmd_embed(args, ui)
        if args.command == "fit":
            return commands.cmd_embed(args, ui, save_only=True)
        if args.command == "transform":
            return commands.cmd_transform(args, ui)
        if args.command == "predict":
            return commands.cmd_transform(args, ui, method="predict")
        if args.command == "cluster":
            return commands.cmd_cluster(args, ui)
        if args.command == "diagnose":
            return commands.cmd_diagnose(args, ui)
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
