"""A short reference implementation of Chen & Cai's landmark spectral clustering (LSC-R, LSC-K).

Clearly a *reference*, used only by the benchmarks: in memory, dense, written from the paper
(X. Chen, D. Cai, "Large scale spectral clustering with landmark-based representation", AAAI
2011) and its published settings, independently of :mod:`kernelsketch`:

1. ``p`` landmarks: a uniform sample of rows (LSC-R) or k-means centres of all rows (LSC-K, a
   few Lloyd iterations, as their code's ``litekmeans`` with ``MaxIter`` 5 does);
2. ``Z``: each row joined to its ``r = 5`` nearest landmarks with Gaussian weights
   ``exp(-d^2 / (2 sigma^2))``, ``sigma`` the mean distance of a row to those ``r`` landmarks,
   each row of ``Z`` scaled to sum 1;
3. ``Zh = Z D^{-1/2}`` (``D`` the column sums of ``Z``); the ``k`` top left singular vectors
   ``U`` of ``Zh`` (from the ``p x p`` eigenproblem of ``Zh^T Zh``);
4. each row of ``U`` scaled to unit length (Ng, Jordan & Weiss), then ``KMeans(k, n_init=10)``.
"""

from __future__ import annotations

import warnings

import numpy as np


def lsc(X, k, *, landmarks="uniform", n_landmarks=1000, r=5, random_state=0):
    """Cluster labels of the rows of ``X`` by LSC-R (``landmarks="uniform"``) or LSC-K (``"kmeans"``)."""
    from sklearn.cluster import KMeans
    from sklearn.metrics.pairwise import euclidean_distances

    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    p = min(n_landmarks, n)
    rng = np.random.default_rng(random_state)
    if landmarks == "uniform":
        L = X[rng.choice(n, p, replace=False)]
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            L = KMeans(p, n_init=1, max_iter=5, random_state=random_state).fit(X).cluster_centers_
    r = min(r, p)
    rows, cols, dists = [], [], []
    for start in range(0, n, 4096):
        D = euclidean_distances(X[start : start + 4096], L)
        idx = np.argsort(D, axis=1)[:, :r]
        rows.append(np.repeat(np.arange(start, start + idx.shape[0]), r))
        cols.append(idx.ravel())
        dists.append(np.take_along_axis(D, idx, axis=1).ravel())
    rows, cols, dists = np.concatenate(rows), np.concatenate(cols), np.concatenate(dists)
    sigma = dists.mean()
    w = np.exp(-(dists**2) / (2 * sigma**2)).reshape(n, r)
    w /= np.maximum(w.sum(axis=1, keepdims=True), 1e-300)
    import scipy.sparse as sp

    Z = sp.csr_matrix((w.ravel(), (rows, cols)), shape=(n, p))
    deg = np.asarray(Z.sum(axis=0)).ravel()
    Zh = Z @ sp.diags(1.0 / np.sqrt(np.maximum(deg, 1e-300)))
    lam, V = np.linalg.eigh((Zh.T @ Zh).toarray())
    lam, V = lam[::-1][:k], V[:, ::-1][:, :k]
    U = np.asarray(Zh @ (V / np.sqrt(np.maximum(lam, 1e-300))))
    U /= np.maximum(np.linalg.norm(U, axis=1, keepdims=True), 1e-300)
    return KMeans(k, n_init=10, random_state=random_state).fit_predict(U)


def lsc_m(X, k, *, n_landmarks=1000, r=5, kmeans_iter=5, random_state=0):
    """LSC-K as Chen & Cai's released ``LSC.m`` sets it (the issue-51 reference), written from its steps.

    Differences from :func:`lsc`: the Gaussian's ``sigma`` is the mean *squared* distance of every row to
    every landmark (``mean(mean(EuDist2(data, marks, 0)))``) and the weights are ``exp(-d^2 / (2 sigma^2))``;
    ``k + 1`` singular vectors of ``Z D^{-1/2}`` are computed and the first (trivial) one dropped; landmarks
    are ``litekmeans`` centres (k-means with ``MaxIter`` 5, one start), then unit rows and ``KMeans(k,
    n_init=10)``.  ``p = 1000``, ``r = 5``: its defaults.
    """
    import scipy.sparse as sp
    from sklearn.cluster import KMeans

    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    p = min(n_landmarks, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        L = KMeans(p, n_init=1, max_iter=kmeans_iter, random_state=random_state).fit(X).cluster_centers_
    r = min(r, p)
    l_sq = (L**2).sum(axis=1)
    total, idx, d2 = 0.0, np.empty((n, r), dtype=np.int64), np.empty((n, r))
    for start in range(0, n, 4096):
        B = X[start : start + 4096]
        D = np.maximum((B**2).sum(axis=1)[:, None] - 2.0 * B @ L.T + l_sq[None, :], 0.0)
        total += D.sum()
        part = np.argsort(D, axis=1)[:, :r]
        idx[start : start + B.shape[0]] = part
        d2[start : start + B.shape[0]] = np.take_along_axis(D, part, axis=1)
    sigma = total / (n * p)
    w = np.exp(-d2 / (2.0 * sigma**2))
    w /= np.maximum(w.sum(axis=1, keepdims=True), 1e-300)
    Z = sp.csr_matrix((w.ravel(), (np.repeat(np.arange(n), r), idx.ravel())), shape=(n, p))
    deg = np.maximum(np.sqrt(np.asarray(Z.sum(axis=0)).ravel()), 1e-12)
    Zh = Z @ sp.diags(1.0 / deg)
    lam, V = np.linalg.eigh((Zh.T @ Zh).toarray())
    lam, V = lam[::-1][: k + 1], V[:, ::-1][:, : k + 1]
    U = np.asarray(Zh @ (V / np.sqrt(np.maximum(lam, 1e-300))))[:, 1:]
    U /= np.maximum(np.linalg.norm(U, axis=1, keepdims=True), 1e-300)
    return KMeans(k, n_init=10, random_state=random_state).fit_predict(U)
