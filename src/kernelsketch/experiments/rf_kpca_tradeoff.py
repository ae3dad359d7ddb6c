r"""Reproduction of Sriperumbudur & Sterge, "Approximate kernel PCA using random features", made measurable.

The paper compares exact empirical KPCA (EKPCA) with random-feature KPCA
(RF-EKPCA) through the *reconstruct-then-embed* (R-E) error of the kernel
sections: project ``k(., x) - mu`` onto the top-``l`` principal directions,
reconstruct, embed the reconstructed function into ``L2(rho)`` and compare it
with ``k(., x) - mu`` there.  Its claims (Theorems 6, Corollary 7 and A.1):
RF-EKPCA's error approaches EKPCA's as the number ``m`` of random features
grows, both errors fall with ``n`` when ``l`` grows slowly enough, and
``m = n^theta`` with ``theta < 1`` can suffice, at ``O(n m^2)`` instead of
``O(n^2 l)``-``O(n^3)`` cost.  Our copy of the paper lost its formulas, so
:func:`tradeoff` computes the following estimator, written out in full.

The estimator
-------------
Samples, all i.i.d. from ``rho`` and mutually independent: training points
``x_1..x_n``; held-out points ``x'_1..x'_T``; reference points ``y_1..y_R``
(the ``L2(rho)`` integral); for real data a mean sample ``u_1..u_M``.
Kernel: Gaussian ``k(x, y) = exp(-||x - y||^2 / h^2)``.

* Truth.  ``g_x(y) = k(y, x) - mu(y)`` with the mean embedding
  ``mu(y) = E k(y, X)``.  For the synthetic sets ``mu`` is exact:
  ``X ~ N(0, s^2)`` (1-D) gives ``mu(y) = h / sqrt(h^2 + 2 s^2)
  exp(-y^2 / (h^2 + 2 s^2))``; ``X ~ Cauchy(0, 1)`` gives the Voigt profile
  ``mu(y) = Re w((y + i) / h)`` with ``w`` the Faddeeva function.  For real
  data ``mu(y) = (1/M) sum_k k(y, u_k)``, whose Monte-Carlo error adds a
  floor of about ``mean_j Var_U k(y_j, U) / M`` to every error (reported).
* EKPCA.  ``Kc = H K H`` (``H = I - 11^T / n``) ``= V diag(lambda) V^T``;
  the unit eigenfunctions of the empirical (U-statistic) covariance operator
  are ``phi_i = sum_j V_ji (k(., x_j) - mu_n) / sqrt(lambda_i)``, with
  ``mu_n = (1/n) sum_j k(., x_j)``.  The coefficient of a held-out point is
  ``s_i(x) = <k(., x) - mu_n, phi_i>_H = sum_j V_ji kc(x, x_j) / sqrt(lambda_i)``,
  ``kc(x, x_j) = k(x, x_j) - mean_l k(x, x_l) - mean_l k(x_j, x_l) + mean(K)``
  (this is ``KernelPCA(covariance="u_statistic").transform``), and the
  eigenfunction's values are ``phi_i(y) = <phi_i, k(., y)>_H = sum_j V_ji
  (k(y, x_j) - mean_l k(y, x_l)) / sqrt(lambda_i)`` (the subtracted mean is
  orthogonal to ``V_i``, which sums to 0; it is kept for rounding).  The
  reconstruction is ``R_x(y) = sum_{i <= l} s_i(x) phi_i(y)``: everything is
  a kernel evaluation.
* RF-EKPCA.  ``z(x) = sqrt(2/m) cos(W^T x + b)`` (``W`` from the Gaussian
  spectral measure), ``zbar`` the training mean, ``v_1..v_l`` the top
  eigenvectors of the U-statistic covariance ``(1/(n-1)) sum_j (z_j - zbar)
  (z_j - zbar)^T`` (:class:`~kernelsketch.decomposition.RFKPCA`).  The
  reconstruction ``P_l (z(x) - zbar)`` lives in ``R^m``; the paper's
  approximation operator embeds ``a in R^m`` into ``L2(rho)`` as the
  function ``y -> <a, z(y)>``, so
  ``R^RF_x(y) = <P_l (z(x) - zbar), z(y)> = sum_{i <= l} <z(x) - zbar, v_i> <v_i, z(y)>``.
  ``z(y)`` is *not* centred: that is the analogue of evaluating ``phi_i(y)
  = <phi_i, k(., y)>``, and as ``m -> infinity`` ``<v_i, z(y)> -> phi_i(y)``
  exactly (centring ``z(y)`` would subtract ``<phi_i, mu_n>`` and converge
  to another function).
* Error.  ``E = (1/T) sum_t (1/R) sum_j (R_{x'_t}(y_j) - g_{x'_t}(y_j))^2``,
  an unbiased Monte-Carlo estimate of ``E_x ||R_x - g_x||^2_{L2(rho)}``
  given the fitted model, averaged over repetitions (new training sample
  and new features).  Since ``||f||^2_{L2(rho)} = <f, C f>_H`` with the
  uncentred covariance ``C = Sigma + mu (x) mu``, its population limit for
  fixed ``l`` (KPCA's R-E error) is ``sum_{i > l} lambda_i (lambda_i +
  <phi_i, mu>_H^2) >= sum_{i > l} lambda_i^2``, with ``(lambda_i, phi_i)``
  the eigenpairs of ``Sigma``; it does not vanish, so for "both fall with
  n" the number of components grows as ``l(n) = ceil(n^{1/3})`` (the paper
  lets ``l`` grow slowly with ``n``).  The tables give ``sum_{l < i <= 80}
  lambda_hat_i^2`` from the spectrum sample as a rough guide to that floor
  (sample eigenvalues, truncated sum: not a bound).

Data
----
* ``exp``: ``X ~ N(0, 1)`` in 1-D, ``h = 0.5``: the Gaussian kernel's
  eigenvalues under a Gaussian law are exactly geometric,
  ``lambda_k ~ B^k`` with ``B = b / (a + b + c)``, ``a = 1/4``,
  ``b = 1/h^2``, ``c = sqrt(a^2 + 2ab)`` (Rasmussen & Williams, Sec. 4.3.1),
  here ``B = 0.70``.
* ``poly``: ``X ~ Cauchy(0, 1)`` in 1-D, ``h = 0.5``: with heavy tails the
  far-out points are nearly isolated; a window of width ``h`` at ``x``
  carries mass ``~ h rho(x) ~ x^{-2}``, and sorting those masses gives
  ``lambda_k ~ k^{-2}``: polynomial decay of the *same* Gaussian kernel.
* ``cpu``: DELVE cpu_act (8192 x 21), z-scored, ``h`` the median
  interpoint distance of the training pool.
The eigenvalue figure checks the two synthetic decays empirically (fitted
log-log slope and semi-log rate of the centred-Gram eigenvalues).
"""

from __future__ import annotations

import itertools
import math
import time
import warnings

import numpy as np
import scipy.special

from ..datasets import DatasetNotFoundError, load_dataset
from ..kernels import estimate_bandwidth, pairwise_kernel
from ..utils.progress import progress as _progress
from ._report import Report, pyplot
from ._seeds import int_seed as _int_seed
from ._seeds import stream_rng as _rng

__all__ = ["SYNTHETIC", "ekpca_reconstruction", "rf_ekpca_reconstruction", "tradeoff"]

SYNTHETIC = {
    "exp": "N(0, 1), 1-D, h = 0.5 (exponential decay)",
    "poly": "Cauchy(0, 1), 1-D, h = 0.5 (polynomial decay)",
}
TITLES = {
    "exp": "synthetic, exponential decay (Gaussian data)",
    "poly": "synthetic, polynomial decay (Cauchy data)",
    "cpu": "CPU (cpu_act, z-scored)",
}
_SYN_H = 0.5


# ----------------------------------------------------------------------------- data


class _Source:
    """Draws of one distribution, its bandwidth and its mean embedding mu(y)."""

    def __init__(self, name, seed, n_mean):
        self.name = name
        self.mu_floor = 0.0
        if name == "exp":
            self.h = _SYN_H
        elif name == "poly":
            self.h = _SYN_H
        elif name == "cpu":
            X, _ = load_dataset("cpu")
            X = np.asarray(X, dtype=np.float64)
            sd = X.std(axis=0)
            sd[sd == 0] = 1.0
            self._pool = (X - X.mean(axis=0)) / sd
            self._perm = _rng(seed, 21).permutation(X.shape[0])
            self._next = 0
            self._mean_sample = self._take(n_mean)
            self.h = estimate_bandwidth(self._pool, "median", random_state=0)
        else:
            raise ValueError(f"unknown dataset {name!r}; choose 'exp', 'poly' or 'cpu'")

    def _take(self, k):
        if self._next + k > self._perm.shape[0]:
            raise ValueError(f"cpu has {self._perm.shape[0]} rows: not enough for the requested samples")
        rows = self._perm[self._next : self._next + k]
        self._next += k
        return self._pool[rows]

    def held_out(self, k, rng):
        """Disjoint held-out rows (real data) or fresh draws (synthetic)."""
        return self._take(k) if self.name == "cpu" else self.draw(k, rng)

    def draw(self, k, rng):
        if self.name == "exp":
            return rng.normal(size=(k, 1))
        if self.name == "poly":
            return rng.standard_cauchy(size=(k, 1))
        # training sets: uniform draws from the rows not held out
        rest = self._perm[self._next :]
        if k > rest.shape[0]:
            raise ValueError(f"cpu: n={k} exceeds the {rest.shape[0]} rows left for training")
        return self._pool[rng.choice(rest, size=k, replace=False)]

    def mu(self, Y):
        """Mean embedding at Y: exact for the synthetic laws, Monte Carlo for real data."""
        if self.name == "exp":
            s = self.h**2 + 2.0
            return self.h / math.sqrt(s) * np.exp(-(Y[:, 0] ** 2) / s)
        if self.name == "poly":
            # Gaussian convolved with Cauchy(0, 1): the Voigt profile, Re w((y + i) / h)
            return scipy.special.wofz((Y[:, 0] + 1j) / self.h).real
        Kb = pairwise_kernel(Y, self._mean_sample, kernel="gaussian", bandwidth=self.h)
        self.mu_floor = float(np.mean(Kb.var(axis=1, ddof=1)) / self._mean_sample.shape[0])
        return Kb.mean(axis=1)


# ----------------------------------------------------------------------------- the two reconstructions


def ekpca_reconstruction(X_train, X_eval, Y, l, bandwidth, *, random_state=0):
    r"""EKPCA's R-E reconstructions ``R_x(y_j)`` (module docstring), shape (len(X_eval), len(Y)).

    ``R_x(y) = sum_{i <= l} <k(., x) - mu_n, phi_i>_H phi_i(y)`` with ``phi_i``
    the unit eigenfunctions of the empirical covariance operator, all from
    kernel evaluations.  Eigenvalues below ``1e-10 lambda_1`` (numerically
    zero) are dropped, so fewer than ``l`` terms may be used.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.experiments.rf_kpca_tradeoff import ekpca_reconstruction
    >>> X = np.random.default_rng(0).normal(size=(50, 1))
    >>> ekpca_reconstruction(X, X[:3], X[:4], 5, 0.5).shape
    (3, 4)
    """
    from ..decomposition import KernelPCA

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numerically zero eigenvalues are dropped
        kp = KernelPCA(
            n_components=l, kernel="gaussian", bandwidth=bandwidth, covariance="u_statistic", random_state=random_state
        ).fit(X_train)
    S = kp.transform(X_eval)  # s_i(x) = <k(., x) - mu_n, phi_i>_H
    KY = pairwise_kernel(Y, X_train, kernel="gaussian", bandwidth=bandwidth)
    KY -= KY.mean(axis=1, keepdims=True)
    Phi = KY @ (kp.eigenvectors_ / np.sqrt(kp.eigenvalues_))  # phi_i(y_j)
    return S @ Phi.T


def rf_ekpca_reconstruction(X_train, X_eval, Y, l, m, bandwidth, *, random_state=0):
    r"""RF-EKPCA's R-E reconstructions ``<P_l (z(x) - zbar), z(y_j)>``, shape (len(X_eval), len(Y)).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.experiments.rf_kpca_tradeoff import rf_ekpca_reconstruction
    >>> X = np.random.default_rng(0).normal(size=(50, 1))
    >>> rf_ekpca_reconstruction(X, X[:3], X[:4], 5, 40, 0.5).shape
    (3, 4)
    """
    from ..decomposition import RFKPCA

    est = RFKPCA(n_components=l, n_random_features=m, bandwidth=bandwidth, random_state=random_state).fit(X_train)
    S = est.transform(X_eval)  # <z(x) - zbar, v_i>
    F = est.gram_factor(Y, centered=False)  # <v_i, z(y)>: uncentred, see the module docstring
    return S @ F.T


def _err(Rm, G):
    D = Rm - G
    return float(np.einsum("ij,ij->", D, D) / D.size)


def _slope(x, y):
    x, y = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    ok = np.isfinite(y)
    return float(np.polyfit(x[ok], y[ok], 1)[0]) if ok.sum() >= 2 else float("nan")


def _l_of_n(n, l_exponent, rule="power"):
    """Components at training size n: ``ceil(n^l_exponent)`` (``"power"``) or ``ceil(log n)`` (``"log"``)."""
    if rule == "log":
        return max(2, math.ceil(math.log(n)))
    return max(2, math.ceil(n**l_exponent))


# ----------------------------------------------------------------------------- the reproduction


def tradeoff(
    output_dir,
    *,
    quick=False,
    seed=0,
    progress=None,
    datasets=("exp", "poly", "cpu"),
    n_fixed=None,
    l_fixed=None,
    m_values=None,
    n_values=None,
    thetas=(0.5, 0.75, 1.0),
    l_exponent=1 / 3,
    n_reference=None,
    n_test=None,
    n_mean=3000,
    n_spectrum=None,
    n_repetitions=None,
    l_rules=("power", "log"),
):
    r"""RF-EKPCA against EKPCA: R-E reconstruction error against ``m`` and against ``n``.

    Parameters
    ----------
    output_dir : path-like
    quick : bool
        Small sizes (n <= 200, m <= 512, 1-2 repetitions), for tests.
    seed : int
    progress : bool or None
    datasets : sequence of str
        ``"exp"``, ``"poly"`` (synthetic, see the module docstring), ``"cpu"``.
    n_fixed, l_fixed : int
        Part (a): training size and number of components (default 1000, 10).
    m_values : sequence of int
        Part (a): random features (default 10 .. 2000).
    n_values : sequence of int
        Part (b): training sizes (default 125 .. 2000).
    thetas : sequence of float
        Part (b): ``m = ceil(n^theta)`` (raised to ``l`` when smaller).
    l_exponent : float
        Part (b): ``l(n) = ceil(n^l_exponent)`` for the ``"power"`` rule.
    l_rules : sequence of {"power", "log"}
        Part (b) runs once per rule: ``l(n) = ceil(n^l_exponent)`` and
        ``l(n) = ceil(log n)`` (the paper fixes no ``l(n)``; how fast ``l`` grows
        decides how much of EKPCA's error is the truncation the random features
        cannot change).  The figure shows the first rule.
    n_reference, n_test : int
        Reference points ``y_j`` and held-out points ``x'_t`` (1500, 300).
    n_mean : int
        Real data: size of the independent sample estimating ``mu``.
    n_spectrum : int
        Sample size of the eigenvalue-decay check (1500).
    n_repetitions : int, optional
        (a) and (b) repetitions (default 4 and 3; quick 2 and 1).

    Returns
    -------
    dict
        ``tables``: ``vs_m`` (part a), ``vs_n`` (part b), ``slopes`` (fitted
        log-log slopes), ``spectrum`` (decay fits); ``figures``; ``params``.

    Notes
    -----
    The estimator is defined in the module docstring.  Cost per repetition:
    EKPCA ``O(n^2)`` kernel evaluations and a top-``l`` eigensolve, plus
    ``O(n (R + T))`` for the reconstruction; RF-EKPCA ``O(n m^2 + m^3)``
    (dense ``eigh`` of the ``m x m`` covariance) plus ``O((R + T) m)``.

    References
    ----------
    B. Sriperumbudur, N. Sterge. Approximate kernel PCA using random features:
    computational vs. statistical trade-off. Annals of Statistics 50(5), 2022
    (Section 4.2, Theorem 6, Corollaries 7 and A.1).
    """
    n_fixed, l_fixed, m_values, n_values, thetas, n_reference, n_test, n_spectrum, n_mean, reps_a, reps_b = (
        _tradeoff_grid(
            quick, n_fixed, l_fixed, m_values, n_values, thetas, n_reference, n_test, n_spectrum, n_mean, n_repetitions
        )
    )
    params = dict(
        quick=quick,
        seed=seed,
        datasets=list(datasets),
        n_fixed=n_fixed,
        l_fixed=l_fixed,
        m_values=list(m_values),
        n_values=list(n_values),
        thetas=list(thetas),
        l_of_n=[f"ceil(n^{l_exponent:.4g})" if r == "power" else "ceil(log n)" for r in l_rules],
        n_reference=n_reference,
        n_test=n_test,
        n_mean=n_mean,
        n_spectrum=n_spectrum,
        repetitions_a=reps_a,
        repetitions_b=reps_b,
        kernel="gaussian exp(-|x-y|^2/h^2); h = 0.5 synthetic, median distance for cpu",
        features="RFKPCA cos features sqrt(2/m) cos(w.x + b)",
        covariance="u_statistic (both)",
        error="mean over held-out x and reference y of (R_x(y) - (k(y,x) - mu(y)))^2",
        synthetic=SYNTHETIC,
    )
    rep = Report("rf-kpca-tradeoff", output_dir, params)
    plt = pyplot()
    rows_a, rows_b, slopes, spectrum = [], [], [], []
    spectra = {}
    present = []
    for di, name in enumerate(_progress(list(datasets), desc="rf-kpca-tradeoff", enabled=progress)):
        try:
            src = _Source(name, seed, n_mean)
        except DatasetNotFoundError as exc:
            rep.note(f"{name}: dataset not available offline, skipped ({str(exc).splitlines()[0]})")
            continue
        title = TITLES[name]
        present.append(name)
        rng = _rng(seed, 31, di)
        Y = src.held_out(n_reference, rng)
        Xt = src.held_out(n_test, rng)
        G = pairwise_kernel(Xt, Y, kernel="gaussian", bandwidth=src.h) - src.mu(Y)[None, :]
        g_norm = float(np.mean(G**2))
        row, lam, ok = _spectrum_row(src, title, n_spectrum, seed, di)
        spectrum.append(row)
        spectra[title] = lam[ok]
        sections = (Xt, Y, G)
        a_rows, a_slope = _part_a(src, title, sections, g_norm, n_fixed, l_fixed, m_values, reps_a, seed, di)
        rows_a += a_rows
        slopes.append(a_slope)
        src_lam = lam[: max(80, l_fixed + 1)]
        for rule in l_rules:
            grid_b = (n_values, thetas, l_exponent, rule, reps_b)
            b_rows, b_slopes = _part_b(src, title, sections, src_lam, grid_b, seed, di)
            rows_b += b_rows
            slopes += b_slopes
        rep.note(
            f"{title}: h={src.h:.4g}, mean squared centred section {g_norm:.4g}, "
            f"mu Monte-Carlo floor {src.mu_floor:.2e}"
        )

    first_rule = rows_b[0]["l_rule"] if rows_b else None
    _figures(
        rep, plt, present, rows_a, [r for r in rows_b if r["l_rule"] == first_rule], spectrum, spectra, thetas, seed
    )
    _tradeoff_tables(rep, rows_a, rows_b, slopes, spectrum)
    return rep.finish()


def _tradeoff_grid(
    quick, n_fixed, l_fixed, m_values, n_values, thetas, n_reference, n_test, n_spectrum, n_mean, n_repetitions
):
    """The sizes of a run (the quick or the full defaults where not given), ``m`` below ``l`` left out."""
    if quick:
        n_fixed = n_fixed or 200
        l_fixed = l_fixed or 4
        m_values = m_values or (8, 32, 128, 512)
        n_values = n_values or (50, 100, 200)
        thetas = (0.5, 1.0) if tuple(thetas) == (0.5, 0.75, 1.0) else thetas
        n_reference, n_test, n_spectrum = n_reference or 200, n_test or 80, n_spectrum or 300
        n_mean = min(n_mean, 1000)
        reps_a, reps_b = (n_repetitions or 2), (n_repetitions or 1)
    else:
        n_fixed = n_fixed or 1000
        l_fixed = l_fixed or 10
        m_values = m_values or (10, 20, 50, 100, 200, 500, 1000, 2000)
        n_values = n_values or (125, 250, 500, 1000, 2000)
        n_reference, n_test, n_spectrum = n_reference or 1500, n_test or 300, n_spectrum or 1500
        reps_a, reps_b = (n_repetitions or 4), (n_repetitions or 3)
    m_values = tuple(int(m) for m in m_values if m >= l_fixed)
    return n_fixed, l_fixed, m_values, n_values, thetas, n_reference, n_test, n_spectrum, n_mean, reps_a, reps_b


def _spectrum_row(src, title, n_spectrum, seed, di):
    """Eigenvalue decay of the centred Gram / (n - 1) (U-statistic covariance): polynomial and exponential fits."""
    h = src.h
    Xs = src.draw(n_spectrum, _rng(seed, 32, di))
    K = pairwise_kernel(Xs, kernel="gaussian", bandwidth=h)
    K -= K.mean(axis=0)
    K -= K.mean(axis=1, keepdims=True)
    lam = np.linalg.eigvalsh(K)[::-1] / (n_spectrum - 1)
    del K
    ok = lam > 1e-9 * lam[0]  # below: rounding noise of the eigensolver
    idx = np.arange(1, lam.size + 1)
    fit_range = ok & (idx >= 3) & (idx <= min(60, n_spectrum // 10 + 3))
    ii, ll = idx[fit_range], np.log(lam[fit_range])
    pslope, pr2 = _fit_r2(np.log(ii), ll)
    erate, er2 = _fit_r2(ii.astype(float), ll)
    row = {
        "dataset": title,
        "n": n_spectrum,
        "bandwidth_h": round(h, 4),
        "fit_indices": f"{ii.min()}..{ii.max()}",
        "loglog_slope": round(pslope, 3),
        "loglog_r2": round(pr2, 4),
        "semilog_rate": round(erate, 4),
        "semilog_r2": round(er2, 4),
        "decay_better_fit": "polynomial" if pr2 > er2 else "exponential",
        "lambda_1": float(lam[0]),
        "lambda_10": float(lam[9]),
        "lambda_50": float(lam[49]) if lam.size >= 50 else float("nan"),
    }
    return row, lam, ok


def _part_a(src, title, sections, g_norm, n_fixed, l_fixed, m_values, reps_a, seed, di):
    """(a) fixed n and l, m grows: EKPCA's and RF-EKPCA's errors, and the slope of the excess in m."""
    Xt, Y, G = sections
    h = src.h
    res = {"EKPCA": [], **{m: [] for m in m_values}}
    times = {"EKPCA": [], **{m: [] for m in m_values}}
    for r in range(reps_a):
        rr = _rng(seed, 33, di, r)
        X = src.draw(n_fixed, rr)
        t0 = time.perf_counter()
        e_ek = _err(ekpca_reconstruction(X, Xt, Y, l_fixed, h, random_state=_int_seed(rr)), G)
        times["EKPCA"].append(time.perf_counter() - t0)
        res["EKPCA"].append(e_ek)
        for m in m_values:
            t0 = time.perf_counter()
            e = _err(rf_ekpca_reconstruction(X, Xt, Y, l_fixed, m, h, random_state=_int_seed(rr)), G)
            times[m].append(time.perf_counter() - t0)
            res[m].append(e)
    ek = np.asarray(res["EKPCA"])
    common = {"dataset": title, "n": n_fixed, "l": l_fixed}
    rows = [
        {
            **common,
            "method": "EKPCA",
            "m": "",
            "error_mean": float(ek.mean()),
            "error_std": float(ek.std(ddof=1)) if reps_a > 1 else 0.0,
            "relative_excess_over_EKPCA": 0.0,
            "seconds_mean": float(np.mean(times["EKPCA"])),
            "error_over_mean_sq_section": float(ek.mean() / g_norm),
            "mu_mc_floor": src.mu_floor,
        }
    ]
    gaps = []
    for m in m_values:
        e = np.asarray(res[m])
        gaps.append(float(np.mean(e - ek)))
        rows.append(
            {
                **common,
                "method": "RF-EKPCA",
                "m": m,
                "error_mean": float(e.mean()),
                "error_std": float(e.std(ddof=1)) if reps_a > 1 else 0.0,
                "excess_over_EKPCA": gaps[-1],
                "relative_excess_over_EKPCA": float(gaps[-1] / ek.mean()),
                "seconds_mean": float(np.mean(times[m])),
                "error_over_mean_sq_section": float(e.mean() / g_norm),
                "mu_mc_floor": src.mu_floor,
            }
        )
    gap_arr = np.asarray(gaps)
    slope = {
        "dataset": title,
        "part": "a",
        "curve": f"RF-EKPCA excess over EKPCA vs m (n={n_fixed}, l={l_fixed})",
        "fitted_slope": round(_slope(np.asarray(m_values)[gap_arr > 0], gap_arr[gap_arr > 0]), 3),
        "points": int((gap_arr > 0).sum()),
    }
    return rows, slope


def _part_b(src, title, sections, src_lam, grid_b, seed, di):
    """(b) n grows with l = l(n) by ``rule`` and m = n^theta: errors per n and the slopes in n."""
    Xt, Y, G = sections
    n_values, thetas, l_exponent, rule, reps_b = grid_b
    h = src.h
    rule_name = f"n^{l_exponent:.3g}" if rule == "power" else "log n"
    rows, curves = [], {"EKPCA": [], **{t: [] for t in thetas}}
    for n in n_values:
        l = _l_of_n(n, l_exponent, rule)
        e_ek, e_rf, t_ek = [], {t: [] for t in thetas}, []
        t_rf = {t: [] for t in thetas}
        for r in range(reps_b):
            rr = _rng(seed, 34, di, n, r)
            X = src.draw(n, rr)
            t0 = time.perf_counter()
            e_ek.append(_err(ekpca_reconstruction(X, Xt, Y, l, h, random_state=_int_seed(rr)), G))
            t_ek.append(time.perf_counter() - t0)
            for t in thetas:
                m = max(l, math.ceil(n**t))
                t0 = time.perf_counter()
                e_rf[t].append(_err(rf_ekpca_reconstruction(X, Xt, Y, l, m, h, random_state=_int_seed(rr)), G))
                t_rf[t].append(time.perf_counter() - t0)
        curves["EKPCA"].append(np.mean(e_ek))
        common = {
            "dataset": title,
            "l_rule": rule_name,
            "n": n,
            "l": l,
            "tail_sum_lambda_sq": float(np.sum(src_lam[l:] ** 2)),
        }
        rows.append(
            {
                **common,
                "method": "EKPCA",
                "m": "",
                "theta": "",
                "error_mean": float(np.mean(e_ek)),
                "error_std": float(np.std(e_ek, ddof=1)) if reps_b > 1 else 0.0,
                "seconds_mean": float(np.mean(t_ek)),
            }
        )
        for t in thetas:
            curves[t].append(np.mean(e_rf[t]))
            rows.append(
                {
                    **common,
                    "method": "RF-EKPCA",
                    "m": max(l, math.ceil(n**t)),
                    "theta": t,
                    "error_mean": float(np.mean(e_rf[t])),
                    "error_std": float(np.std(e_rf[t], ddof=1)) if reps_b > 1 else 0.0,
                    "seconds_mean": float(np.mean(t_rf[t])),
                }
            )
    slopes = []
    for key, ys in curves.items():
        label = "EKPCA" if key == "EKPCA" else f"RF-EKPCA, m = n^{key:g}"
        slopes.append(
            {
                "dataset": title,
                "part": "b",
                "curve": f"{label} vs n (l = {rule_name})",
                "fitted_slope": round(_slope(n_values, ys), 3),
                "points": len(ys),
                "ratio_to_EKPCA_at_n_max": "" if key == "EKPCA" else round(float(ys[-1] / curves["EKPCA"][-1]), 4),
            }
        )
    return rows, slopes


def _tradeoff_tables(rep, rows_a, rows_b, slopes, spectrum):
    rep.table(
        "vs_m",
        rows_a,
        [
            "dataset",
            "method",
            "n",
            "l",
            "m",
            "error_mean",
            "error_std",
            "excess_over_EKPCA",
            "relative_excess_over_EKPCA",
            "error_over_mean_sq_section",
            "seconds_mean",
            "mu_mc_floor",
        ],
        title="(a) R-E reconstruction error against the number of random features m (fixed n, l)",
    )
    rep.table(
        "vs_n",
        rows_b,
        [
            "dataset",
            "l_rule",
            "method",
            "n",
            "l",
            "m",
            "theta",
            "error_mean",
            "error_std",
            "seconds_mean",
            "tail_sum_lambda_sq",
        ],
        title="(b) R-E reconstruction error against n, l = l(n) (two rules), m = n^theta",
    )
    rep.table(
        "slopes",
        slopes,
        ["dataset", "part", "curve", "fitted_slope", "points", "ratio_to_EKPCA_at_n_max"],
        title="Fitted log-log slopes",
    )
    rep.table("spectrum", spectrum, title="Eigenvalue decay of the centred Gram / (n - 1): fits over a range of i")


def _fit_r2(x, y):
    coef = np.polyfit(x, y, 1)
    resid = y - np.polyval(coef, x)
    ss = np.sum((y - y.mean()) ** 2)
    return float(coef[0]), float(1.0 - np.sum(resid**2) / ss) if ss > 0 else 1.0


def _figures(rep, plt, present, rows_a, rows_b, spectrum, spectra, thetas, seed):
    if not present:
        return
    titles = [TITLES[p] for p in present]
    fig, axes = plt.subplots(2, len(titles), figsize=(4.4 * len(titles), 7.2), squeeze=False)
    for j, title in enumerate(titles):
        ax = axes[0, j]
        a = [r for r in rows_a if r["dataset"] == title]
        ek = a[0]["error_mean"]
        ms = [r["m"] for r in a[1:]]
        ax.loglog(ms, [r["error_mean"] for r in a[1:]], "o-", ms=4, label="RF-EKPCA")
        ax.axhline(ek, color="k", ls="--", lw=1, label=f"EKPCA (n={a[0]['n']})")
        ex = [(r["m"], r["excess_over_EKPCA"]) for r in a[1:] if r["excess_over_EKPCA"] > 0]
        if ex:
            ax.loglog(*zip(*ex, strict=True), "s:", ms=3, color="tab:red", label="RF excess over EKPCA")
        ax.set_xlabel("random features m")
        ax.set_title(f"(a) {title}\nn={a[0]['n']}, l={a[0]['l']}", fontsize=9)
        ax.legend(fontsize=7)
        ax = axes[1, j]
        b = [r for r in rows_b if r["dataset"] == title]
        e = [r for r in b if r["method"] == "EKPCA"]
        ax.loglog([r["n"] for r in e], [r["error_mean"] for r in e], "o-", color="k", ms=4, label="EKPCA")
        for t in thetas:
            rt = [r for r in b if r["theta"] == t]
            ax.loglog([r["n"] for r in rt], [r["error_mean"] for r in rt], "^--", ms=4, label=f"RF, m=n^{t:g}")
        ax.loglog(
            [r["n"] for r in e],
            [r["tail_sum_lambda_sq"] for r in e],
            ":",
            color="grey",
            label=r"$\sum_{l<i\leq 80}\hat\lambda_i^2$ (guide)",
        )
        ax.set_xlabel("n  (l = l(n))")
        ax.set_title(f"(b) {title}", fontsize=9)
        ax.legend(fontsize=7)
    axes[0, 0].set_ylabel("R-E error (mean sq., held out)")
    axes[1, 0].set_ylabel("R-E error (mean sq., held out)")
    fig.suptitle(f"RF-KPCA vs KPCA: reconstruct-then-embed error (seed {seed})", fontsize=10)
    fig.tight_layout()
    rep.figure(fig, "tradeoff")

    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.6))
    for s in spectrum:
        lam = spectra[s["dataset"]]
        i = np.arange(1, lam.size + 1)
        lab = (
            f"{s['dataset']}: slope {s['loglog_slope']:.2f} (R2 {s['loglog_r2']:.3f}), rate {s['semilog_rate']:.3f} "
            f"(R2 {s['semilog_r2']:.3f})"
        )
        axes[0].loglog(i, lam, ".-", ms=3, lw=1, label=lab)
        axes[1].semilogy(i[:80], lam[:80], ".-", ms=3, lw=1)
    axes[0].set_title("log-log: a line = polynomial decay", fontsize=9)
    axes[1].set_title("semi-log: a line = exponential decay", fontsize=9)
    for ax in axes:
        ax.set_xlabel("i")
    axes[0].set_ylabel("eigenvalue of centred Gram / (n - 1)")
    fig.legend(
        *axes[0].get_legend_handles_labels(),
        fontsize=7,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        ncol=1,
        frameon=False,
    )
    fig.suptitle(f"Eigenvalue decay of the Gaussian kernel's covariance operator (n={spectrum[0]['n']})", fontsize=10)
    fig.tight_layout()
    rep.figure(fig, "spectrum")


# ----------------------------------------------------------------------------- the results page
def page_values(csv, params=None):
    """What ``docs/results/templates/rf_kpca_tradeoff.md.j2`` states, computed from a run's CSVs.

    ``csv(name)`` reads ``rf-kpca-tradeoff/NAME.csv`` as a :class:`~kernelsketch.experiments.pages.Table`.
    """
    vm, vn, sl, sp = (csv(f"rf-kpca-tradeoff/{n}") for n in ("vs_m", "vs_n", "slopes", "spectrum"))
    sets = {"exp": TITLES["exp"], "poly": TITLES["poly"], "CPU": TITLES["cpu"]}
    m_max = max(vm.col("m")[1:], key=lambda m: m if m != "" else 0)
    ekpca = {k: vm.one(dataset=t, method="EKPCA") for k, t in sets.items()}
    rf = {k: {r["m"]: r for r in vm.where(dataset=t, method="RF-EKPCA")} for k, t in sets.items()}
    within2 = {
        k: next((m for m, r in sorted(rf[k].items()) if r["relative_excess_over_EKPCA"] <= 1), None) for k in sets
    }
    rules = vn.distinct("l_rule")
    n_max = max(vn.col("n"))
    part_b = {}
    for rule in rules:
        rule_label = "n^0.333" if rule.startswith("n^") else "log n"
        for k, t in sets.items():
            e = sl.one(dataset=t, part="b", curve=f"EKPCA vs n (l = {rule_label})")
            part_b[(rule, k)] = {
                "ekpca": e["fitted_slope"],
                "rf": {
                    th: sl.one(dataset=t, part="b", curve=f"RF-EKPCA, m = n^{th:g} vs n (l = {rule_label})")
                    for th in (0.5, 0.75, 1)
                },
            }
    ratio_n = {}
    for rule in rules:
        for k, t in sets.items():
            rows = vn.where(dataset=t, l_rule=rule)
            e = {r["n"]: r["error_mean"] for r in rows if r["method"] == "EKPCA"}
            ratio_n[(rule, k)] = {
                th: [r["error_mean"] / e[r["n"]] for r in rows if r["method"] == "RF-EKPCA" and r["theta"] == th]
                for th in (0.5, 0.75, 1.0)
            }
    rises = []  # (set, rule, theta, n, next n) where an error curve goes up with n
    for rule in rules:
        for k, t in sets.items():
            for method, th in [("EKPCA", ""), *(("RF-EKPCA", th) for th in (0.5, 0.75, 1.0))]:
                cur = vn.where(dataset=t, l_rule=rule, method=method, theta=th)
                up = [(a["n"], b["n"]) for a, b in itertools.pairwise(cur) if b["error_mean"] > a["error_mean"]]
                rises += [(k, rule, th, n0, n1) for n0, n1 in up]
    at_max = vn.where(n=n_max)
    secs = {
        "ekpca": [r["seconds_mean"] for r in at_max if r["method"] == "EKPCA"],
        **{th: [r["seconds_mean"] for r in at_max if r["theta"] == th] for th in (0.5, 0.75, 1.0)},
    }
    return {
        "sets": sets,
        "spectrum": {k: sp.one(dataset=t) for k, t in sets.items()},
        "m_max": m_max,
        "ekpca": ekpca,
        "rf": rf,
        "slope_a": {k: sl.one(dataset=t, part="a")["fitted_slope"] for k, t in sets.items()},
        "c": [rf[k][m_max]["excess_over_EKPCA"] * m_max for k in sets],
        "within2": within2,
        "rules": rules,
        "part_b": part_b,
        "ratio_n": ratio_n,
        "rises": _grouped_rises(rises, len(rules)),
        "n_max": n_max,
        "n_min": min(vn.col("n")),
        "l_range": {rule: (min(vn.where(l_rule=rule).col("l")), max(vn.where(l_rule=rule).col("l"))) for rule in rules},
        "m_at_max": {th: vn.where(n=n_max, theta=th)[0]["m"] for th in (0.5, 0.75, 1.0)},
        "secs": secs,
        "mu_floor": ekpca["CPU"]["mu_mc_floor"],
        "theta075_factors": [
            part_b[(rule, k)]["rf"][0.75]["ratio_to_EKPCA_at_n_max"] for rule in rules for k in ("poly", "CPU")
        ],
        "cost_ratio": [a / b for a, b in zip(secs[1.0], secs["ekpca"], strict=True)],
    }


def _grouped_rises(rises, n_rules):
    """Rising steps of the error curves, one entry per (set, theta, steps) with the rules they occur under."""
    names = {"exp": "exponential-decay", "poly": "polynomial-decay", "CPU": "CPU"}
    groups = {}
    for k, rule, th, n0, n1 in rises:
        groups.setdefault((k, th), {}).setdefault(rule, []).append((n0, n1))
    out = []
    for (k, th), per_rule in groups.items():
        by_steps = {}
        for rule, steps in per_rule.items():
            by_steps.setdefault(tuple(steps), []).append(rule)
        for steps, rules in by_steps.items():
            out.append(
                {
                    "what": "EKPCA" if th == "" else f"RF-EKPCA with `theta = {th:g}`",
                    "set": names[k],
                    "steps": " and from ".join(f"{a} to {b}" for a, b in steps),
                    "rules": "both rules" if len(rules) == n_rules == 2 else ", ".join(f"`l = {r}`" for r in rules),
                }
            )
    return out
