"""Choosing the landmark count from a Gram-error target (kernelsketch.maps.landmark_count, choose_landmarks)."""

from __future__ import annotations

import numpy as np
import pytest

import kernelsketch as ks
from kernelsketch.kernels import get_kernel
from kernelsketch.maps.landmark_count import _nystroem_error, choose_n_landmarks, memory_limit


def _mixture(n, seed=0, d=5):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=3.0, size=(8, d))
    return centres[rng.integers(0, 8, n)] + rng.normal(size=(n, d))


def _relative_gram_error(est, S):
    """||K(S,S) - Y Y^T||_F / ||K(S,S)||_F of a fitted Nystroem's features Y of rows S."""
    K = est.kernel_(S, S)
    Y = est.transform(S)
    return np.linalg.norm(K - Y @ Y.T) / np.linalg.norm(K)


def test_the_held_out_error_is_the_nystroem_estimators_own():
    """The search's error at m equals that of ks.Nystroem fitted on the same m landmarks (full rank)."""
    X = _mixture(700)
    S, P = X[:300], X[300:]
    kernel = get_kernel("gaussian", bandwidth=2.0)
    for m in (20, 80, 400):
        est = ks.Nystroem(landmarks=P[:m], n_components=m, kernel=kernel).fit(P)
        mine = _nystroem_error(kernel(S, S), kernel(S, P[:m]), kernel(P[:m], P[:m])) / np.linalg.norm(kernel(S, S))
        assert mine == pytest.approx(_relative_gram_error(est, S), rel=1e-6, abs=1e-9)


def test_the_choice_is_the_first_grid_count_meeting_the_target():
    X = _mixture(4000)
    kernel = get_kernel("gaussian", bandwidth=3.0)
    choice = choose_n_landmarks(X, kernel, target=0.03, random_state=1)
    errors = [g["relative_frobenius"] for g in choice.grid]
    sizes = [g["n_landmarks"] for g in choice.grid]
    assert sizes == [50 * 2**i for i in range(len(sizes))] and len(sizes) >= 3
    assert choice.reached and errors[-1] <= 0.03 and all(e > 0.03 for e in errors[:-1])
    assert choice.n_landmarks == sizes[-1] and choice.relative_frobenius == errors[-1]
    # each count is graded by the worst of three disjoint landmark sets (the estimator will draw its own)
    assert [g["draws"] for g in choice.grid] == [3] * len(sizes)
    perm = np.random.RandomState(1).permutation(4000)  # choose_n_landmarks' split for random_state=1
    S, P = X[perm[:1000]], X[perm[1000:]]
    m = sizes[0]
    worst = max(
        _nystroem_error(
            kernel(S, S), kernel(S, P[k * m : (k + 1) * m]), kernel(P[k * m : (k + 1) * m], P[k * m : (k + 1) * m])
        )
        for k in range(3)
    ) / np.linalg.norm(kernel(S, S))
    assert errors[0] == pytest.approx(worst, rel=1e-10)
    assert f"n_landmarks = {choice.n_landmarks}" in choice.reason and f"{sizes[-2]} gave" in choice.reason
    # one seed, one choice
    again = choose_n_landmarks(X, kernel, target=0.03, random_state=1)
    assert again.grid == [dict(g, seconds=a["seconds"]) for g, a in zip(choice.grid, again.grid, strict=True)]


def test_an_unreachable_target_stops_at_the_budget_and_says_what_limited_it():
    X = _mixture(3000, d=20)
    kernel = get_kernel("gaussian", bandwidth=0.5)  # narrow: the Gram is nearly the identity, no low rank
    choice = choose_n_landmarks(X, kernel, target=1e-3, memory_mib=2.0)
    assert not choice.reached and choice.limited_by == "memory"
    assert choice.n_landmarks == choice.limit == memory_limit(2.0) == 295
    assert choice.relative_frobenius > 1e-3 and "above the target" in choice.reason and "memory" in choice.reason
    few = choose_n_landmarks(X[:300], kernel, target=1e-3)
    assert few.limited_by == "rows" and few.limit == few.n_landmarks == 150  # half held out


def test_fit_source_fits_with_the_chosen_count_and_meets_the_target_on_new_rows(tmp_path):
    X_all = _mixture(31_000, seed=2)
    X, fresh = X_all[:30_000], X_all[30_000:]  # fresh: rows the search never saw, same distribution
    path = tmp_path / "X.npy"
    np.save(path, X)
    est = ks.Nystroem(n_components=40, random_state=0)
    res = ks.fit_source(est, path, landmark_target=0.05)
    choice = res.landmark_choice
    assert choice.reached and est.n_landmarks == choice.n_landmarks == est.landmarks_.shape[0] == res.n_landmarks
    assert res.to_dict()["landmark_choice"]["n_landmarks"] == choice.n_landmarks
    # the estimate is what other draws of that many landmarks give on rows the search never saw
    m = choice.n_landmarks
    fresh_errors = [
        _relative_gram_error(ks.Nystroem(n_components=m, n_landmarks=m, random_state=s).fit(X), fresh) for s in range(5)
    ]
    assert max(fresh_errors) <= 0.05
    assert np.mean(fresh_errors) == pytest.approx(choice.relative_frobenius, rel=0.5)


def test_cluster_and_embed_take_a_target_and_the_cli_reports_it(tmp_path):
    from kernelsketch.cli.main import main

    X = _mixture(5000, seed=3)
    np.save(tmp_path / "X.npy", X)
    res = ks.cluster_file(X, 8, embedding=ks.KernelJL(n_components=40, random_state=0), landmark_target=0.05)
    assert res.fit.landmark_choice.reached and res.fit.n_landmarks == res.fit.landmark_choice.n_landmarks
    emb = ks.embed_file(X, None, ks.SubsampleKPCA(n_components=5, random_state=0), landmark_target=0.05)
    assert emb.fit.landmark_choice.n_landmarks == emb.fit.estimator.landmarks_.shape[0]
    out = tmp_path / "Z.npy"
    assert main(["embed", str(tmp_path / "X.npy"), "-o", str(out), "--method", "nystroem", "-d", "10",
                 "--landmark-target", "0.05", "--quiet"]) == 0  # fmt: skip
    assert np.load(out).shape == (5000, 10)


def test_bad_targets_and_estimators_are_refused_by_name():
    X = _mixture(500)
    kernel = get_kernel("gaussian", bandwidth=1.0)
    for bad in (0.0, 1.0, -0.1, 2.0):
        with pytest.raises(ValueError, match=r"target must be > 0\.0 and < 1\.0"):
            choose_n_landmarks(X, kernel, target=bad)
    with pytest.raises(TypeError, match="target must be a number"):
        choose_n_landmarks(X, kernel, target="0.05")
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        choose_n_landmarks(Xn, kernel)
    with pytest.raises(ValueError, match="at least 4 rows"):
        choose_n_landmarks(X[:3], kernel)
    with pytest.raises(TypeError, match="LandmarkSpectralEmbedding does not approximate its kernel"):
        ks.choose_landmarks(ks.LandmarkSpectralEmbedding(), X)
    with pytest.raises(TypeError, match="RandomFourierFeatures does not approximate"):
        ks.fit_source(ks.RandomFourierFeatures(), X, landmark_target=0.05)
    with pytest.raises(ValueError, match="landmarks are given"):
        ks.choose_landmarks(ks.Nystroem(landmarks=X[:10]), X)
    with pytest.raises(ValueError, match="landmark_target needs a landmark embedding"):
        ks.cluster_file(X, 2, embedding=None, landmark_target=0.05)
