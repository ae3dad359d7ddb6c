"""Choosing k without labels: the relative eigengap against clustering stability, by a fixed protocol.

The protocol, written before any number was looked at:

* **Sets.** The twelve labelled sets of the spectral-recipe benchmark, split the same way
  (:data:`benchmarks.spectral_recipe.TUNING` / :data:`~benchmarks.spectral_recipe.CONFIRMATION`,
  seed 37).  Each set: a seeded sample of at most :data:`SAMPLE` rows (what ``diagnose`` reads by
  default), preprocessed as ``cluster``'s default does (z-scored when the columns' magnitudes spread
  over more than ``UNIT_SPREAD``; missing-value codes left as they are).
* **Candidates.** k = 2 .. :data:`K_MAX` on every set (the true k is 2 to 12).
* **Criteria.** ``eigengap``: the largest relative eigengap of the graph ``diagnose -k <true k>``
  recommends (what ``diagnose`` reports today); ``stability``: the largest mean ARI between two
  halves' labelings (:func:`kernelsketch.cluster.stability.clustering_stability`, 5 splits);
  ``lange``: the lowest normalized instability of the same splits (Lange et al. 2004).
* **Score.** A pick is a hit when it is within 1 of the true k (and exact when equal), over
  :data:`SEEDS` seeds per set.  The criterion with the most hits on the **tuning half** is chosen
  (ties: more exact hits, then the incumbent eigengap); the confirmation half is reported untouched.

Usage (writes ``benchmarks/results/choose-k.md`` and ``.csv``)::

    python -m benchmarks.choose_k [--quick]
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
import warnings

import numpy as np

from ._harness import machine_info
from .spectral_recipe import CONFIRMATION, RESULTS, SPLIT_SEED, TUNING, load

SAMPLE = 2000
K_MAX = 15
SEEDS = (0, 1, 2)
N_PAIRS = 5
CRITERIA = ("eigengap", "stability", "lange")
INCUMBENT = "eigengap"


def prepare(X, seed):
    """A seeded sample of at most SAMPLE rows, standardized as ``cluster``'s default would."""
    from sklearn.preprocessing import StandardScaler

    from kernelsketch.out_of_core import UNIT_SPREAD, magnitude_spread

    rng = np.random.default_rng([seed, 11])
    if X.shape[0] > SAMPLE:
        X = X[np.sort(rng.choice(X.shape[0], SAMPLE, replace=False))]
    if magnitude_spread(np.abs(X).max(axis=0)) > UNIT_SPREAD:
        X = StandardScaler().fit_transform(X)
    return X


def picks(X, k_true, seed):
    """Each criterion's k on one prepared sample, and the seconds each took."""
    from kernelsketch.cluster.stability import clustering_stability
    from kernelsketch.diagnostics import clustering_advice

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        advice = clustering_advice(X, k_true, random_state=seed)
    eig = next(r["k"] for r in advice["k_ranking"] if r["k"] <= K_MAX)
    t1 = time.perf_counter()
    res = clustering_stability(X, range(2, K_MAX + 1), n_pairs=N_PAIRS, random_state=seed)
    t2 = time.perf_counter()
    return (
        {"eigengap": eig, "stability": res.best_k("ari"), "lange": res.best_k("lange")},
        {"eigengap": t1 - t0, "stability": t2 - t1, "lange": t2 - t1},
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two sets of each half, one seed (a smoke test)")
    ap.add_argument("--render", action="store_true", help="rewrite the .md from the committed .csv (no run)")
    args = ap.parse_args(argv)
    if args.render:
        with open(os.path.join(RESULTS, "choose-k.csv"), newline="") as fh:
            rows = [
                {k: (int(v) if k in ("k_true", "seed", "k_picked", "within_1", "exact") else v) for k, v in r.items()}
                for r in csv.DictReader(fh)
            ]
        for r in rows:
            r["seconds"] = float(r["seconds"])
        write(rows, choose(rows), False, machine=None)
        return 0
    tuning = TUNING[:2] if args.quick else TUNING
    confirmation = CONFIRMATION[:2] if args.quick else CONFIRMATION
    seeds = SEEDS[:1] if args.quick else SEEDS
    print(f"choose_k: seeds {list(seeds)}, sample {SAMPLE}, k in 2..{K_MAX}, {N_PAIRS} splits; split seed {SPLIT_SEED}")
    rows = []
    for half, sets in (("tuning", tuning), ("confirmation", confirmation)):
        for name in sets:
            X, y = load(name)
            k_true = int(np.unique(y).size)
            for seed in seeds:
                Xs = prepare(X, seed)
                got, secs = picks(Xs, k_true, seed)
                for crit in CRITERIA:
                    rows.append(
                        {
                            "half": half,
                            "dataset": name,
                            "k_true": k_true,
                            "seed": seed,
                            "criterion": crit,
                            "k_picked": got[crit],
                            "within_1": int(abs(got[crit] - k_true) <= 1),
                            "exact": int(got[crit] == k_true),
                            "seconds": round(secs[crit], 2),
                        }
                    )
                print(f"  {half:12s} {name:14s} k={k_true:2d} seed {seed}: {got}", flush=True)
    chosen = choose(rows)
    write(rows, chosen, args.quick, machine=machine_info())
    return 0


def tally(rows, half, crit):
    sub = [r for r in rows if r["half"] == half and r["criterion"] == crit]
    return sum(r["within_1"] for r in sub), sum(r["exact"] for r in sub), len(sub)


def choose(rows):
    """The criterion with the most tuning-half hits (ties: exact hits, then the incumbent)."""
    return max(CRITERIA, key=lambda c: (*tally(rows, "tuning", c)[:2], c == INCUMBENT))


def write(rows, chosen, quick, machine):
    os.makedirs(RESULTS, exist_ok=True)
    stem = os.path.join(RESULTS, "choose-k" + ("-quick" if quick else ""))
    md_machine = ""
    if machine is not None:
        with open(stem + ".csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        md_machine = (
            f" ({machine['date']}, {machine['cpu']}, {machine['cores']}, kernelsketch {machine['kernelsketch']}, "
            f"scikit-learn {machine['sklearn']})"
        )
        with open(stem + ".machine.txt", "w") as fh:
            fh.write(md_machine.strip(" ()") + "\n")
    elif os.path.exists(stem + ".machine.txt"):
        with open(stem + ".machine.txt") as fh:
            md_machine = f" ({fh.read().strip()})"
    lines = [
        "# Choosing k without labels: relative eigengap vs clustering stability",
        "",
        f"`python -m benchmarks.choose_k{' --quick' if quick else ''}`{md_machine}. The protocol is in the "
        "module's docstring, fixed before the run: the spectral-recipe benchmark's split (seed "
        f"{SPLIT_SEED}), a sample of at most {SAMPLE} rows preprocessed as `cluster` does, k in 2..{K_MAX}, "
        f"seeds {sorted({r['seed'] for r in rows})}; a pick within 1 of the true k is a hit. The criterion with "
        "the most hits on the tuning half is chosen; the confirmation half is reported as it came out.",
        "",
        "| half | criterion | within 1 of the true k | exact | mean seconds per sample |",
        "|---|---|---|---|---|",
    ]
    for half in ("tuning", "confirmation"):
        for c in CRITERIA:
            w1, ex, n = tally(rows, half, c)
            secs = np.mean([r["seconds"] for r in rows if r["half"] == half and r["criterion"] == c])
            mark = " (chosen)" if c == chosen else ""
            lines.append(f"| {half} | {c}{mark} | {w1}/{n} | {ex}/{n} | {secs:.1f} |")
    lines += ["", "Picks per set (one per seed):", "", "| half | dataset | true k | " + " | ".join(CRITERIA) + " |"]
    lines.append("|---|---|---|" + "---|" * len(CRITERIA))
    for half in ("tuning", "confirmation"):
        for name in dict.fromkeys(r["dataset"] for r in rows if r["half"] == half):
            sub = [r for r in rows if r["dataset"] == name]
            cells = [", ".join(str(r["k_picked"]) for r in sub if r["criterion"] == c) for c in CRITERIA]
            lines.append(f"| {half} | {name} | {sub[0]['k_true']} | " + " | ".join(cells) + " |")
    lines += ["", f"Chosen on the tuning half: **{chosen}**.", ""]
    with open(stem + ".md", "w") as fh:
        fh.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
