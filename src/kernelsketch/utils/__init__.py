"""Shared helpers: input validation, random state, memory-budgeted chunking.

Names are imported lazily from their modules (PEP 562): a light module here (``warnings``, ``progress``) is
imported without scikit-learn.
"""

from .._lazy import attach

_LAZY = {
    "check_input": "validation",
    "check_n_features": "validation",
    "check_random_state": "validation",
    "gen_row_slices": "chunking",
    "get_chunk_n_rows": "chunking",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = attach(__name__, _LAZY)
