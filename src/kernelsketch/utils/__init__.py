"""Shared helpers: input validation, random state, memory-budgeted chunking."""

from .chunking import gen_row_slices, get_chunk_n_rows
from .validation import check_input, check_n_features, check_random_state

__all__ = ["check_input", "check_n_features", "check_random_state", "gen_row_slices", "get_chunk_n_rows"]
