"""Checksums and safe decompression: a file is trusted whole or not at all.

A dataset file is hashed before it is parsed, so a corrupted or substituted
file raises before any array is built.  Hashing costs a read of the whole
file, so the digest of each file is cached in-process, keyed by
``(resolved path, size, mtime_ns)``: a file rewritten in place gets a new
mtime or size and is hashed again.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import threading
import zlib
from pathlib import Path

__all__ = ["clear_hash_cache", "file_sha256", "read_gzip", "verify_file"]

_HASH_CACHE: dict[tuple[str, int, int], str] = {}
_HASH_LOCK = threading.Lock()
_BLOCK = 1 << 20  # hash in 1 MiB reads: constant memory whatever the file size


def _cache_key(path: Path) -> tuple[str, int, int]:
    st = os.stat(path)
    return (str(Path(path).resolve()), st.st_size, st.st_mtime_ns)


def file_sha256(path) -> str:
    """Hex sha256 of the bytes of ``path``, cached per (path, size, mtime)."""
    key = _cache_key(path)
    with _HASH_LOCK:
        cached = _HASH_CACHE.get(key)
    if cached is not None:
        return cached
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_BLOCK), b""):
            digest.update(block)
    hexdigest = digest.hexdigest()
    with _HASH_LOCK:
        _HASH_CACHE[key] = hexdigest
    return hexdigest


def clear_hash_cache() -> None:
    """Forget every cached digest (the next load hashes its files again)."""
    with _HASH_LOCK:
        _HASH_CACHE.clear()


def verify_file(path, expected: str) -> None:
    """Raise ValueError naming the file and both hashes unless sha256 matches."""
    actual = file_sha256(path)
    if actual != expected.lower():
        raise ValueError(
            f"checksum mismatch for {path}: expected sha256 {expected.lower()}, got {actual}. "
            "The file is corrupt, truncated or not the published version; replace it with a "
            "fresh copy (or pass sha256=None to load a file you trust)."
        )


def read_gzip(path, *, expected_size: int | None = None, expected_sha256: str | None = None) -> bytes:
    """Whole decompressed content of a gzip file, or ValueError.

    ``gzip`` raises ``EOFError`` on a truncated stream and ``BadGzipFile`` /
    ``zlib.error`` on corrupt data or a CRC mismatch; all of them become a
    ValueError naming the file, so callers never see partial data.  When the
    uncompressed size or sha256 are known (from SOURCE.md) they are checked too.
    """
    try:
        with gzip.open(path, "rb") as fh:
            data = fh.read()
    except (EOFError, OSError, zlib.error) as exc:  # BadGzipFile is an OSError
        if isinstance(exc, FileNotFoundError):
            raise
        raise ValueError(f"{path} is not a complete, valid gzip file ({type(exc).__name__}: {exc})") from exc
    if expected_size is not None and len(data) != expected_size:
        raise ValueError(f"{path}: decompressed to {len(data)} bytes, expected {expected_size}")
    if expected_sha256 is not None:
        actual = hashlib.sha256(data).hexdigest()
        if actual != expected_sha256:
            raise ValueError(f"{path}: uncompressed content has sha256 {actual}, expected {expected_sha256}")
    return data
