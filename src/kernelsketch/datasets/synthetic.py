"""Synthetic data of the papers: two 2-D shapes of Kernel JL's Figure 1, and RandomNoisy.

*Cluster in Cluster* and *Crescent Full Moon* (Kpotufe & Sriperumbudur,
Figure 1, 5000 points each) are two-group sets that no line separates but a
Gaussian kernel does: the point of the figure is that Kernel JL, like KPCA,
makes them separable.  The paper shows them only as pictures, so the exact
geometry here is ours (stated in each docstring): groups are equal-sized,
uniform over their regions and separated by an empty margin, so an RBF kernel
classifier is near-perfect while the best linear one is not.

*RandomNoisy* (Ghashami, Perry & Phillips, Section 3) is a low-rank signal
plus full-rank Gaussian noise, the standard test matrix of Frequent
Directions.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..utils.validation import check_random_state

__all__ = ["make_cluster_in_cluster", "make_crescent_fullmoon", "make_random_noisy"]


def _check_int(value, name, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _uniform_annulus(rng, n, r_inner, r_outer, theta_low=0.0, theta_high=2 * np.pi):
    """n points uniform (by area) on an annulus sector; r_inner=0 gives a disk."""
    # Area-uniform radius: r^2 uniform on [r_inner^2, r_outer^2].
    r = np.sqrt(rng.uniform(r_inner**2, r_outer**2, size=n))
    theta = rng.uniform(theta_low, theta_high, size=n)
    return np.column_stack((r * np.cos(theta), r * np.sin(theta)))


def _two_groups(rng, first, second, n_samples):
    n0 = n_samples // 2
    n1 = n_samples - n0
    X = np.vstack((first(n0), second(n1)))
    y = np.repeat(np.array([0, 1], dtype=np.int64), (n0, n1))
    # Shuffled so that any prefix (e.g. the paper's n = 100 subsample) holds both groups.
    order = rng.permutation(n_samples)
    return X[order], y[order]


def make_cluster_in_cluster(n_samples=5000, *, random_state=None):
    """An inner disk (label 0) surrounded by a ring (label 1), in 2-D.

    Parameters
    ----------
    n_samples : int, default=5000
        Total number of points, split as evenly as possible between the groups.
    random_state : None, int or numpy Generator, default=None
        Seed; the same seed gives the same points.

    Returns
    -------
    X : ndarray of shape (n_samples, 2), float64
    y : ndarray of shape (n_samples,), int64 in {0, 1}

    Notes
    -----
    Group 0 is uniform on the disk of radius 1, group 1 uniform on the ring
    ``2 <= ||x|| <= 3``, both centred at the origin; rows are shuffled.
    The groups have the same mean, so a linear classifier does little better
    than chance, while the margin of width 1 makes them separable with a
    Gaussian kernel.  Cost: O(n_samples).

    References
    ----------
    S. Kpotufe and B. K. Sriperumbudur, "Gaussian Sketching yields a J-L Lemma
    in RKHS", AISTATS 2020, Figure 1 ("Cluster in Cluster", 5000 points).

    Examples
    --------
    >>> from kernelsketch.datasets import make_cluster_in_cluster
    >>> X, y = make_cluster_in_cluster(1000, random_state=0)
    >>> X.shape, int(y.sum())
    ((1000, 2), 500)
    """
    n_samples = _check_int(n_samples, "n_samples", 2)
    rng = check_random_state(random_state)
    return _two_groups(
        rng,
        lambda n: _uniform_annulus(rng, n, 0.0, 1.0),
        lambda n: _uniform_annulus(rng, n, 2.0, 3.0),
        n_samples,
    )


def make_crescent_fullmoon(n_samples=5000, *, random_state=None):
    """A full moon (disk, label 0) partly wrapped by a crescent (label 1), in 2-D.

    Parameters
    ----------
    n_samples : int, default=5000
        Total number of points, split as evenly as possible between the groups.
    random_state : None, int or numpy Generator, default=None
        Seed; the same seed gives the same points.

    Returns
    -------
    X : ndarray of shape (n_samples, 2), float64
    y : ndarray of shape (n_samples,), int64 in {0, 1}

    Notes
    -----
    Group 0 is uniform on the disk of radius 1 at the origin; group 1 is
    uniform on the annulus sector ``1.5 <= ||x|| <= 2.5`` with polar angle in
    ``[pi/4, 7pi/4]``: a 270-degree crescent open to the right, wrapping the
    moon on three sides with a margin of 0.5.  Rows are shuffled.  Cost:
    O(n_samples).

    References
    ----------
    S. Kpotufe and B. K. Sriperumbudur, "Gaussian Sketching yields a J-L Lemma
    in RKHS", AISTATS 2020, Figure 1 ("Crescent Full Moon", 5000 points).

    Examples
    --------
    >>> from kernelsketch.datasets import make_crescent_fullmoon
    >>> X, y = make_crescent_fullmoon(1000, random_state=0)
    >>> X.shape, int(y.sum())
    ((1000, 2), 500)
    """
    n_samples = _check_int(n_samples, "n_samples", 2)
    rng = check_random_state(random_state)
    return _two_groups(
        rng,
        lambda n: _uniform_annulus(rng, n, 0.0, 1.0),
        lambda n: _uniform_annulus(rng, n, 1.5, 2.5, np.pi / 4, 7 * np.pi / 4),
        n_samples,
    )


def make_random_noisy(n_samples=20000, n_features=1000, signal_dim=50, zeta=10.0, *, random_state=None):
    """The RandomNoisy matrix ``A = S D U + F / zeta`` (n_samples x n_features).

    Parameters
    ----------
    n_samples : int, default=20000
        Rows n (the paper uses 20000).
    n_features : int, default=1000
        Columns d (the paper uses 1000).
    signal_dim : int, default=50
        Signal rank s < d (the paper uses 50).
    zeta : float, default=10
        Signal-to-noise control: the noise is ``F / zeta`` (the paper uses 10).
    random_state : None, int or numpy Generator, default=None
        Seed; the same seed gives the same matrix.

    Returns
    -------
    A : ndarray of shape (n_samples, n_features), float64

    Notes
    -----
    As defined in Section 3 of the paper: ``S`` is n x s with i.i.d. N(0, 1)
    entries, ``D`` is s x s diagonal with linearly decreasing entries
    ``D_ii = 1 - (i - 1)/d`` (i = 1..s; d = n_features, exactly as the
    paper writes it), ``U`` is s x d with orthonormal rows (the first s rows
    of a Haar-random rotation of R^d), and ``F`` is n x d with i.i.d. N(0, 1)
    entries.  The top s singular values of ``A`` are therefore close to
    ``sqrt(n) D_ii`` (between about 0.95 sqrt(n) and sqrt(n) with the
    defaults), while the noise singular values stay below about
    ``(sqrt(n) + sqrt(d)) / zeta`` (Marchenko-Pastur edge).  The Frequent
    Directions paper the construction comes from (Liberty, KDD 2013) decays
    the diagonal as ``1 - (i - 1)/s`` instead; with s = 50 and zeta = 10 its
    last signal directions fall below the noise.  Cost: O(n d s) time,
    O(n d) memory (160 MB for the defaults).

    References
    ----------
    M. Ghashami, D. J. Perry and J. M. Phillips, "Streaming Kernel Principal
    Component Analysis", AISTATS 2016, Section 3 (data set RandomNoisy).
    E. Liberty, "Simple and Deterministic Matrix Sketching", KDD 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelsketch.datasets import make_random_noisy
    >>> A = make_random_noisy(500, 40, signal_dim=5, random_state=0)
    >>> s = np.linalg.svd(A, compute_uv=False)
    >>> A.shape, bool(s[4] > 5 * s[5])
    ((500, 40), True)
    """
    n_samples = _check_int(n_samples, "n_samples", 1)
    n_features = _check_int(n_features, "n_features", 2)
    signal_dim = _check_int(signal_dim, "signal_dim", 1)
    if signal_dim >= n_features:
        raise ValueError(f"signal_dim must be < n_features (a low-rank signal), got {signal_dim} >= {n_features}")
    if isinstance(zeta, bool) or not isinstance(zeta, numbers.Real) or not np.isfinite(zeta) or zeta <= 0:
        raise ValueError(f"zeta must be a positive finite number, got {zeta!r}")
    rng = check_random_state(random_state)
    S = rng.standard_normal((n_samples, signal_dim))
    D = 1.0 - np.arange(signal_dim) / n_features
    # Haar-random orthonormal rows: QR of a Gaussian matrix, with R's signs folded into Q.
    Q, R = np.linalg.qr(rng.standard_normal((n_features, signal_dim)))
    U = (Q * np.sign(np.diag(R))).T
    A = rng.standard_normal((n_samples, n_features))
    A /= zeta
    A += (S * D) @ U  # S D U without forming D
    return A
