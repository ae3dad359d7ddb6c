"""Warnings kernelsketch emits about results that are likely poor (not about misuse, which raises)."""

from __future__ import annotations

import os
import sys
import warnings


class ApproximationWarning(UserWarning):
    """An approximation captures little of what it approximates; ``kernelsketch.diagnose`` says more.

    Filter it like any warning: ``warnings.filterwarnings("ignore", category=ApproximationWarning)``.
    """


class EmptyClusterWarning(UserWarning):
    """A clustering left some of the ``n_clusters`` clusters without a row.

    The command line shows it even with ``--quiet`` and lists it in ``--json``: the labels hold fewer
    clusters than were asked for, which changes what they mean.
    """


#: below this fraction of the kernel's trace captured on a sample, a fit warns
CAPTURED_TRACE_WARN = 0.5


def _library_dirs():
    import sklearn

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return (here + os.sep, os.path.dirname(os.path.abspath(sklearn.__file__)) + os.sep)


def warn(message, category=UserWarning):
    """``warnings.warn`` attributed to the user's line: the first caller outside kernelsketch and scikit-learn.

    A fixed ``stacklevel`` points into scikit-learn's ``fit`` wrapper or another layer of
    ours, depending on the path that led here; the user's own call is what a warning should name.
    """
    dirs = _library_dirs()
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(dirs):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
