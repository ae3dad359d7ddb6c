"""Preprocessing steps that a fitted clustering carries (so a saved model repeats what ``cluster`` did).

Names are imported lazily from their modules (PEP 562).
"""

from .._lazy import attach

_LAZY = {
    "MissingValueCodeImputer": "missing_value_codes",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = attach(__name__, _LAZY)
