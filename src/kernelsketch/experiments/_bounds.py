"""Grading a theorem's bound against what is known without it: a bound that cannot bind is not evidence.

Every upper bound a reproduction grades is set beside the *trivial* bound of the same quantity, the
one that holds whatever the theorem says (the sine of an angle is at most 1; ``||A - B||_F <=
||A||_F + ||B||_F``; ``||(I - P) Z^T Z (I - P)||_2 <= ||Z||_2^2``).  Where the theorem's bound is not
below it, "the bound holds" says nothing about the data: the grade is ``vacuous here``.

:func:`grade_bound` is the one grading rule the reproductions use, per (setting, draw):

- ``does not hold``: the measured quantity exceeds the bound in some draw (informative whatever the
  trivial bound: a proved bound that fails is a finding);
- ``vacuous here``: it holds in every draw, and in every draw the bound is at least the trivial one;
- ``holds; vacuous in k/n draws``: it holds, and the bound reaches the trivial one in some draws;
- ``holds``: it holds, and the bound is below the trivial one in every draw;
- ``not applicable``: the theorem's condition fails in every draw (the bound is NaN there).
"""

from __future__ import annotations

import numpy as np

__all__ = ["VACUOUS", "grade_bound", "is_vacuous_grade"]

#: the word every vacuous grade carries (tests look for it)
VACUOUS = "vacuous"
#: relative slack for round-off in "measured <= bound" and "bound < trivial"
RTOL = 1e-9


def grade_bound(measured, bound, trivial, unit="draws"):
    """The grade of an upper bound over draws; NaN bounds (condition failing) are left out.

    Parameters
    ----------
    measured, bound : array-like
        The quantity and the theorem's bound of it, per draw.
    trivial : float or array-like
        The trivial bound of the same quantity (broadcast against ``bound``).
    unit : str
        What one entry is, in the mixed grade ("draws", "points").

    Returns
    -------
    str
    """
    measured = np.atleast_1d(np.asarray(measured, dtype=np.float64))
    bound = np.atleast_1d(np.asarray(bound, dtype=np.float64))
    trivial = np.broadcast_to(np.asarray(trivial, dtype=np.float64), bound.shape)
    if measured.shape != bound.shape:
        raise ValueError(f"measured has shape {measured.shape} and bound {bound.shape}; they must match")
    applies = np.isfinite(bound)
    if not applies.any():
        return "not applicable"
    m, b, t = measured[applies], bound[applies], trivial[applies]
    if np.any(m > b * (1 + RTOL)):
        return "does not hold"
    vac = int(np.sum(b >= t * (1 - RTOL)))
    if vac == b.size:
        return f"{VACUOUS} here"
    if vac:
        return f"holds; {VACUOUS} in {vac}/{b.size} {unit}"
    return "holds"


def is_vacuous_grade(grade):
    """Whether a grade says the bound was vacuous (in every draw or in some)."""
    return VACUOUS in str(grade)
