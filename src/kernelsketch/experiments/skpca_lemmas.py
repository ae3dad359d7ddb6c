"""Lemmas 2.2 and 2.4 of Ghashami, Perry & Phillips (Streaming KPCA), each side computed on the papers' data.

``kernelsketch reproduce skpca-lemmas`` refits the estimators of ``skpca-figures`` (the same
datasets, splits, bandwidths and seeds, so the same random features and landmarks) and
measures, without timing anything:

**Lemma 2.2** (the Frequent Directions part of SKPCA's error), on the **whole training
set** the sketch saw: ``||Z Z^T - Z W W^T Z^T||_2`` (the top eigenvalue of
``(I - W W^T) Z^T Z (I - W W^T)``, with ``Z^T Z`` summed over row blocks), against the bound
``||Z||_F^2 / floor(l/2)`` of Algorithm 1's shrink by the ``floor(l/2)``-th squared singular
value, and against the sketch's own certificate ``Delta``.  All three are divided by ``n``.
(``skpca-figures`` measures the same three on the same rows; its claim row grades them.)

**Lemma 2.4**: if ``||G - G'||_2 <= eps n`` then ``||G - G'_k||_F <= ||G - G_k||_F + eps sqrt(k n)``,
for every method's ``G' = Y Y^T`` on the evaluation rows, with ``eps`` the measured
``||G - G'||_2 / n`` (the smallest that satisfies the premise).  ``G'_k`` comes from the SVD
of ``Y``, ``||G - G'_k||_F`` from the residual formed densely, and ``||G - G_k||_F`` from the
top eigenvalues of ``G`` (``||G||_F^2 - sum_{i<=k} lambda_i^2``).  The paper's proof ends with
``eps n sqrt(k)``, not ``eps sqrt(k n)``: both right-hand sides are reported and graded.
"""

from __future__ import annotations

import numpy as np

from ..datasets import DatasetNotFoundError
from ..utils.eigen import top_eigenpairs
from ..utils.progress import progress as _progress
from ._bounds import grade_bound
from ._report import Report, read_csv_rows
from ._seeds import stream_rng as _rng
from .streaming_kpca import (
    SKETCH_SIZES,
    _factor,
    _GramResidual,
    _label,
    _load_split,
    _make_estimator,
    dataset_bandwidth,
    estimator_seed,
    evaluation_rows,
    feature_scatter,
    grid_jobs,
    lemma_2_2,
    resolve_sizes,
)

__all__ = ["LEMMAS", "lemmas"]

#: The statements checked, as the paper gives them.
LEMMAS = {
    "lemma_2_2": "Lemma 2.2: ||Z Z^T - Z W W^T Z^T||_2 <= eps n with l = 2 / eps (for Algorithm 1's shrink by the "
    "floor(l/2)-th value: <= ||Z||_F^2 / floor(l/2))",
    "lemma_2_4": "Lemma 2.4: ||G - G'||_2 <= eps n implies ||G - G'_k||_F <= ||G - G_k||_F + eps sqrt(k n)",
    "lemma_2_4_proof": "Lemma 2.4 as its proof ends: ||G - G'_k||_F <= ||G - G_k||_F + eps n sqrt(k)",
}
#: ranks k of Lemma 2.4
RANKS = (1, 5, 10, 20)


def lemma_2_4(G, g_frob_sq, g_top, Y, ranks, out):
    """Per rank k: ``(||G - G'_k||_F, ||G - G_k||_F, ||G||_F + ||G'_k||_F)`` for ``G' = Y Y^T``.

    The third is the trivial bound of the left side (the triangle inequality); ``out`` is an n x n buffer.
    """
    Y = np.asarray(Y, dtype=np.float64)
    q = min(max(ranks), Y.shape[1])
    # the top singular pairs of Y from its small Gram Y^T Y = V S^2 V^T: U_k S_k = Y V_k
    s2, V = top_eigenpairs(Y.T @ Y, q, "dense", None)
    YV = Y @ V
    s2 = np.clip(np.asarray(s2, dtype=np.float64), 0.0, None)
    res = {}
    for k in ranks:
        Uk = YV[:, : min(k, q)]
        np.matmul(Uk, Uk.T, out=out)
        np.subtract(G, out, out=out)
        flat = out.reshape(-1)
        lhs = float(np.sqrt(np.dot(flat, flat)))
        tail = float(np.sqrt(max(g_frob_sq - float(np.sum(g_top[:k] ** 2)), 0.0)))
        # G'_k = U_k S_k^2 U_k^T: its Frobenius norm is that of its eigenvalues s_i^2
        trivial = float(np.sqrt(g_frob_sq)) + float(np.sqrt(np.sum(s2[: min(k, q)] ** 2)))
        res[k] = (lhs, tail, trivial)
    return res


def lemmas(
    output_dir,
    *,
    quick=False,
    seed=0,
    progress=None,
    datasets=("randomnoisy", "cpu", "adult", "forest"),
    sketch_sizes=SKETCH_SIZES,
    sample_sizes=None,
    ranks=RANKS,
    n_eval=None,
    shrink="half",
    bandwidth_percentile=25.0,
    max_train=None,
    forest_max_train=None,
    random_noisy_shape=None,
    basis="last_full_buffer",
):
    """Lemmas 2.2 and 2.4 on the estimators of ``skpca-figures`` (same data, bandwidths and seeds).

    Parameters
    ----------
    output_dir : path-like
    quick : bool
        Tiny subsets and sample sizes ``(8, 32, 96)``, as ``skpca-figures --quick``.
    seed : int
        The seed of ``skpca-figures``; the same value refits the same estimators.
    progress : bool or None
    datasets, sketch_sizes, sample_sizes, n_eval, shrink, bandwidth_percentile, max_train,
    forest_max_train, random_noisy_shape, basis :
        As :func:`kernelsketch.experiments.streaming_kpca.figures` (its defaults).
    ranks : sequence of int
        The ``k`` of Lemma 2.4.

    Returns
    -------
    dict
        ``{"tables": {"lemma_2_2", "lemma_2_4", "claims"}, "figures": [], "params": {...}}``.
    """
    sample_sizes, n_eval, max_train, forest_max_train, random_noisy_shape = resolve_sizes(
        quick, sample_sizes, n_eval, max_train, forest_max_train, random_noisy_shape
    )
    ranks = tuple(int(k) for k in ranks)
    params = dict(
        quick=quick,
        seed=seed,
        datasets=list(datasets),
        sketch_sizes=list(sketch_sizes),
        sample_sizes=list(sample_sizes),
        ranks=list(ranks),
        n_eval=n_eval,
        shrink=shrink,
        max_train=max_train,
        forest_max_train=forest_max_train,
        random_noisy_shape=list(random_noisy_shape),
        basis=basis,
        estimators="those of skpca-figures with the same parameters and seed (SKPCA with the paper's buffer)",
        lemma_2_2="on the whole training set; every quantity divided by n_train",
        lemma_2_4="on the n_eval evaluation rows of skpca-figures; eps = ||G - G'||_2 / n_eval",
    )
    rep = Report("skpca-lemmas", output_dir, params)
    rows22, rows24 = [], []
    for ds_index, name in enumerate(datasets):
        cap = forest_max_train if name == "forest" else max_train
        try:
            X_train, _, title, note = _load_split(
                name, seed, quick=quick, max_train=cap, random_noisy_shape=random_noisy_shape
            )
        except DatasetNotFoundError as exc:
            rep.note(f"{name}: dataset not available offline, skipped ({str(exc).splitlines()[0]})")
            continue
        if note:
            rep.note(note)
        setting = dict(
            seed=seed, sketch_sizes=sketch_sizes, sample_sizes=sample_sizes, ranks=ranks, n_eval=n_eval,
            shrink=shrink, bandwidth_percentile=bandwidth_percentile, basis=basis, progress=progress,
        )  # fmt: skip
        r22, r24, said = _dataset(name, ds_index, title, X_train, **setting)
        rep.note(said)
        rows22 += r22
        rows24 += r24
    claims = grade(rows22, rows24)
    rep.table("lemma_2_2", rows22, title="Lemma 2.2 on the whole training set (each quantity / n_train)")
    rep.table("lemma_2_4", rows24, title="Lemma 2.4 on the evaluation rows")
    rep.table("claims", claims, title="The lemmas checked")
    rep.finish()
    return {
        "tables": {"lemma_2_2": rows22, "lemma_2_4": rows24, "claims": claims},
        "figures": [],
        "params": params,
    }


def _dataset(name, ds_index, title, X_train, *, seed, sketch_sizes, sample_sizes, ranks, n_eval, shrink,
             bandwidth_percentile, basis, progress):  # fmt: skip
    """The rows of both lemmas on one dataset, with the figures' bandwidth, evaluation rows and seeds."""
    from ..kernels.blocks import get_kernel

    n_train = X_train.shape[0]
    h = dataset_bandwidth(X_train, seed, ds_index, bandwidth_percentile)
    X_eval = evaluation_rows(X_train, n_eval, seed, ds_index)
    ne = X_eval.shape[0]
    residual = _GramResidual(X_eval, get_kernel("gaussian", bandwidth=h))
    G = residual.G
    g_top = top_eigenpairs(G, min(max(ranks), ne), "dense", None)[0]
    gram = (G, float(np.dot(G.reshape(-1), G.reshape(-1))), g_top, residual._R)
    jobs = grid_jobs(sample_sizes, sketch_sizes, n_train)
    rows22, rows24, scatter = [], [], {}
    for m, meth, l in _progress(jobs, total=len(jobs), desc=f"skpca lemmas {name}", enabled=progress):
        est_seed = estimator_seed(seed, ds_index, 0, m, meth)  # repetition 0 of the figures
        est = _make_estimator(meth, m, l, h, est_seed, shrink, None, basis)
        est.fit(X_train)
        label = _label(meth, l)
        if meth == "SKPCA":
            if m not in scatter:  # every SKPCA version and RNCA at m share the random features
                scatter[m] = feature_scatter(est.feature_map_, X_train)
            rows22.append(_lemma_2_2_row(title, label, l, m, n_train, est, scatter[m]))
        rows24 += _lemma_2_4_rows(title, label, m, _factor(est, X_eval), gram, ranks, _rng(est_seed, 99))
    return rows22, rows24, f"{title}: n_train={n_train}, n_eval={ne}, bandwidth h={h:.6g}"


def _lemma_2_2_row(title, label, l, m, n_train, est, scatter):
    err, delta, bound, frob_sketch, trivial = lemma_2_2(est, scatter)
    return {
        "dataset": title,
        "method_label": label,
        "sketch_size": l,
        "sample_size": m,
        "n_train": n_train,
        "sketch_error": err / n_train,
        "fd_delta": delta / n_train,
        "lemma_bound": bound / n_train,
        "trivial_bound": trivial / n_train,
        "ratio_to_bound": err / bound,
        "ratio_to_delta": err / delta if delta > 0 else float("nan"),
        "frobenius_check": abs(frob_sketch - scatter[1]) / scatter[1],
    }


def _lemma_2_4_rows(title, label, m, Y, gram, ranks, rng):
    """One row per k: eps from ``||G - Y Y^T||_2`` (Lanczos started from ``rng``, as the figures do)."""
    from ..metrics import gram_residual_norms

    G, g_frob_sq, g_top, buf = gram
    ne = G.shape[0]
    eps = gram_residual_norms(G, Y, random_state=rng, out=buf)[0] / ne
    rows = []
    for k, (lhs, tail, trivial) in lemma_2_4(G, g_frob_sq, g_top, Y, ranks, buf).items():
        stated = tail + eps * np.sqrt(k * ne)
        proof = tail + eps * ne * np.sqrt(k)
        rows.append(
            {
                "dataset": title,
                "method_label": label,
                "sample_size": m,
                "k": k,
                "n_eval": ne,
                "eps": eps,
                "lhs": lhs,
                "tail": tail,
                "bound_stated": stated,
                "bound_proof": proof,
                "ratio_stated": lhs / stated,
                "ratio_proof": lhs / proof,
                "trivial_bound": trivial,
                "dense_check": float("nan"),
            }
        )
    if any(r["ratio_proof"] > 1 + 1e-9 for r in rows):
        # a proved bound fails: recompute both sides densely (every eigenvalue of G - G', a full SVD of Y)
        diff = _dense_check(G, Y, eps, {r["k"]: r["lhs"] for r in rows})
        for r in rows:
            r["dense_check"] = diff
    return rows


def _dense_check(G, Y, eps, lhs):
    """Largest relative difference of ``eps`` and every ``||G - G'_k||_F`` from their dense recomputation."""
    n = G.shape[0]
    dense_eps = float(np.abs(np.linalg.eigvalsh(G - Y @ Y.T)).max()) / n
    U, s, _ = np.linalg.svd(Y, full_matrices=False)
    diffs = [abs(dense_eps - eps) / dense_eps]
    for k, value in lhs.items():
        Gk = (U[:, :k] * s[:k] ** 2) @ U[:, :k].T
        dense = float(np.linalg.norm(G - Gk))
        diffs.append(abs(dense - value) / dense)
    return max(diffs)


def grade(rows22, rows24):
    """One claim row per dataset and lemma: how many points hold, and the largest ratio to the bound.

    A lemma is a statement about every input: one point above its bound and it "does not hold".  Where it
    holds, the verdict is :func:`~kernelsketch.experiments._bounds.grade_bound`'s: a bound not below the
    trivial bound of its quantity (``||Z||_2^2`` for Lemma 2.2, ``||G||_F + ||G'_k||_F`` for Lemma 2.4)
    holds vacuously, and ``vacuous_points`` counts where.
    """

    def arr(rows, col):
        return np.array([r[col] for r in rows], dtype=np.float64)

    def vacuous(rows, col):
        return f"{int(np.sum(arr(rows, col) >= arr(rows, 'trivial_bound') * (1 - 1e-9)))}/{len(rows)}"

    out = []
    for title in dict.fromkeys(r["dataset"] for r in rows22 + rows24):
        r22 = [r for r in rows22 if r["dataset"] == title]
        if r22:
            worst = max(r22, key=lambda r: r["ratio_to_bound"])
            worst_d = max(r22, key=lambda r: r["ratio_to_delta"])
            held = sum(r["ratio_to_bound"] <= 1 + 1e-9 for r in r22)
            out.append(
                {
                    "dataset": title,
                    "claim": "lemma_2_2",
                    "verdict": grade_bound(
                        arr(r22, "sketch_error"), arr(r22, "lemma_bound"), arr(r22, "trivial_bound"), unit="points"
                    ),
                    "held": f"{held}/{len(r22)}",
                    "largest_ratio": worst["ratio_to_bound"],
                    "at": f"{worst['method_label']}, m={worst['sample_size']}",
                    "largest_ratio_to_delta": worst_d["ratio_to_delta"],
                    "vacuous_points": vacuous(r22, "lemma_bound"),
                    "paper": LEMMAS["lemma_2_2"],
                }
            )
        r24 = [r for r in rows24 if r["dataset"] == title]
        for key, col, bcol in (
            ("lemma_2_4", "ratio_stated", "bound_stated"),
            ("lemma_2_4_proof", "ratio_proof", "bound_proof"),
        ):
            if not r24:
                continue
            worst = max(r24, key=lambda r: r[col])
            held = sum(r[col] <= 1 + 1e-9 for r in r24)
            out.append(
                {
                    "dataset": title,
                    "claim": key,
                    "verdict": grade_bound(arr(r24, "lhs"), arr(r24, bcol), arr(r24, "trivial_bound"), unit="points"),
                    "held": f"{held}/{len(r24)}",
                    "largest_ratio": worst[col],
                    "at": f"{worst['method_label']}, m={worst['sample_size']}, k={worst['k']}",
                    "largest_ratio_to_delta": float("nan"),
                    "vacuous_points": vacuous(r24, bcol),
                    "paper": LEMMAS[key],
                }
            )
    return out


# ----------------------------------------------------------------------------- the results page


def render_summary(folder, figures_folder=None):
    """The Markdown section of ``docs/results/streaming_kpca.md`` on the lemmas, from the CSVs of a run.

    ``folder`` holds this reproduction's ``lemma_2_2.csv``, ``lemma_2_4.csv`` and ``claims.csv``;
    ``figures_folder`` (optional) the ``results.csv`` of ``skpca-figures``, for the
    evaluation-row ratios it reported and the check that the same estimators were refitted
    (its spectral errors equal this run's ``eps``).  Every number below comes from them.
    """
    from pathlib import Path

    folder = Path(folder)
    r22 = read_csv_rows(folder / "lemma_2_2.csv")
    r24 = read_csv_rows(folder / "lemma_2_4.csv")
    claims = read_csv_rows(folder / "claims.csv")
    fig = read_csv_rows(Path(figures_folder) / "results.csv") if figures_folder is not None else []
    titles = list(dict.fromkeys(r["dataset"] for r in r22 + r24))
    lines = _lemma_table(r22, r24, claims, titles)
    lines += _lemma_paragraphs(r22, r24, fig, titles)
    lines += _broken_proof_paragraph(r24)
    lines += _same_estimators_paragraph(r24, fig)
    return "\n".join(lines) + "\n"


def _lemma_table(r22, r24, claims, titles):
    """The per-dataset table of both lemmas' verdicts and ratios."""
    f = float
    by = {(c["dataset"], c["claim"]): c for c in claims}
    lines = [
        "| dataset | Lemma 2.2 (whole training set) | largest ratio to `‖Z‖²_F/⌊ℓ/2⌋` | "
        "largest ratio to `Δ` | Lemma 2.4 as stated | as its proof ends (`εn√k`) | "
        "bound not below the trivial one (points: 2.2 / 2.4 / 2.4's proof) |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in titles:
        c22, c24, c24p = by.get((t, "lemma_2_2")), by.get((t, "lemma_2_4")), by.get((t, "lemma_2_4_proof"))
        lines.append(
            f"| {t} | {c22['verdict']} (holds at {c22['held']}) | {f(c22['largest_ratio']):.2f} ({c22['at']}) | "
            f"{f(c22['largest_ratio_to_delta']):.2f} | "
            f"{c24['verdict']} (holds at {c24['held']}; up to {f(c24['largest_ratio']):.3g}x the bound) | "
            f"{c24p['verdict']} (holds at {c24p['held']}; largest ratio {f(c24p['largest_ratio']):.3g}, "
            f"{c24p['at']}) | "
            f"{c22.get('vacuous_points', '-')} / {c24.get('vacuous_points', '-')} / {c24p.get('vacuous_points', '-')} |"
        )
    return lines


def _lemma_paragraphs(r22, r24, fig, titles):
    """Lemma 2.2's largest ratios (whole training set, evaluation rows, certificate) and Lemma 2.4's counts."""
    f = float
    worst22 = max(r22, key=lambda r: f(r["ratio_to_bound"]))
    same_rows = _figures_agreement(r22, fig)
    proof_held = sum(f(r["ratio_proof"]) <= 1 + 1e-9 for r in r24)
    stated_failed = sum(f(r["ratio_stated"]) > 1 + 1e-9 for r in r24)
    ks_ = sorted({int(r["k"]) for r in r24})
    n_eval = sorted({int(r["n_eval"]) for r in r24})
    return [
        "",
        f"Lemma 2.2 is measured at {len(r22)} (ℓ, m) points over {len(titles)} datasets. The largest ratio of "
        f"`‖ZZᵀ − ZWWᵀZᵀ‖₂` to the bound is {f(worst22['ratio_to_bound']):.2f} ({worst22['dataset']}, "
        f"{worst22['method_label']}, m = {worst22['sample_size']})"
        + ". "
        + (
            f"skpca-figures grades the same three quantities on the same rows for its claim row; at the "
            f"{same_rows[0]} points both runs measured they agree to {same_rows[1]:.1e} relative. "
            if same_rows
            else ""
        )
        + "The sketch's certificate `Δ` is the tighter guarantee: at most "
        f"{max(f(r['ratio_to_delta']) for r in r22):.2f} of it is used. `‖Z‖²_F` from the sketch matches the "
        f"streamed `trace(ZᵀZ)` to {max(f(r['frobenius_check']) for r in r22):.1e} relative.",
        "",
        *_vacuous_paragraph(r22, r24),
        "",
        f"Lemma 2.4 is measured at {len(r24)} (method, m, k) points, for k in {ks_}, with n = "
        f"{', '.join(map(str, n_eval))} evaluation rows and ε the measured `‖G − G'‖₂/n`. The bound as "
        f"stated, `ε√(kn)`, fails at {stated_failed} of them. The bound the "
        f"proof derives, `εn√k`, holds at {proof_held}."
        + (
            " The statement drops a factor √n; the proof's last line is the lemma."
            if proof_held == len(r24) and stated_failed
            else ""
        ),
    ]


def _vacuous_paragraph(r22, r24):
    """Where the lemmas' bounds are not below the trivial bound of their quantity, and what would make them bind."""
    f = float
    if not r22 or "trivial_bound" not in r22[0]:
        return []
    vac = [r for r in r22 if f(r["lemma_bound"]) >= f(r["trivial_bound"]) * (1 - 1e-9)]
    # Z's stable rank ||Z||_F^2 / ||Z||_2^2 = lemma_bound * floor(l/2) / trivial_bound
    srank = [f(r["lemma_bound"]) * (int(r["sketch_size"]) // 2) / f(r["trivial_bound"]) for r in r22]
    ls = sorted({int(r["sketch_size"]) for r in vac})
    text = (
        f"A bound that is not below the trivial bound of its quantity cannot bind. For Lemma 2.2 the trivial "
        f"bound is `‖Z‖₂²` (a projection does not grow `ZᵀZ`'s top eigenvalue), and `‖Z‖²_F/⌊ℓ/2⌋` is below it "
        f"only when ⌊ℓ/2⌋ exceeds `Z`'s stable rank `‖Z‖²_F/‖Z‖₂²`, {min(srank):.2g}–{max(srank):.2g} here. "
        f"It is not below it at {len(vac)} of the {len(r22)} points"
        + (f" (every one with ℓ in {ls}): there the lemma holds vacuously" if vac else "")
        + "."
    )
    if r24 and "trivial_bound" in r24[0]:
        vp = [r for r in r24 if f(r["bound_proof"]) >= f(r["trivial_bound"]) * (1 - 1e-9)]
        vs = [r for r in r24 if f(r["bound_stated"]) >= f(r["trivial_bound"]) * (1 - 1e-9)]
        text += (
            f" For Lemma 2.4 it is `‖G‖_F + ‖G'_k‖_F` (the triangle inequality): the proof's bound reaches it at "
            f"{len(vp)} of {len(r24)} points, the stated bound at {len(vs)}."
        )
    return [text]


def _figures_agreement(r22, fig):
    """``(points, largest relative difference)`` of Lemma 2.2's quantities here and in skpca-figures; None if none."""
    f = float
    mine = {(r["dataset"], r["method_label"], str(r["sample_size"])): r for r in r22}
    diffs = []
    for r in fig:
        key = (r["dataset"], r.get("method_label", ""), str(r["sample_size"]))
        if r["method"] != "SKPCA" or key not in mine or r["sketch_error"] in ("", "nan"):
            continue
        for col in ("sketch_error", "fd_delta", "lemma_bound"):
            a, b = f(r[col]), f(mine[key][col])
            diffs.append(abs(a - b) / max(abs(b), 1e-300))
    return (len(diffs) // 3, max(diffs)) if diffs else None


def _broken_proof_paragraph(r24):
    """Where even the proof's bound of Lemma 2.4 fails, and why (empty when it holds everywhere)."""
    f = float
    broken = [r for r in r24 if f(r["ratio_proof"]) > 1 + 1e-9]
    if not broken:
        return []
    checks = [f(r["dense_check"]) for r in broken if r.get("dense_check", "") not in ("", "nan")]
    where = "; ".join(
        f"{r['dataset']}, {r['method_label']}, m = {r['sample_size']}, k = {r['k']}: "
        f"{f(r['lhs']):.4g} > {f(r['bound_proof']):.4g}"
        for r in broken
    )
    return [
        "",
        f"Even the proof's bound fails at {len(broken)} points ({where}). "
        + (
            f"Both sides were recomputed densely there (every eigenvalue of `G − G'`, a full SVD of `Y`), "
            f"to {max(checks):.1e} relative: the violation is not round-off. "
            if checks
            else ""
        )
        + "Two steps of the proof need more than they have. The first expands `‖G − G'_k‖²_F` in the "
        "eigenvectors `v_i` of `G − G'`, which do not diagonalise `G − G'_k`. The third bounds "
        "`Σ_{i>k} (v_iᵀGv_i)²` by `G`'s own tail `Σ_{i>k} λ_i²`, which needs the `v_i` beyond the k-th to "
        "miss `G`'s top directions.",
    ]


def _same_estimators_paragraph(r24, fig):
    """Whether this run refitted skpca-figures' estimators: its spectral errors against this run's epsilon."""
    f = float
    if not fig:
        return []
    spec = {(r["dataset"], r["method_label"], r["sample_size"]): f(r["spectral_error"]) for r in fig}
    diffs = [
        abs(f(r["eps"]) - spec[key]) / spec[key]
        for r in r24
        if (key := (r["dataset"], r["method_label"], r["sample_size"])) in spec
    ]
    if diffs:
        same = max(diffs) < 1e-9
        return [
            "",
            (
                f"These are the estimators of skpca-figures: its spectral errors equal this run's ε at all "
                f"{len(diffs)} (method, m, k) points, to {max(diffs):.1e} relative."
                if same
                else f"These are not the estimators of skpca-figures: its spectral errors differ from this "
                f"run's ε by up to {max(diffs):.2g} relative."
            ),
        ]
    return []
