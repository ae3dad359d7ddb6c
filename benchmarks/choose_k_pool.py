"""Choosing k without labels on the 48-set pool: which criterion ``n_clusters="auto"`` ships (issues 51, 52).

The protocol, written before any number was looked at (committed with this file before its first run):

* **Sets.** The 48 sets of :mod:`benchmarks.cluster_pool` in its 7 groups; the true k of each is known
  (2 to 100; a set whose k is above :data:`K_MAX` can never be hit, and counts as a miss).
* **Candidates.** k = 2 .. :data:`K_MAX`.
* **Criteria.** ``eigengap``: the largest relative eigengap ``(mu_{k+1} - mu_k) / (mu_{k+1} + 0.05)``
  (``mu = 1 - lambda``) of the default graph's spectrum, fitted once on all rows as ``cluster`` fits them
  (columns z-scored when their magnitudes spread over more than ``UNIT_SPREAD``): free, from the kept
  statistics; ``stability``: the largest mean ARI between two halves' labelings of a seeded sample of at
  most :data:`SAMPLE` rows (:func:`kernelsketch.cluster.stability.clustering_stability`, 3 splits);
  ``two``: always 2 (the baseline).
* **Score.** Per set and seed (0, 1, 2), a pick is *exact* when it equals the true k and *within one* when
  it is at most 1 away.  **Leave one group out** as in ``cluster_pool``: for each group, the criterion with the
  most within-one hits on the other 6 groups (ties: more exact hits, then the cheaper criterion, in the
  order ``two``, ``eigengap``, ``stability``) is scored on the left-out group.  The criterion chosen on all 7
  groups is the one ``n_clusters="auto"`` ships; the left-out rates are the estimate for unseen data.

**Second round** (issue 52's time target: ``"auto"`` within 3x of a run with k given), written before its first
run, the first round's rows kept as they were (the shipped code of ``two``, ``eigengap`` and ``stability`` did not
change): two cheaper variants of ``stability``, the same criterion on fewer rows or splits,
``stability-1000x1`` (one split of a sample of at most 1,000 rows: about a seventh of ``stability``'s time) and
``stability-2000x1`` (one split of at most 2,000 rows: about a third).  The rule is the first round's, over the
five criteria, cheaper first in ties: ``two``, ``eigengap``, ``stability-1000x1``, ``stability-2000x1``,
``stability``.  The variants' seconds are the criterion's alone (no fit of the embedding on all rows, which they
do not use); the first round's include that fit.

Usage (writes ``benchmarks/results/choose-k-pool.md`` and ``.csv``)::

    python -m benchmarks.choose_k_pool [--resume]
"""

from __future__ import annotations

import argparse
import csv
import os
import time
import warnings

import numpy as np

from ._harness import machine_info
from .cluster_pool import GROUPS, RESULTS, load_pool

K_MAX = 20
SAMPLE = 2000
SEEDS = (0, 1, 2)
CRITERIA = ("two", "eigengap", "stability-1000x1", "stability-2000x1", "stability")
#: the second round's variants: ``(sample rows, splits)`` of the stability criterion
VARIANTS = {"stability-1000x1": (1000, 1), "stability-2000x1": (2000, 1)}
FIELDS = ("group", "set", "k", "seed", "criterion", "pick", "seconds")


def _prepared(X):
    from sklearn.preprocessing import StandardScaler

    from kernelsketch.out_of_core import UNIT_SPREAD, magnitude_spread

    return StandardScaler().fit_transform(X) if magnitude_spread(np.abs(X).max(axis=0)) > UNIT_SPREAD else X


def pick(criterion, X, seed):
    """The k of ``criterion`` for ``X`` (already prepared as ``cluster`` prepares it): the shipped code,
    :func:`kernelsketch.cluster.choose_k.choose_n_clusters`, on the default embedding fitted on all rows."""
    import kernelsketch as ks
    from kernelsketch.cluster.choose_k import choose_n_clusters

    if criterion == "two":
        return 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if criterion in VARIANTS:
            rows, splits = VARIANTS[criterion]
            return choose_n_clusters(
                None,
                X,
                criterion="stability",
                k_max=K_MAX,
                stability_sample=rows,
                stability_splits=splits,
                random_state=seed,
            ).k
        emb = ks.LandmarkSpectralEmbedding(n_components=1, random_state=seed).fit(X)
        return choose_n_clusters(emb, X, criterion=criterion, k_max=K_MAX, random_state=seed).k


def measure(sets, done, writer, fh):
    for criterion in CRITERIA:
        for group, name, X, _y, k in sets:
            Xp = _prepared(X)
            for seed in (0,) if criterion == "two" else SEEDS:
                if (group, name, criterion, str(seed)) in done:
                    continue
                t0 = time.perf_counter()
                choice = pick(criterion, Xp, seed)
                secs = time.perf_counter() - t0
                values = (group, name, k, seed, criterion, choice, f"{secs:.3f}")
                writer.writerow(dict(zip(FIELDS, values, strict=True)))
                fh.flush()
                print(f"{group}/{name} (k={k}) {criterion} seed {seed}: {choice} ({secs:.1f} s)")


def _rates(rows, criterion, groups):
    sel = [r for r in rows if r["criterion"] == criterion and r["group"] in groups]
    if criterion == "two":  # deterministic: one row stands for every seed
        sel = [r for r in sel for _ in SEEDS]
    exact = sum(int(r["pick"]) == int(r["k"]) for r in sel)
    within = sum(abs(int(r["pick"]) - int(r["k"])) <= 1 for r in sel)
    return exact, within, len(sel)


def render(rows, info):
    order = {c: i for i, c in enumerate(CRITERIA)}
    lines = [
        "# Choosing k without labels on the 48-set pool (issues 51 and 52)",
        "",
        f"Machine: {info.get('cpu', '?')}, {info.get('cores', '?')} cores; "
        f"kernelsketch {info.get('kernelsketch', '?')}, {info.get('date', '?')}. "
        "Produced by `python -m benchmarks.choose_k_pool` (its docstring states the "
        f"protocol, fixed before the first run). k = 2 .. {K_MAX}; seeds {list(SEEDS)}; stability on a sample of at "
        f"most {SAMPLE} rows.",
        "",
        "## Leave one group out (the estimate for unseen data)",
        "",
        "| left-out group | chosen on the other groups | exact | within one | "
        + " | ".join(f"{c} exact / within one" for c in CRITERIA)
        + " |",
        "|---|---|---|---|" + "---|" * len(CRITERIA),
    ]
    total_e = total_w = total_n = 0
    for g in GROUPS:
        others = [h for h in GROUPS if h != g]
        best = max(CRITERIA, key=lambda c: (*_rates(rows, c, others)[:2][::-1], -order[c]))
        e, w, n = _rates(rows, best, [g])
        total_e, total_w, total_n = total_e + e, total_w + w, total_n + n
        cells = []
        for c in CRITERIA:
            ce, cw, cn = _rates(rows, c, [g])
            cells.append(f"{ce}/{cn} / {cw}/{cn}")
        lines.append(f"| {g} | {best} | {e}/{n} | {w}/{n} | " + " | ".join(cells) + " |")
    chosen = max(CRITERIA, key=lambda c: (*_rates(rows, c, GROUPS)[:2][::-1], -order[c]))
    all_cells = []
    for c in CRITERIA:
        ce, cw, cn = _rates(rows, c, GROUPS)
        all_cells.append(f"{ce}/{cn} / {cw}/{cn}")
    lines += [
        f"| **all** | | **{total_e}/{total_n}** | **{total_w}/{total_n}** | " + " | ".join(all_cells) + " |",
        "",
        f'Chosen on all 7 groups (what `n_clusters="auto"` ships): **{chosen}**.',
        "",
        "## Time per pick (median seconds over sets and seeds)",
        "",
        "The first round's rows (two, eigengap, stability) include the fit of the default embedding on all rows and "
        "were measured while other benchmarks shared the 2 cores (their maximum also spans a pause of the process); "
        "the second round's variants are the criterion alone, run alone: indicative only. "
        '`python -m benchmarks.auto_k_time` times `n_clusters="auto"` against k given.',
        "",
        "| criterion | median s | max s |",
        "|---|---|---|",
    ]
    for c in CRITERIA:
        secs = [float(r["seconds"]) for r in rows if r["criterion"] == c]
        if secs:
            lines.append(f"| {c} | {np.median(secs):.2f} | {max(secs):.2f} |")
    lines += ["", "## Per set (picks for seeds 0, 1, 2)", "", "| set | k | " + " | ".join(CRITERIA) + " |"]
    lines.append("|---|---|" + "---|" * len(CRITERIA))
    sets = sorted({(r["group"], r["set"], r["k"]) for r in rows}, key=lambda s: (GROUPS.index(s[0]), s[1]))
    for g, s, k in sets:
        cells = []
        for c in CRITERIA:
            picks = [r["pick"] for r in rows if (r["group"], r["set"], r["criterion"]) == (g, s, c)]
            cells.append(", ".join(picks))
        lines.append(f"| {g}/{s} | {k} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n", chosen


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--resume", action="store_true")
    p.add_argument("--render-only", action="store_true")
    p.add_argument("--csv", default=os.path.join(RESULTS, "choose-k-pool.csv"))
    p.add_argument("--output", default=os.path.join(RESULTS, "choose-k-pool.md"))
    args = p.parse_args(argv)
    if not args.render_only:
        sets = load_pool()
        rows = []
        if args.resume and os.path.exists(args.csv):
            with open(args.csv, newline="") as fh:
                rows = list(csv.DictReader(fh))
        done = {(r["group"], r["set"], r["criterion"], r["seed"]) for r in rows}
        with open(args.csv, "a" if rows else "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=FIELDS)
            if not rows:
                writer.writeheader()
            measure(sets, done, writer, fh)
    with open(args.csv, newline="") as fh:
        rows = list(csv.DictReader(fh))
    page, chosen = render(rows, machine_info())
    with open(args.output, "w") as fh:
        fh.write(page)
    print(f"wrote {args.output}; chosen: {chosen}")


if __name__ == "__main__":
    main()
