"""Warnings kernelsketch emits about results that are likely poor (not about misuse, which raises)."""

from __future__ import annotations


class ApproximationWarning(UserWarning):
    """An approximation captures little of what it approximates; ``kernelsketch.diagnose`` says more.

    Filter it like any warning: ``warnings.filterwarnings("ignore", category=ApproximationWarning)``.
    """


#: below this fraction of the kernel's trace captured on a sample, a fit warns
CAPTURED_TRACE_WARN = 0.5
