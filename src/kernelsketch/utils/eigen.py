"""Which eigenpairs of a (centred) Gram matrix are signal and which are rounding noise."""

from __future__ import annotations

import warnings

import numpy as np


def noise_floor(n, kmax, eigenvalue_tol, lambda_max):
    """Smallest eigenvalue treated as signal.

    An n x n Gram computed in float64 carries rounding noise of spectral size
    about ``n * eps * max|K_ij|``; an eigenvalue below ten times that, or
    below ``eigenvalue_tol * lambda_max`` (a relative cut for ill-conditioned
    but exact spectra), cannot be inverted or trusted.
    """
    return max(eigenvalue_tol * max(float(lambda_max), 0.0),
               10.0 * n * np.finfo(np.float64).eps * float(kmax),
               np.finfo(np.float64).tiny)


def drop_noise_eigenpairs(w, V, *, n, kmax, eigenvalue_tol, requested, owner, what="Gram matrix", stacklevel=3):
    """Keep eigenpairs (descending ``w``) above :func:`noise_floor`.

    Warns once (RuntimeWarning) when ``requested`` (the user's explicit
    ``n_components``) components had to be dropped; raises ValueError when
    none is left.
    """
    floor = noise_floor(n, kmax, eigenvalue_tol, w[0] if len(w) else 0.0)
    keep = w > floor
    if not np.any(keep):
        raise ValueError(
            f"{owner}: the {what} is numerically zero (all eigenvalues below {floor:.3g}): the points are "
            "indistinguishable under this kernel -- is the bandwidth far larger than the data's spread, "
            "or are all points identical?"
        )
    if not np.all(keep):
        if requested is not None:
            warnings.warn(
                f"{owner}: {int(np.sum(~keep))} of the {len(w)} requested eigenvalues of the {what} are below "
                f"{floor:.3g} (numerically zero, e.g. duplicate points or a fast-decaying spectrum); their "
                f"components were dropped, keeping {int(np.sum(keep))}",
                RuntimeWarning, stacklevel=stacklevel,
            )
        w, V = w[keep], V[:, keep]
    return w, V
