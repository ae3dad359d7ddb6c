"""Streaming matrix sketches: Frequent Directions (``partial_fit`` + ``merge``)."""

from .frequent_directions import FrequentDirections

__all__ = ["FrequentDirections"]
