"""Landmarks the data needs: ``"auto"`` (a count from N) against ``landmark_target`` (a count from an error).

For each data set, ``Nystroem`` (full rank, the default bandwidth heuristic) is fitted
with the landmark count ``"auto"`` gives and with the count ``choose_landmarks`` picks for
each target; each row reports the count, the search's time, the fit's time, and the relative
Frobenius error ``||K - Y Y^T||_F / ||K||_F`` of the Gram of 2,000 rows drawn with another seed
(rows the fit and the search did not choose), mean over seeds::

    python -m benchmarks.landmark_choice            # writes benchmarks/results/landmark-choice.md
    python -m benchmarks.landmark_choice --quick    # two sets, one seed, no file

The question it answers: does the chosen count meet its target on fresh rows, and what does it
cost against "auto" (fewer landmarks where "auto" over-provisions, more where it falls short)?
"""

from __future__ import annotations

import argparse
import datetime
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "landmark-choice.md"
SETS = ("banknote", "avila", "cpu", "adult", "mnist")
TARGETS = (0.05, 0.02)
EVAL_ROWS = 2000


def _load(name):
    import kernelsketch as ks

    X, _ = ks.load_dataset(name)
    X = X.toarray() if hasattr(X, "toarray") else X
    return np.asarray(X, dtype=np.float64)


def _error(est, X, seed):
    rows = np.sort(np.random.default_rng(10_000 + seed).choice(X.shape[0], min(EVAL_ROWS, X.shape[0]), replace=False))
    S = X[rows]
    K = est.kernel_(S, S)
    Y = est.transform(S)
    return float(np.linalg.norm(K - Y @ Y.T) / np.linalg.norm(K))


def measure(name, seeds):
    import kernelsketch as ks
    from kernelsketch.maps.landmarks import auto_n_landmarks

    X = _load(name)
    out = []
    for setting in ("auto", *TARGETS):
        rec = {"set": name, "N": X.shape[0], "D": X.shape[1], "setting": setting}
        rec.update(m=[], search=[], fit=[], err=[])
        for seed in seeds:
            t = time.perf_counter()
            if setting == "auto":
                m, reached = auto_n_landmarks(X.shape[0]), None
            else:
                choice = ks.choose_landmarks(ks.Nystroem(random_state=seed), X, target=setting, random_state=seed)
                m, reached = choice.n_landmarks, choice.reached
            rec["search"].append(time.perf_counter() - t)
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = ks.Nystroem(n_landmarks=m, n_components=m, random_state=seed).fit(X)
            rec["fit"].append(time.perf_counter() - t)
            rec["m"].append(m)
            rec["err"].append(_error(est, X, seed))
            rec["reached"] = reached
        out.append(rec)
        print(
            f"{name}: {setting}: m {rec['m']} error {np.round(rec['err'], 4).tolist()} "
            f"search {np.mean(rec['search']):.2f} s fit {np.mean(rec['fit']):.2f} s",
            flush=True,
        )
    return out


def render(rows, seeds):
    try:
        git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout
    except OSError:
        git = "?"
    lines = [
        '# Landmarks the data needs: `n_landmarks="auto"` against `landmark_target`',
        "",
        f"`python -m benchmarks.landmark_choice` (seeds {', '.join(map(str, seeds))}); "
        f"{datetime.date.today()}, {platform.machine()}, git {git.strip() or '?'}.",
        "",
        "- date: " + str(datetime.date.today()),
        "",
        "Nystroem at full rank with the default bandwidth heuristic; `m`: landmarks (the seeds' values); "
        f"error: relative Frobenius error of the Gram of {EVAL_ROWS:,} rows drawn with another seed, mean "
        "(max) over seeds; search: `choose_landmarks`' time (a sample read by index, the kernel blocks, one "
        "eigendecomposition per grid count); fit: the Nystroem fit with that count.",
        "",
        "| data (N x D) | landmarks | m | error mean (max) | target met on fresh rows | search s | fit s |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        target = r["setting"]
        met = "-" if target == "auto" else ("yes" if max(r["err"]) <= target else "NO")
        if target != "auto" and r["reached"] is False:
            met += " (target out of reach: the largest allowed count)"
        ms = sorted(set(r["m"]))
        lines.append(
            f"| {r['set']} ({r['N']:,} x {r['D']}) | "
            + ('"auto"' if target == "auto" else f"target {target:g}")
            + f" | {', '.join(map(str, ms))} | {np.mean(r['err']):.4f} ({max(r['err']):.4f}) | {met} | "
            f"{np.mean(r['search']):.2f} | {np.mean(r['fit']):.2f} |"
        )
    met = [r for r in rows if r["setting"] != "auto"]
    ok = sum(max(r["err"]) <= r["setting"] for r in met)
    lines += [
        "",
        f"The chosen count meets its target on fresh rows in {ok} of {len(met)} (set, target) pairs. "
        '"auto" depends on N alone; the chosen count depends on the kernel\'s spectrum on the data.',
        "",
    ]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="banknote and avila, one seed, print only")
    args = parser.parse_args(argv)
    seeds = list(range(1 if args.quick else args.seeds))
    rows = []
    for name in SETS[:2] if args.quick else SETS:
        rows += measure(name, seeds)
    md = render(rows, seeds)
    if args.quick:
        print(md)
        return 0
    tmp = OUT.with_suffix(".md.tmp")
    tmp.write_text(md)
    tmp.replace(OUT)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
