"""Seed streams of the reproductions: one named, order-independent Generator per stream of a run."""

from __future__ import annotations

import numpy as np


def stream_rng(seed, *stream):
    """A Generator for one named stream of one run: results do not depend on the order streams are used in."""
    return np.random.default_rng([int(seed), *[int(s) for s in stream]])


def int_seed(rng):
    """An int seed in ``[0, 2**31 - 1)`` drawn from ``rng`` (for estimators' ``random_state``)."""
    return int(rng.integers(0, 2**31 - 1))
