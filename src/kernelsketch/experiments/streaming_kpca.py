"""Reproduction of Ghashami, Perry & Phillips, "Streaming kernel principal component analysis", Figures 1-4.

One function, :func:`figures`, runs the paper's Section 3 on every dataset
(Figure 1 RandomNoisy, Figure 2 CPU, Figure 3 Adult, Figure 4 Forest) and
writes, per dataset, a six-panel figure (log-log kernel spectral and
Frobenius error against sample size and against space, train time and test
time per point against sample size), one results table for all datasets, and
a table checking the paper's claims (holds / partly / does not hold, with the
numbers).

Protocol (what the paper states, plus what it leaves open, fixed here and
printed with every run):

* **Data.** RandomNoisy ``20000 x 1000`` (``s = 50``, ``zeta = 10``,
  :func:`~kernelsketch.datasets.make_random_noisy`); CPU (DELVE cpu_act,
  ``8192 x 21``, z-scored with the training set's mean and standard
  deviation: its raw columns span six orders of magnitude); Adult (LIBSVM
  a9a, sparse binary ``123`` features: the 32,561 rows of the a9a training
  file train, 1000 rows of a9a.t test -- the paper's ``33561 = 32561 + 1000``);
  Forest when its file is present (z-scored), otherwise MNIST as a stand-in
  for a larger dense set (pixels / 255, a uniform subsample of the 60,000
  training images, 1000 test images from t10k), labelled as such.  A random
  test set of 1000 points (800 for CPU) is held out of the synthetic and
  single-file sets.
* **Kernel.** Gaussian ``k(x, y) = exp(-|x - y|^2 / h^2)``; the paper does
  not give its bandwidth, so ``h`` is the 25th percentile of interpoint
  distances (:func:`~kernelsketch.kernels.estimate_bandwidth`, 100,000
  sampled pairs of the training set), resolved once per dataset and shared by
  every method and by the exact Gram the errors are measured against.
* **Methods.** :class:`~kernelsketch.decomposition.StreamingKPCA` with
  ``l in {2, 5, 10, 20, 30, 50}`` (all ``l`` sketched directions kept,
  ``G' = Z W W^T Z^T``; ``shrink="half"`` is the paper's Algorithm 1,
  shrinking an ``l``-row buffer by its ``l/2``-th squared singular value;
  versions with ``l >= m`` are skipped), :class:`~kernelsketch.decomposition.RNCA`
  with all ``m`` components (``G' = Z Z^T``, the paper's ``G_hat``), and
  :class:`~kernelsketch.maps.Nystroem` on ``c`` uniform landmarks with the
  full pseudo-inverse (``G' = C W^+ C^T``).  The sample size (``m`` random
  features or ``c`` landmarks) runs over a log grid.
* **Errors.** Kernel spectral error ``||G - G'||_2 / n`` and kernel Frobenius
  error ``||G - G'||_F / n^2`` on a uniform subsample of ``n_eval`` training
  points (default 5000; the approximations are fitted on the whole training
  set).  The ``n_eval x n_eval`` Gram is computed once per dataset and every
  approximation is scored against it (a dense residual, Lanczos for its
  largest-magnitude eigenvalue); recomputing kernel blocks for each of the
  ~200 evaluations, as :func:`kernelsketch.metrics.kernel_spectral_error`
  does to stay in bounded memory, would cost ``O(n^2 d)`` per Lanczos step.
  Every run checks this evaluator against
  :func:`~kernelsketch.metrics.kernel_spectral_error` and
  :func:`~kernelsketch.metrics.kernel_frobenius_error` on 1000 of the points
  (table ``metric_check``).
* **Times and space.** Train time = time of ``fit`` on the training set
  (bandwidth given); test time = time of ``transform`` of the test set
  divided by its size.  Both are measured as the process's CPU time
  (``time.process_time``, the columns and claims) and as wall time (the
  ``*_wall_*`` columns): on a shared machine the wall time mostly measures the
  other processes, while the CPU time of a single-threaded run
  (``OPENBLAS_NUM_THREADS=1``) is what the wall time would be on an idle core
  (with more BLAS threads it sums their work).  Space in floats, the paper's
  formulas: SKPCA ``m d + m l``, Nystroem ``c^2 + c d``, RNCA ``m^2 + m d``.
"""

from __future__ import annotations

import time

import numpy as np

from ..datasets import DatasetNotFoundError, load_dataset, make_random_noisy
from ..utils.progress import progress as _progress
from ._prep import zscore
from ._report import Report, pyplot
from ._seeds import int_seed as _int_seed
from ._seeds import stream_rng as _rng

__all__ = ["PAPER_CLAIMS", "figures", "space_usage"]

#: The paper's figure number and title of each dataset.
FIGURE_OF = {
    "randomnoisy": ("figure1", "RandomNoisy"),
    "cpu": ("figure2", "CPU"),
    "adult": ("figure3", "Adult"),
    "forest": ("figure4", "Forest"),
}

#: The claims of the paper's Results paragraph checked by :func:`figures`.
PAPER_CLAIMS = {
    "small_errors": "all methods have a very small error range, typically less than 0.01",
    "nystroem_best_small": "for small sample size Nystroem performs quite well under all error measures "
    "(most accurate)",
    "frobenius_crossover_rnca": "Frobenius error: a cross-over point where RNCA beats Nystroem",
    "frobenius_crossover_skpca": "Frobenius error: a cross-over where often most versions of SKPCA beat Nystroem",
    "spectral_crossover_skpca_not_rnca": "spectral error: often a cross-over for SKPCA, but not for RNCA",
    "skpca_le_rnca_same_size": "SKPCA has as good or better error than RNCA for the same size",
    "skpca_le_rnca_equal_space": "(the same, in space:) this difference is more pronounced in SPACE than SAMPLE SIZE",
    "skpca_train_far_below_rnca": "train time: SKPCA has a very large advantage; RNCA is the slowest",
    "lemma_2_2_sketch_error": "Lemma 2.2: ||Z Z^T - Z W W^T Z^T||_2 <= eps n with l = 2 / eps; for "
    "Algorithm 1's shrink by the floor(l/2)-th value the bound is ||Z||_F^2 / floor(l/2) <= 2n / floor(l/2) "
    "(about 4n / l for even l, i.e. eps n needs l = 4 / eps)",
    "nystroem_test_orders_above_skpca": "test time: Nystroem is slowest by several orders of magnitude (vs SKPCA)",
}

SKETCH_SIZES = (2, 5, 10, 20, 30, 50)
SAMPLE_SIZES = (16, 32, 64, 128, 256, 512, 1024, 2048)


def space_usage(method, sample_size, n_features, sketch_size=None):
    """Space in floats as the paper counts it (Section 3, "We measure the SPACE ...").

    SKPCA ``m d + m l``, Nystroem ``c^2 + c d``, RNCA ``m^2 + m d``.

    Examples
    --------
    >>> space_usage("SKPCA", 100, 21, sketch_size=10), space_usage("RNCA", 100, 21), space_usage("Nystrom", 100, 21)
    (3100, 12100, 12100)
    """
    m, d = int(sample_size), int(n_features)
    if method == "SKPCA":
        return m * d + m * int(sketch_size)
    if method == "RNCA" or method == "Nystrom":
        return m * m + m * d
    raise ValueError(f"unknown method {method!r}; choose 'SKPCA', 'RNCA' or 'Nystrom'")


# ----------------------------------------------------------------------------- helpers


def _holdout(X, n_test, rng):
    perm = rng.permutation(X.shape[0])
    return X[np.sort(perm[n_test:])], X[np.sort(perm[:n_test])]


def _subsample_rows(X, n, rng):
    if n is None or n >= X.shape[0]:
        return X
    return X[np.sort(rng.choice(X.shape[0], size=n, replace=False))]


def _load_split(name, seed, *, quick, max_train, random_noisy_shape):
    """(X_train, X_test, title, note) of one dataset; raises DatasetNotFoundError when missing."""
    rng = _rng(seed, 1, sum(map(ord, name)))
    note = ""
    if name == "randomnoisy":
        n, d = random_noisy_shape
        X = make_random_noisy(n, d, signal_dim=min(50, d // 2), zeta=10.0, random_state=_int_seed(rng))
        X_train, X_test = _holdout(X, 1000 if not quick else 100, rng)
        title = f"RandomNoisy ({n} x {d})"
    elif name == "cpu":
        X, _ = load_dataset("cpu")
        X_train, X_test = _holdout(X, 800 if not quick else 80, rng)
        X_train, X_test = zscore(X_train, X_test)
        title = "CPU (cpu_act, z-scored)"
    elif name == "adult":
        X_train, _, X_test_all, _ = load_dataset("adult", return_split=True)
        X_test = X_test_all[np.sort(rng.choice(X_test_all.shape[0], size=1000 if not quick else 100, replace=False))]
        title = "Adult (a9a, sparse)"
    elif name == "forest":
        try:
            X, _ = load_dataset("forest")
        except DatasetNotFoundError as exc:
            X_train, _, X_test_all, _ = load_dataset("mnist", return_split=True)
            X_train = _subsample_rows(X_train, max_train, rng) / 255.0
            X_test = (
                X_test_all[np.sort(rng.choice(X_test_all.shape[0], size=1000 if not quick else 100, replace=False))]
                / 255.0
            )
            note = (
                f"Forest: dataset not available offline ({str(exc).splitlines()[0]}); Figure 4 uses MNIST "
                f"(pixels / 255, {X_train.shape[0]} training images) as a stand-in for a larger dense set"
            )
            return X_train, X_test, "MNIST (stand-in for Forest, not in the paper)", note
        X_train, X_test = _holdout(X, 1000 if not quick else 100, rng)
        X_train, X_test = zscore(X_train, X_test)
        title = "Forest (covtype, z-scored)"
    else:
        raise ValueError(f"unknown dataset {name!r}; choose from {sorted(FIGURE_OF)}")
    if max_train is not None and X_train.shape[0] > max_train:
        X_train = _subsample_rows(X_train, max_train, rng)
        note = f"{title}: training set subsampled to {max_train} points"
    return X_train, X_test, title, note


class _GramResidual:
    """Errors of factors ``Y`` (``G' = Y Y^T``) against one exact Gram, formed once.

    ``spectral = ||G - Y Y^T||_2 / n`` and ``frobenius = ||G - Y Y^T||_F / n^2``:
    :func:`kernelsketch.metrics.gram_residual_norms` on the held Gram, with one
    residual buffer reused for every factor -- the same quantities as
    :func:`kernelsketch.metrics.kernel_spectral_error` and
    :func:`~kernelsketch.metrics.kernel_frobenius_error`, which recompute the
    Gram's blocks on every call.
    """

    def __init__(self, X, kernel):
        from ..kernels.blocks import pairwise_kernel

        X = X.astype(np.float64)
        self.G = pairwise_kernel(X, kernel=kernel)
        self.n = self.G.shape[0]
        self._R = np.empty_like(self.G)

    def __call__(self, Y, seed=0, tol=1e-8):
        from ..metrics import gram_residual_norms

        # G - Y Y^T is symmetric but indefinite for random features: largest |eigenvalue|
        spectral, frob = gram_residual_norms(self.G, Y, tol=tol, random_state=_rng(seed, 99), out=self._R)
        return spectral / self.n, frob / self.n**2


def _make_estimator(
    method, sample_size, sketch_size, bandwidth, seed, shrink, nystroem_rank=None, basis="last_full_buffer"
):
    if method == "SKPCA":
        from ..decomposition import StreamingKPCA

        return StreamingKPCA(
            n_components=None,
            n_random_features=sample_size,
            sketch_size=sketch_size,
            shrink=shrink,
            basis=basis,
            bandwidth=bandwidth,
            random_state=seed,
            buffer_size="paper",  # the paper's buffer: its Algorithm 1 and its bounds as stated
        )
    if method == "RNCA":
        from ..decomposition import RNCA

        return RNCA(n_components=None, n_random_features=sample_size, bandwidth=bandwidth, random_state=seed)
    from ..maps import Nystroem

    rank = None if nystroem_rank is None else min(int(nystroem_rank), sample_size)
    return Nystroem(n_landmarks=sample_size, n_components=rank, bandwidth=bandwidth, random_state=seed)


def feature_scatter(feature_map, X, block=4096):
    """``(Z^T Z, ||Z||_F^2)`` of ``Z = feature_map.transform(X)``, summed over row blocks."""
    C = None
    for start in range(0, X.shape[0], block):
        Z = np.asarray(feature_map.transform(X[start : start + block]), dtype=np.float64)
        C = Z.T @ Z if C is None else C + Z.T @ Z
    return C, float(np.trace(C))


def lemma_2_2(est, scatter):
    """``(||Z Z^T - Z W W^T Z^T||_2, Delta, ||Z||_F^2 / floor(l/2), ||Z||_F^2 from the sketch, ||Z||_2^2)``.

    All undivided.  ``Z`` is every row the sketch saw and ``scatter`` its :func:`feature_scatter`: the top
    eigenvalue of ``(I - W W^T) Z^T Z (I - W W^T)`` is the left side (m x m, never an n x n array).  The last
    is the trivial bound of the left side (a projection does not grow ``Z^T Z``'s top eigenvalue): the
    lemma's bound is informative only below it, i.e. when ``floor(l/2)`` exceeds ``Z``'s stable rank
    ``||Z||_F^2 / ||Z||_2^2``.
    """
    from ..utils.eigen import top_eigenpairs

    C, _ = scatter
    W = np.asarray(est.components_, dtype=np.float64).T  # (m, directions), orthonormal columns
    CW = C @ W
    # (I - W W^T) C (I - W W^T) = C - W (W^T C) - (C W) W^T + W (W^T C W) W^T
    S = C - W @ CW.T - CW @ W.T + W @ (W.T @ CW) @ W.T
    S = (S + S.T) / 2.0
    sketch = est.sketch_
    return (
        float(top_eigenpairs(S, 1, "dense", None)[0][0]),
        float(est.error_bound_),
        sketch.squared_frobenius_ / sketch._delta_index,
        float(sketch.squared_frobenius_),
        float(top_eigenpairs((C + C.T) / 2.0, 1, "dense", None)[0][0]),
    )


def _factor(est, X):
    """``Y`` with ``G' = Y Y^T`` on the rows of X (uncentred, as in the paper)."""
    if hasattr(est, "gram_factor"):
        return est.gram_factor(X)
    return est.transform(X)


def _blas_threads():
    """Threads of each BLAS / OpenMP pool (timings depend on them)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        return "unknown"
    return ", ".join(f"{p['internal_api']}={p['num_threads']}" for p in threadpool_info()) or "none"


def _label(method, sketch_size):
    return f"SKPCA l={sketch_size}" if method == "SKPCA" else method


# ----------------------------------------------------------------------------- claims


def _curve(rows, label, key):
    pts = sorted((r["sample_size"], r[key], r["space"]) for r in rows if r["method_label"] == label)
    return pts


def _interp_loglog(xs, ys, x):
    """log-log linear interpolation of the curve (xs ascending) at x; None outside its range."""
    if not xs or x < xs[0] or x > xs[-1]:
        return None
    return float(np.exp(np.interp(np.log(x), np.log(xs), np.log(ys))))


def _verdict(ok, partly=False):
    return "holds" if ok else ("partly" if partly else "does not hold")


def _fmt(v):
    return f"{v:.3g}"


def _check_claims(rows, title):
    """One row per claim of :data:`PAPER_CLAIMS` for one dataset's averaged results."""
    g = _ClaimGrid(rows)
    found = [
        *_error_claims(g),
        *_crossover_claims(g),
        *_skpca_vs_rnca_claims(g),
        *_time_and_lemma_claims(g),
    ]
    return [
        {"dataset": title, "claim": key, "paper": PAPER_CLAIMS[key], "verdict": v, "numbers": n, "criterion": c}
        for key, v, n, c in found
    ]


class _ClaimGrid:
    """One dataset's averaged rows, indexed by (method label, sample size)."""

    def __init__(self, rows):
        self.rows = rows
        self.labels = sorted({r["method_label"] for r in rows})
        self.sk_labels = [lab for lab in self.labels if lab.startswith("SKPCA")]
        self.sizes = sorted({r["sample_size"] for r in rows})
        self.at = {(r["method_label"], r["sample_size"]): r for r in rows}

    def crossover(self, label, key):
        """First sample size where ``label`` beats Nystroem after Nystroem led, or None."""
        led = False
        for m in self.sizes:
            if (label, m) not in self.at:
                continue
            d = self.at[(label, m)][key] - self.at[("Nystrom", m)][key]
            if d > 0:
                led = True
            elif led:
                return m
        return None


def _error_claims(g):
    """Errors below 0.01; Nystroem best at the smallest sample size: ``(claim, verdict, numbers, criterion)``."""
    rows, labels, at = g.rows, g.labels, g.at
    frac = {k: float(np.mean([r[k] < 0.01 for r in rows])) for k in ("spectral_error", "frobenius_error")}
    out = [
        (
            "small_errors",
            _verdict(min(frac.values()) >= 0.5),
            f"fraction of points < 0.01: spectral {frac['spectral_error']:.2f}, "
            f"Frobenius {frac['frobenius_error']:.2f}; max spectral {_fmt(max(r['spectral_error'] for r in rows))}",
            "holds if >= half of all (method, sample size) points are < 0.01 in both errors",
        )
    ]
    m0 = g.sizes[0]
    parts, ok = [], []
    for key, name in (("spectral_error", "spectral"), ("frobenius_error", "Frobenius")):
        others = [(at[(lab, m0)][key], lab) for lab in labels if lab != "Nystrom" and (lab, m0) in at]
        best, who = min(others)
        ny = at[("Nystrom", m0)][key]
        ok.append(ny <= best)
        parts.append(f"{name} at {m0}: Nystrom {_fmt(ny)} vs best other {_fmt(best)} ({who})")
    out.append(
        (
            "nystroem_best_small",
            _verdict(all(ok), any(ok)),
            "; ".join(parts),
            "holds if Nystroem has the lowest spectral and Frobenius error at the smallest sample size",
        )
    )
    return out


def _crossover_claims(g):
    """Where RNCA and the SKPCA versions cross below Nystroem, in Frobenius and spectral error."""
    sk_labels = g.sk_labels
    c = g.crossover("RNCA", "frobenius_error")
    out = [
        (
            "frobenius_crossover_rnca",
            _verdict(c is not None),
            f"RNCA first below Nystroem at m = {c}" if c else "RNCA never crosses below Nystroem",
            "holds if Nystroem is better at small m and RNCA better at some larger m",
        )
    ]
    cs = {lab: g.crossover(lab, "frobenius_error") for lab in sk_labels}
    crossed = [lab for lab, v in cs.items() if v is not None]
    out.append(
        (
            "frobenius_crossover_skpca",
            _verdict(len(crossed) > len(sk_labels) / 2, bool(crossed)),
            f"{len(crossed)}/{len(sk_labels)} SKPCA versions cross below Nystroem: "
            + (", ".join(f"{lab.split()[1]} at m={cs[lab]}" for lab in crossed) or "none"),
            "holds if most SKPCA versions cross; partly if at least one does",
        )
    )
    cs_sp = {lab: g.crossover(lab, "spectral_error") for lab in sk_labels}
    crossed_sp = [lab for lab, v in cs_sp.items() if v is not None]
    c_rnca_sp = g.crossover("RNCA", "spectral_error")
    # as written: a cross-over for SKPCA (and none for RNCA); without any SKPCA cross-over it does not hold
    out.append(
        (
            "spectral_crossover_skpca_not_rnca",
            _verdict(bool(crossed_sp) and c_rnca_sp is None, bool(crossed_sp)),
            f"{len(crossed_sp)}/{len(sk_labels)} SKPCA versions cross ("
            + (", ".join(f"{lab.split()[1]} at m={cs_sp[lab]}" for lab in crossed_sp) or "none")
            + f"); RNCA {'crosses at m = ' + str(c_rnca_sp) if c_rnca_sp else 'does not cross'}",
            "holds if some SKPCA version crosses below Nystroem in spectral error and RNCA does not; partly if "
            "SKPCA and RNCA both cross; does not hold if no SKPCA version crosses",
        )
    )
    return out


def _skpca_vs_rnca_claims(g):
    """SKPCA <= RNCA at equal sample size and at equal space (log-log interpolation at RNCA's space)."""
    rows, sk_labels, sizes, at = g.rows, g.sk_labels, g.sizes, g.at
    parts, fracs = [], []
    for key, name in (("spectral_error", "spectral"), ("frobenius_error", "Frobenius")):
        rn = _curve(rows, "RNCA", key)
        wins = total = best_wins = best_total = 0
        for _, err_r, s in rn:
            vals = []
            for lab in sk_labels:
                cur = _curve(rows, lab, key)
                v = _interp_loglog([p[2] for p in cur], [p[1] for p in cur], s)
                if v is not None:
                    vals.append(v)
                    total += 1
                    wins += v <= err_r
            if vals:
                best_total += 1
                best_wins += min(vals) <= err_r
        f = wins / total if total else float("nan")
        fracs.append(f)
        parts.append(
            f"{name}: SKPCA <= RNCA in {wins}/{total} (space point, l) pairs, best l in "
            f"{best_wins}/{best_total} space points"
        )
    eq_size = [_same_size_fraction(g, key) for key in ("spectral_error", "frobenius_error")]
    n_pairs = len([1 for lab in sk_labels for m in sizes if (lab, m) in at and ("RNCA", m) in at])
    ok_all = all(f >= 0.5 for f in fracs if np.isfinite(f))
    return [
        (
            "skpca_le_rnca_same_size",
            _verdict(min(eq_size) >= 0.5, max(eq_size) >= 0.5),
            f"SKPCA <= RNCA at equal sample size m in {eq_size[0]:.2f} (spectral) and {eq_size[1]:.2f} "
            f"(Frobenius) of the {n_pairs} (l, m) pairs",
            "the claim as written (same size = same m): holds if >= half of the (l, m) pairs for both errors; "
            "partly for one",
        ),
        (
            "skpca_le_rnca_equal_space",
            _verdict(ok_all and all(np.isfinite(fracs)), any(f >= 0.5 for f in fracs)),
            "; ".join(parts),
            "holds if SKPCA <= RNCA in >= half of the comparable (space, l) pairs for both errors; partly for one",
        ),
    ]


def _time_and_lemma_claims(g):
    """Train times over the whole m grid, Lemma 2.2 on the whole training set, test times at the largest m."""
    rows, sk_labels, sizes, at = g.rows, g.sk_labels, g.sizes, g.at
    m1 = sizes[-1]
    per_m = _train_time_by_m(g)
    far = [m for m, f, _ in per_m if f]
    slow = [m for m, _, sl in per_m if sl]
    sk_train = {lab: at[(lab, m1)]["train_time_s"] for lab in sk_labels if (lab, m1) in at}
    rn_train = at[("RNCA", m1)]["train_time_s"]
    ratios = np.array([rn_train / v for v in sk_train.values()])
    ny_train = at[("Nystrom", m1)]["train_time_s"]
    slowest = max(("RNCA", rn_train), ("Nystrom", ny_train), *list(sk_train.items()), key=lambda kv: kv[1])[0]
    total = len(per_m)
    out = [
        (
            "skpca_train_far_below_rnca",
            _verdict(len(far) == total and len(slow) == total, bool(far or slow)),
            f"RNCA >= 2x the median SKPCA version and slower than each at {len(far)}/{total} sample sizes "
            f"({', '.join(map(str, far)) or 'none'}); RNCA the slowest method at {len(slow)}/{total} "
            f"({', '.join(map(str, slow)) or 'none'}); at m = {m1}: RNCA {_fmt(rn_train)} CPU s, SKPCA "
            f"{_fmt(min(sk_train.values()))}-{_fmt(max(sk_train.values()))} CPU s (RNCA / SKPCA = "
            f"{_fmt(ratios.min())}-{_fmt(ratios.max())}x), Nystrom {_fmt(ny_train)} CPU s; slowest: {slowest}",
            "a claim about the trend over sample size: holds if at every m of the grid RNCA is slower than every "
            "SKPCA version, >= 2x the median one, and the slowest method; partly if at some m (listed)",
        ),
        _lemma_2_2_claim(rows),
    ]
    sk_test = {lab: at[(lab, m1)]["test_time_per_point_s"] for lab in sk_labels if (lab, m1) in at}
    ny_test = at[("Nystrom", m1)]["test_time_per_point_s"]
    r_test = np.array([ny_test / v for v in sk_test.values()])
    out.append(
        (
            "nystroem_test_orders_above_skpca",
            _verdict(r_test.min() >= 100, r_test.min() >= 10),
            f"at m = {m1}: Nystrom {_fmt(ny_test)} CPU s/point, SKPCA {_fmt(min(sk_test.values()))}-"
            f"{_fmt(max(sk_test.values()))} CPU s/point (ratio {_fmt(r_test.min())}-{_fmt(r_test.max())}x)",
            "holds if >= 100x over every SKPCA version at the largest m; partly if >= 10x",
        )
    )
    return out


def _same_size_fraction(g, key):
    """Fraction of the (l, m) pairs where an SKPCA version's ``key`` error is <= RNCA's at the same m."""
    pairs = [
        (g.at[(lab, m)][key], g.at[("RNCA", m)][key])
        for lab in g.sk_labels
        for m in g.sizes
        if (lab, m) in g.at and ("RNCA", m) in g.at
    ]
    return sum(a <= b for a, b in pairs) / max(len(pairs), 1)


def _train_time_by_m(g):
    """Per m of the grid: ``(m, RNCA slower than every SKPCA version and >= 2x the median one, RNCA slowest)``."""
    at, per_m = g.at, []
    for m in g.sizes:
        sk = {lab: at[(lab, m)]["train_time_s"] for lab in g.sk_labels if (lab, m) in at}
        if not sk or ("RNCA", m) not in at:
            continue
        rn = at[("RNCA", m)]["train_time_s"]
        ny = at[("Nystrom", m)]["train_time_s"] if ("Nystrom", m) in at else -np.inf
        r = np.array([rn / v for v in sk.values()])
        per_m.append((m, bool(r.min() > 1 and np.median(r) >= 2), bool(rn >= max(ny, *sk.values()))))
    return per_m


def _lemma_2_2_claim(rows):
    """Lemma 2.2's sketch error on the whole training set against its bound and FD's certificate (same rows).

    The verdict is :func:`~kernelsketch.experiments._bounds.grade_bound`'s: the bound is also set against
    the trivial ``||Z||_2^2``, and where it is not below it the lemma "holds" vacuously.
    """
    from ._bounds import grade_bound

    lem = [r for r in rows if r.get("method") == "SKPCA" and np.isfinite(r.get("sketch_error", np.nan))]
    if not lem:
        return ("lemma_2_2_sketch_error", "not measured", "no SKPCA rows with a measured sketch error", "-")
    worst_cert = max(lem, key=lambda r: r["sketch_error"] / max(r["fd_delta"], 1e-300))
    worst_bound = max(lem, key=lambda r: r["sketch_error"] / max(r["lemma_bound"], 1e-300))
    over = sum(r["sketch_error"] > r["lemma_bound"] * (1 + 1e-9) for r in lem)
    col = {k: np.array([r[k] for r in lem]) for k in ("sketch_error", "lemma_bound", "lemma_trivial_bound")}
    grade = grade_bound(col["sketch_error"], col["lemma_bound"], col["lemma_trivial_bound"], unit="points")
    vacuous = [r for r in lem if r["lemma_bound"] >= r["lemma_trivial_bound"] * (1 - 1e-9)]
    return (
        "lemma_2_2_sketch_error",
        grade,
        f"{len(lem) - over}/{len(lem)} SKPCA points within ||Z||_F^2/floor(l/2) (all on the whole training set, "
        f"divided by n_train); largest "
        f"ratio to that bound {_fmt(worst_bound['sketch_error'] / worst_bound['lemma_bound'])} "
        f"({worst_bound['method_label']}, m={worst_bound['sample_size']}); to the sketch's certificate Delta "
        f"{_fmt(worst_cert['sketch_error'] / worst_cert['fd_delta'])} "
        f"({worst_cert['method_label']}, m={worst_cert['sample_size']}); the bound is at or above the trivial "
        f"||Z||_2^2 at {len(vacuous)}/{len(lem)} points"
        + (f" (l = {', '.join(map(str, sorted({r['sketch_size'] for r in vacuous})))})" if vacuous else ""),
        "holds if ||Z Z^T - Z W W^T Z^T||_2, Z every training row the sketch saw, is below the lemma's bound "
        "||Z||_F^2/floor(l/2) of the same rows at every (l, m); vacuous where that bound is not below the "
        "trivial ||Z||_2^2 (floor(l/2) at most Z's stable rank ||Z||_F^2/||Z||_2^2); the certificate ratio is "
        "<= 1 whenever W spans the final sketch (basis='sketch')",
    )


# ----------------------------------------------------------------------------- plotting


def _plot(rows, title, fig_name, params, plt):
    from matplotlib.ticker import LogFormatterSciNotation, LogLocator, NullFormatter

    labels = [f"SKPCA l={l}" for l in params["sketch_sizes"]] + ["RNCA", "Nystrom"]
    cmap = plt.get_cmap("viridis")
    style = {
        f"SKPCA l={l}": dict(color=cmap(i / max(len(params["sketch_sizes"]) - 1, 1)), marker="o", ms=3, lw=1)
        for i, l in enumerate(params["sketch_sizes"])
    }
    style["RNCA"] = dict(color="tab:red", marker="s", ms=4, lw=1.6)
    style["Nystrom"] = dict(color="black", marker="^", ms=4, lw=1.6)
    panels = [
        ("sample_size", "spectral_error", "kernel spectral error  ||G-G'||_2 / n"),
        ("sample_size", "frobenius_error", "kernel Frobenius error  ||G-G'||_F / n^2"),
        ("sample_size", "train_time_s", "train time (CPU s)"),
        ("space", "spectral_error", "kernel spectral error"),
        ("space", "frobenius_error", "kernel Frobenius error"),
        ("sample_size", "test_time_per_point_s", "test time per point (CPU s)"),
    ]
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5))
    for ax, (x, y, ylabel) in zip(axes.ravel(), panels, strict=True):
        for lab in labels:
            pts = sorted((r[x], r[y]) for r in rows if r["method_label"] == lab)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], label=lab, **style[lab])
        ax.set_xscale("log")
        ax.set_yscale("log")
        # unlabelled minor ticks: matplotlib labels them on log axes spanning < 1 decade, and laying out
        # those labels was most of a quick run's time
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        lo, hi = ax.get_ylim()
        if hi / lo < 10:  # less than a decade: label 2x and 5x ticks so the axis can be read
            ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_major_formatter(LogFormatterSciNotation(labelOnlyBase=False))
        ax.set_xlabel("sample size (m or c)" if x == "sample_size" else "space (floats)")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="major", alpha=0.3)
    axes[0, 0].legend(fontsize=7, ncol=2)
    r0 = rows[0]
    fig.suptitle(
        f"{fig_name.replace('figure', 'Figure ')}: {title}  (n_train={r0['n_train']}, d={r0['d']}, "
        f"errors on n_eval={r0['n_eval']}, h={r0['bandwidth']:.4g}, seed {params['seed']})",
        fontsize=10,
    )
    fig.subplots_adjust(wspace=0.28, hspace=0.25, top=0.93)
    return fig


# ----------------------------------------------------------------------------- the reproduction


def dataset_bandwidth(X_train, seed, ds_index, percentile):
    """The bandwidth every method shares on one dataset: a percentile of sampled training distances."""
    from ..kernels.bandwidth import estimate_bandwidth

    rs = _int_seed(_rng(seed, 2, ds_index))
    return float(estimate_bandwidth(X_train, "percentile", percentile=percentile, random_state=rs))


def evaluation_rows(X_train, n_eval, seed, ds_index):
    """The uniform subsample of training rows the Gram errors are measured on."""
    return _subsample_rows(X_train, n_eval, _rng(seed, 3, ds_index))


def grid_jobs(sample_sizes, sketch_sizes, n_train):
    """``(m, method, l)`` of the grid: SKPCA only for ``l < m``, Nystroem only for ``m <= n_train``."""
    return [
        (m, meth, l)
        for m in sample_sizes
        for meth, l in [("SKPCA", l) for l in sketch_sizes] + [("RNCA", None), ("Nystrom", None)]
        if not (meth == "SKPCA" and l >= m) and not (meth == "Nystrom" and m > n_train)
    ]


def estimator_seed(seed, ds_index, repetition, m, method):
    """The seed of one fit: every random-feature method at ``(repetition, m)`` shares its features."""
    return _int_seed(_rng(seed, 4, ds_index, repetition, m, method == "Nystrom"))


def resolve_sizes(quick, sample_sizes, n_eval, max_train, forest_max_train, random_noisy_shape):
    """The sizes :func:`figures` runs at (its defaults, or ``quick``'s), shared with ``skpca-lemmas``."""
    if sample_sizes is None:
        sample_sizes = (8, 32, 96) if quick else SAMPLE_SIZES
    n_eval = n_eval if n_eval is not None else (300 if quick else 5000)
    if quick:
        max_train = min(max_train or 800, 800)
    forest_max_train = forest_max_train if forest_max_train is not None else (max_train or 20000)
    if random_noisy_shape is None:
        random_noisy_shape = (900, 200) if quick else (20000, 1000)
    return sample_sizes, n_eval, max_train, forest_max_train, random_noisy_shape


def figures(
    output_dir,
    *,
    quick=False,
    seed=0,
    progress=None,
    datasets=("randomnoisy", "cpu", "adult", "forest"),
    sketch_sizes=SKETCH_SIZES,
    sample_sizes=None,
    n_eval=None,
    n_repetitions=None,
    shrink="half",
    bandwidth_percentile=25.0,
    bandwidth=None,
    nystroem_rank=None,
    max_train=None,
    forest_max_train=None,
    random_noisy_shape=None,
    basis="last_full_buffer",
):
    """Figures 1-4: error, space and time of SKPCA, RNCA and Nystroem against sample size.

    Parameters
    ----------
    output_dir : path-like
    quick : bool
        Tiny subsets (training sets of at most 800 points, 100 test points,
        errors on 300 points), sample sizes ``(8, 32, 96)``, one repetition,
        for tests.
    seed : int
    progress : bool or None
        Show progress bars (None: when stderr is a terminal).
    datasets : sequence of str
        Any of ``"randomnoisy"``, ``"cpu"``, ``"adult"``, ``"forest"``
        (MNIST stands in for Forest when Forest's file is missing).
    sketch_sizes : sequence of int
        SKPCA's ``l`` (the paper's ``{2, 5, 10, 20, 30, 50}``).
    sample_sizes : sequence of int, optional
        The log grid of ``m`` (random features) and ``c`` (landmarks);
        default ``16, 32, ..., 2048``.
    n_eval : int, optional
        Training points the errors are measured on (default 5000).
    n_repetitions : int, optional
        Independent draws of features/landmarks, averaged (default 1).
    shrink : {"half", "l"}
        Frequent Directions rule of SKPCA (``"half"``: the paper's Algorithm 1).
    bandwidth_percentile : float
        ``h`` = this percentile of interpoint distances of the training set.
    bandwidth : float, optional
        A fixed ``h`` for every dataset instead (e.g. ``sqrt(2)``: the
        kernel ``exp(-|x - y|^2 / 2)`` of the paper's Section 2).
    nystroem_rank : int, optional
        Rank ``k`` of Nystroem's pseudo-inverse (``G' = C W_k^+ C^T``, the
        paper's Section 1.2 form); default None: the full pseudo-inverse.
    max_train : int, optional
        Cap on training points for every dataset (default: none).
    forest_max_train : int, optional
        Training images of the MNIST stand-in for Forest (default 20000).
    random_noisy_shape : (int, int), optional
        Default ``(20000, 1000)``, the paper's.
    basis : {"last_full_buffer", "sketch"}
        SKPCA's ``W``: Algorithm 1 as printed (the right singular vectors of
        the last full buffer, before its shrink; the default here) or the row
        space of the final sketch (the library's default); see
        :class:`~kernelsketch.decomposition.StreamingKPCA`.

    Returns
    -------
    dict
        ``tables``: ``results`` (one row per dataset, method and sample size:
        errors, train/test time, space), ``claims`` (one row per dataset and
        claim: verdict and numbers), ``metric_check``; ``figures``;
        ``params``; ``notes`` (unavailable datasets, stand-ins, subsamples).
    """
    sample_sizes, n_eval, max_train, forest_max_train, random_noisy_shape = resolve_sizes(
        quick, sample_sizes, n_eval, max_train, forest_max_train, random_noisy_shape
    )
    reps = n_repetitions if n_repetitions is not None else 1
    params = _figures_params(
        quick=quick,
        seed=seed,
        datasets=list(datasets),
        sketch_sizes=list(sketch_sizes),
        sample_sizes=list(sample_sizes),
        n_eval=n_eval,
        n_repetitions=reps,
        shrink=shrink,
        max_train=max_train,
        forest_max_train=forest_max_train,
        random_noisy_shape=list(random_noisy_shape),
        bandwidth=bandwidth,
        bandwidth_percentile=bandwidth_percentile,
        nystroem_rank=nystroem_rank,
        basis=basis,
    )
    rep = Report("skpca-figures", output_dir, params)
    plt = pyplot()
    all_rows, claims, checks = [], [], []
    setup = dict(
        seed=seed,
        reps=reps,
        sample_sizes=sample_sizes,
        sketch_sizes=sketch_sizes,
        n_eval=n_eval,
        shrink=shrink,
        nystroem_rank=nystroem_rank,
        basis=basis,
        bandwidth=bandwidth,
        bandwidth_percentile=bandwidth_percentile,
        progress=progress,
    )
    for ds_index, name in enumerate(datasets):
        fig_name, _ = FIGURE_OF[name]
        cap = forest_max_train if name == "forest" else max_train
        try:
            X_train, X_test, title, note = _load_split(
                name, seed, quick=quick, max_train=cap, random_noisy_shape=random_noisy_shape
            )
        except DatasetNotFoundError as exc:
            rep.note(f"{name}: dataset not available offline, skipped ({str(exc).splitlines()[0]})")
            continue
        if note:
            rep.note(note)
        rows = _dataset_rows(rep, X_train, X_test, title, fig_name, ds_index, checks, **setup)
        rep.figure(_plot(rows, title, fig_name, params, plt), fig_name)
        claims.extend(_check_claims(rows, title))
        all_rows.extend(rows)
    rep.table(
        "results",
        all_rows,
        RESULT_COLUMNS,
        title="Kernel spectral / Frobenius error, train time, test time per point and space",
    )
    rep.table(
        "claims",
        claims,
        ["dataset", "claim", "verdict", "numbers", "criterion", "paper"],
        title="The paper's claims checked on our runs",
    )
    rep.table(
        "metric_check",
        checks,
        title="Cached-Gram evaluator vs kernelsketch.metrics (kernel_spectral_error, kernel_frobenius_error)",
    )
    return rep.finish()


#: the CPU supplements of ``docs/results/skpca-figures``: folder name -> the one option each changes
CPU_SUPPLEMENTS = {
    "supplement-cpu-basis-sketch": {"basis": "sketch"},
    "supplement-cpu-basis-last_full_buffer": {"basis": "last_full_buffer"},
    "supplement-cpu-nystroem-rank10": {"nystroem_rank": 10},
    "supplement-cpu-shrink-l": {"shrink": "l"},
    "supplement-cpu-paper-kernel": {"bandwidth": float(np.sqrt(2.0))},
}


def cpu_supplements(output_dir, *, names=None, seed=0, progress=None):
    """Run the CPU supplements of :func:`figures` (:data:`CPU_SUPPLEMENTS`) into ``output_dir/NAME``.

    Each is :func:`figures` on CPU alone with one option changed, so each writes the same tables as the main run
    (the results page reads them beside it).  A folder that exists is replaced.

    Parameters
    ----------
    output_dir : path-like
        The main run's folder (``docs/results/skpca-figures`` for the committed pages).
    names : sequence of str, optional
        Which supplements (keys of :data:`CPU_SUPPLEMENTS`); default all.
    seed : int
    progress : bool or None

    Returns
    -------
    list of pathlib.Path
        The folders written.
    """
    import shutil
    from pathlib import Path

    names = list(CPU_SUPPLEMENTS) if names is None else list(names)
    unknown = sorted(set(names) - set(CPU_SUPPLEMENTS))
    if unknown:
        raise ValueError(f"unknown supplement(s) {unknown}; choose from {sorted(CPU_SUPPLEMENTS)}")
    written = []
    for name in names:
        out = Path(output_dir) / name
        shutil.rmtree(out, ignore_errors=True)
        figures(out, datasets=("cpu",), seed=seed, progress=progress, **CPU_SUPPLEMENTS[name])
        written.append(out)
    return written


#: the columns of skpca-figures' results.csv, in order
RESULT_COLUMNS = [
    "dataset",
    "figure",
    "method_label",
    "method",
    "sketch_size",
    "sample_size",
    "space",
    "spectral_error",
    "frobenius_error",
    "train_time_s",
    "test_time_per_point_s",
    "train_wall_s",
    "test_wall_per_point_s",
    "n_train",
    "n_test",
    "n_eval",
    "d",
    "bandwidth",
    "repetitions",
    "sketch_error",
    "fd_delta",
    "lemma_bound",
    "lemma_trivial_bound",
]


def _figures_params(*, bandwidth, bandwidth_percentile, nystroem_rank, basis, **given):
    """The parameters skpca-figures records (``params.json``): what was given and what each method is."""
    return dict(
        **given,
        kernel="gaussian exp(-|x-y|^2/h^2)",
        bandwidth=(
            f"fixed h = {bandwidth:g}"
            if bandwidth is not None
            else f"{bandwidth_percentile:g}th percentile of training interpoint distances (100000 sampled pairs)"
        )
        + ", shared by all methods",
        test_set="1000 points (CPU 800; quick 100 / 80)",
        errors="||G-G'||_2/n and ||G-G'||_F/n^2 on a uniform subsample of n_eval training points",
        lemma_2_2="sketch_error, fd_delta and lemma_bound on the whole training set (Z^T Z summed over row "
        "blocks), each divided by n_train",
        space="SKPCA m d + m l, Nystrom c^2 + c d, RNCA m^2 + m d (floats)",
        skpca=f"StreamingKPCA(basis={basis!r}), every direction with a nonzero singular value (n_components=None)",
        basis=basis,
        rnca="RNCA, all m components (G' = Z Z^T)",
        nystrom="Nystroem, c uniform landmarks, "
        + (
            "full rank (pseudo-inverse of W)" if nystroem_rank is None else f"rank-{nystroem_rank} pseudo-inverse W_k^+"
        ),
        train_time="CPU time (process_time) of fit on the training set (bandwidth given); wall time in train_wall_s",
        test_time="CPU time of transform of the test set / its size; wall time in test_wall_per_point_s",
        blas_threads=_blas_threads(),
    )


def _dataset_rows(
    rep,
    X_train,
    X_test,
    title,
    fig_name,
    ds_index,
    checks,
    *,
    seed,
    reps,
    sample_sizes,
    sketch_sizes,
    n_eval,
    shrink,
    nystroem_rank,
    basis,
    bandwidth,
    bandwidth_percentile,
    progress,
):
    """Every (repetition, m, method, l) job on one data set, averaged over repetitions: the result rows."""
    from ..kernels.blocks import get_kernel

    n_train, d = X_train.shape
    h = dataset_bandwidth(X_train, seed, ds_index, bandwidth_percentile) if bandwidth is None else float(bandwidth)
    kern = get_kernel("gaussian", bandwidth=h)
    X_eval = evaluation_rows(X_train, n_eval, seed, ds_index)
    ne = X_eval.shape[0]
    rep.note(
        f"{title}: n_train={n_train}, n_test={X_test.shape[0]}, d={d}, bandwidth h={h:.6g}; errors on "
        + (
            f"a uniform subsample of {ne} of the {n_train} training points"
            if ne < n_train
            else f"all {n_train} training points"
        )
    )
    t_dataset = time.perf_counter()
    residual = _GramResidual(X_eval, kern)
    jobs = [(r, m, meth, l) for r in range(reps) for m, meth, l in grid_jobs(sample_sizes, sketch_sizes, n_train)]
    acc, check_done, scatters = {}, False, {}
    for r, m, meth, l in _progress(jobs, total=len(jobs), desc=f"skpca {title}", enabled=progress):
        # common random numbers: every random-feature method at (r, m) uses the same features, so
        # SKPCA and RNCA differ only by the sketch; Nystroem draws its landmarks from its own stream
        est_seed = estimator_seed(seed, ds_index, r, m, meth)
        est = _make_estimator(meth, m, l, h, est_seed, shrink, nystroem_rank, basis)
        times = _fit_and_time(est, X_train, X_test)
        Y = _factor(est, X_eval)
        spec, frob = residual(Y, seed=est_seed)
        if not check_done and meth == "Nystrom":  # once per data set
            checks.append(_metric_check(X_eval, Y, kern, est_seed, title, _label(meth, l), m))
            check_done = True
        acc.setdefault((meth, l, m), []).append((spec, frob, *times, *_lemma_2_2(est, meth, X_train, scatters, (r, m))))
    del residual
    rep.note(f"{title}: {len(jobs)} fits in {time.perf_counter() - t_dataset:.1f} s")
    shared = {"dataset": title, "figure": fig_name, "n_train": n_train, "n_test": X_test.shape[0], "n_eval": ne}
    rows = [_result_row(meth, l, m, vals, d, h, shared) for (meth, l, m), vals in acc.items()]
    rows.sort(key=lambda r: (r["method"] != "SKPCA", r["method"], r["sketch_size"] or 0, r["sample_size"]))
    return rows


def _fit_and_time(est, X_train, X_test):
    """Fit on the training rows, transform the test rows: CPU and wall seconds (test ones per point)."""
    w0, c0 = time.perf_counter(), time.process_time()
    est.fit(X_train)
    w1, c1 = time.perf_counter(), time.process_time()
    est.transform(X_test)
    w2, c2 = time.perf_counter(), time.process_time()
    n_te = X_test.shape[0]
    return (c1 - c0, (c2 - c1) / n_te, w1 - w0, (w2 - w1) / n_te)


def _lemma_2_2(est, meth, X_train, scatters, key):
    """SKPCA's Lemma 2.2 quantity, FD's certificate and the bound on the whole training set (each / n_train).

    One row set for all three: ``Z`` is every training row the sketch saw (the lemma's quantity), so the
    ratios are the lemma's own.  The certificate Delta is >= the quantity when W spans the final sketch;
    the bound is ``||Z||_F^2 / floor(l / 2)``, from the shrink by the floor(l/2)-th squared singular value.
    ``scatters`` caches ``Z^T Z`` by ``key`` (every SKPCA version at one (repetition, m) shares the features).
    The fourth value is the trivial bound ``||Z||_2^2 / n_train``.  NaN for the other methods.
    """
    if meth != "SKPCA":
        return (np.nan, np.nan, np.nan, np.nan)
    if key not in scatters:
        scatters.clear()  # one m at a time: jobs come in m order
        scatters[key] = feature_scatter(est.feature_map_, X_train)
    err, delta, bound, _, trivial = lemma_2_2(est, scatters[key])
    n = X_train.shape[0]
    return (err / n, delta / n, bound / n, trivial / n)


def _metric_check(X_eval, Y, kern, est_seed, title, label, m):
    """The cached-Gram evaluator against the library's metrics on 1,000 points (one row of metric_check)."""
    from ..metrics import kernel_frobenius_error, kernel_spectral_error

    k = min(X_eval.shape[0], 1000)
    ours = _GramResidual(X_eval[:k], kern)(Y[:k], seed=est_seed)
    lib = (
        kernel_spectral_error(X_eval[:k], Y[:k], kern, random_state=0),
        kernel_frobenius_error(X_eval[:k], Y[:k], kern),
    )
    return {
        "dataset": title,
        "method": label,
        "sample_size": m,
        "n_points": k,
        "spectral_ours": ours[0],
        "spectral_metrics": lib[0],
        "frobenius_ours": ours[1],
        "frobenius_metrics": lib[1],
        "max_rel_diff": max(abs(ours[0] - lib[0]) / max(lib[0], 1e-300), abs(ours[1] - lib[1]) / max(lib[1], 1e-300)),
    }


def _result_row(meth, l, m, vals, d, h, shared):
    """One results.csv row: the mean over repetitions of a (method, l, m) job's measurements."""
    v = np.mean(np.asarray(vals), axis=0)
    return {
        "dataset": shared["dataset"],
        "figure": shared["figure"],
        "method": meth,
        "sketch_size": l if l else "",
        "method_label": _label(meth, l),
        "sample_size": m,
        "space": space_usage(meth, m, d, l),
        "spectral_error": float(v[0]),
        "frobenius_error": float(v[1]),
        "train_time_s": float(v[2]),
        "test_time_per_point_s": float(v[3]),
        "train_wall_s": float(v[4]),
        "test_wall_per_point_s": float(v[5]),
        "n_train": shared["n_train"],
        "n_test": shared["n_test"],
        "n_eval": shared["n_eval"],
        "d": d,
        "bandwidth": h,
        "repetitions": len(vals),
        "sketch_error": float(v[6]),
        "fd_delta": float(v[7]),
        "lemma_bound": float(v[8]),
        "lemma_trivial_bound": float(v[9]),
    }


# ----------------------------------------------------------------------------- the results page
def page_values(csv, params):
    """What ``docs/results/templates/streaming_kpca.md.j2`` states, from skpca-figures' CSVs and its supplements."""
    res = csv("skpca-figures/results")
    claims = csv("skpca-figures/claims")
    checks = csv("skpca-figures/metric_check")
    sets = res.distinct("dataset")
    sizes = sorted(set(res.col("sample_size")))
    m0, m1 = sizes[0], sizes[-1]
    grids = {d: _ClaimGrid(list(res.where(dataset=d))) for d in sets}

    def at(d, label, m, key):
        r = grids[d].at.get((label, m))
        return None if r is None else r[key]

    def ratios(d, m, num, key):
        g = grids[d]
        return [at(d, num, m, key) / at(d, lab, m, key) for lab in g.sk_labels if (lab, m) in g.at]

    errors = ("spectral_error", "frobenius_error")
    same_size = {(d, key): _same_size_fraction(g, key) for d, g in grids.items() for key in errors}
    train = {d: _train_time_by_m(g) for d, g in grids.items()}
    rnca_faster_upto = {
        d: max(
            (m for m in sizes if at(d, "RNCA", m, "train_time_s") < min(_sk_train_times(grids[d], m))),
            default=None,
        )
        for d in sets
    }
    sk = res.where(method="SKPCA")
    lemma = [r for r in sk if r["sketch_error"] == r["sketch_error"]]
    dims = {d: res.where(dataset=d)[0]["d"] for d in sets}
    return {
        "sets": sets,
        "m0": m0,
        "m1": m1,
        "at": at,
        "ratios": ratios,
        "claims": claims,
        "claim_keys": claims.distinct("claim"),
        "metric_check": max(checks.col("max_rel_diff")),
        "l2": [r["spectral_error"] for r in sk.where(sketch_size=2)],
        "frac_small": {
            d: (
                np.mean([r["spectral_error"] < 0.01 for r in res.where(dataset=d)]),
                np.mean([r["frobenius_error"] < 0.01 for r in res.where(dataset=d)]),
            )
            for d in sets
        },
        "same_size": same_size,
        "train": train,
        "rnca_faster_upto": rnca_faster_upto,
        "test_ratio": {d: ratios(d, m1, "Nystrom", "test_time_per_point_s") for d in sets},
        "train_ratio": {d: ratios(d, m1, "RNCA", "train_time_s") for d in sets},
        "dims": dims,
        "lemma_bound_ratio": max(r["sketch_error"] / r["lemma_bound"] for r in lemma),
        "lemma_delta_ratio": max(r["sketch_error"] / r["fd_delta"] for r in lemma),
        "lemma_vacuous": [r for r in lemma if r["lemma_bound"] >= r["lemma_trivial_bound"] * (1 - 1e-9)],
        "lemma_stable_rank": [r["lemma_bound"] * (r["sketch_size"] // 2) / r["lemma_trivial_bound"] for r in lemma],
        "lemma_points": len(lemma),
        "rnca_m1": [at(d, "RNCA", m1, "spectral_error") for d in sets],
        "max_frob": max(res.col("frobenius_error")),
        "n_fits": len(res),
        "elapsed": params("skpca-figures")["elapsed_seconds"],
        "ny_train_m1": {d: at(d, "Nystrom", m1, "train_time_s") for d in sets},
        "sk_train_m1": {d: _sk_train_times(grids[d], m1) for d in sets},
        **_supplement_values(csv, params, m1),
    }


def _supplement_values(csv, params, m1):
    """The CPU supplements' numbers the page states: rank-10 Nystroem, the l-shrink, the two bases of ``W``."""
    sup = {
        name: csv(f"skpca-figures/supplement-cpu-{name}/results")
        for name in ("nystroem-rank10", "shrink-l", "basis-sketch", "basis-last_full_buffer")
    }
    r10 = sup["nystroem-rank10"]
    ny10 = {r["sample_size"]: r for r in r10.where(method="Nystrom")}
    rn10 = {r["sample_size"]: r for r in r10.where(method="RNCA")}
    cross10 = next((m for m in sorted(rn10) if rn10[m]["frobenius_error"] < ny10[m]["frobenius_error"]), None)
    cross10_spec = next((m for m in sorted(rn10) if rn10[m]["spectral_error"] < ny10[m]["spectral_error"]), None)
    bs, bl = sup["basis-sketch"], sup["basis-last_full_buffer"]
    basis_pairs = [
        (a, bl.one(method_label=a["method_label"], sample_size=a["sample_size"])) for a in bs.where(method="SKPCA")
    ]
    return {
        "ny10": ny10,
        "rn10": rn10,
        "sk50_10": {r["sample_size"]: r for r in r10.where(method_label="SKPCA l=50")},
        "cross10": cross10,
        "cross10_spec": cross10_spec,
        "test10": [
            r10.one(method="Nystrom", sample_size=m1)["test_time_per_point_s"] / r["test_time_per_point_s"]
            for r in r10.where(method="SKPCA", sample_size=m1)
        ],
        "shrink_l": {
            r["method_label"]: r for r in sup["shrink-l"].where(sample_size=m1) if r["method"] in ("SKPCA", "RNCA")
        },
        "basis": {(a["sketch_size"], a["sample_size"]): (a, b) for a, b in basis_pairs},
        "basis_spec_wins": sum(b["spectral_error"] < a["spectral_error"] for a, b in basis_pairs),
        "basis_frob_wins": sum(b["frobenius_error"] < a["frobenius_error"] for a, b in basis_pairs),
        "basis_n": len(basis_pairs),
        "basis_l5_sketch_wins_from": min(
            (
                m
                for m in sorted({a["sample_size"] for a, _ in basis_pairs if a["sketch_size"] == 5})
                if all(
                    a["spectral_error"] < b["spectral_error"]
                    for a, b in basis_pairs
                    if a["sketch_size"] == 5 and a["sample_size"] >= m
                )
            ),
            default=None,
        ),
        "basis_l50_agree": max(
            abs(a["spectral_error"] / b["spectral_error"] - 1) for a, b in basis_pairs if a["sketch_size"] == 50
        ),
        "basis_seconds": [
            params(f"skpca-figures/supplement-cpu-basis-{b}")["elapsed_seconds"] for b in ("sketch", "last_full_buffer")
        ],
    }


def _sk_train_times(g, m):
    """The SKPCA versions' train times at ``m`` (an empty list when none ran there)."""
    return [g.at[(lab, m)]["train_time_s"] for lab in g.sk_labels if (lab, m) in g.at] or [np.inf]
