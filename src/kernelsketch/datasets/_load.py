"""Public loaders: ``load_dataset``, ``dataset_path``, ``list_datasets``, ``citation``.

Every load verifies the sha256 of each stored file against the registry
before a byte is parsed, then parses the original format with content
checks; nothing is fetched from the network and nothing runs at import.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import DTypeLike

from .._typing import PathLike
from . import _parsers
from ._integrity import file_sha256, verify_file
from ._locate import ENV_VAR, DatasetNotFoundError, find_dataset
from ._registry import DATASETS, get_info

__all__ = ["citation", "dataset_path", "download_dataset", "list_datasets", "load_dataset"]


class _Registry:
    """Sentinel default of ``sha256``: use the checksums recorded in the registry."""

    def __repr__(self):
        return "'registry'"


_REGISTRY = _Registry()


def _expected_hashes(info, sha256):
    """filename -> expected sha256 (or None), and whether the published file is expected."""
    if sha256 is _REGISTRY or (isinstance(sha256, str) and sha256 == "registry"):
        return {spec.name: spec.sha256 for spec in info.files}, not info.is_directory
    if sha256 is None:
        return {spec.name: None for spec in info.files}, False
    if info.is_directory:
        raise ValueError(f"dataset {info.name!r} has no single checksum; pass sha256=None or leave the default")
    if isinstance(sha256, str):
        if len(info.files) != 1:
            raise ValueError(
                f"dataset {info.name!r} has {len(info.files)} files; pass sha256 as a "
                f"dict {{filename: hash}} over {[s.name for s in info.files]}"
            )
        return {info.files[0].name: sha256.lower()}, False
    if isinstance(sha256, Mapping):
        unknown = set(sha256) - {spec.name for spec in info.files}
        if unknown:
            raise ValueError(
                f"sha256 names unknown files {sorted(unknown)}; {info.name!r} has {[s.name for s in info.files]}"
            )
        return {spec.name: sha256.get(spec.name) for spec in info.files}, False
    raise TypeError(f"sha256 must be None, a hex str or a dict of them, got {type(sha256).__name__}")


def _target_dtype(info, dtype):
    if dtype is None:
        return np.dtype(np.float64)
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"dtype {dtype!r} is not a numpy dtype") from exc
    allowed = [np.dtype(np.float64), np.dtype(np.float32)]
    if info.name == "mnist":
        allowed.append(np.dtype(np.uint8))  # raw pixels: lossless and 8x smaller
    if dt not in allowed:
        raise ValueError(f"dtype must be one of {[str(a) for a in allowed]} for {info.name!r}, got {dt}")
    return dt


def _stack(Xs, dtype):
    """Concatenate parts into one freshly allocated array of ``dtype`` (one copy, no float64 detour)."""
    if sp.issparse(Xs[0]):
        return sp.vstack(Xs, format="csr", dtype=dtype)
    out = np.empty((sum(X.shape[0] for X in Xs), Xs[0].shape[1]), dtype=dtype)
    start = 0
    for X in Xs:
        out[start : start + X.shape[0]] = X
        start += X.shape[0]
    return out


def _as_dtype(X, dtype):
    if sp.issparse(X):
        return X.astype(dtype, copy=False)
    return np.ascontiguousarray(X, dtype=dtype)


def load_dataset(
    name: str,
    data_home: PathLike | None = None,
    *,
    return_split: bool = False,
    dtype: DTypeLike | None = None,
    sha256: str | object | None = _REGISTRY,
    **options: Any,
) -> tuple[Any, ...]:
    """Load a dataset as ``(X, y)``, verifying its checksum first.

    Parameters
    ----------
    name : str
        One of ``list(DATASETS)``: ``"banknote"``, ``"avila"``, ``"cpu"``, ``"adult"``,
        ``"diabetes"``, ``"mnist"``, ``"forest"``, ``"iot"``.
    data_home : path-like, optional
        Folder holding ``<name>/<files>``; searched first.  Then ``$KERNELSKETCH_DATA``,
        then a ``shared/datasets`` folder above the package or the working directory,
        then (banknote only) the copy shipped in the package.
    return_split : bool, default=False
        For sets that ship a train/test split (avila, adult, mnist), return
        ``(X_train, y_train, X_test, y_test)`` instead of the concatenation.
    dtype : {None, numpy.float64, numpy.float32}, default=None
        dtype of ``X`` (``None`` means float64).  MNIST also accepts ``numpy.uint8``.
    sha256 : None, str or dict, optional
        By default each file's sha256 must equal the registry's, and the
        published shapes are checked.  ``None`` skips the checksum (a file you
        trust, e.g. a small file in the same format); a hex string (single-file
        sets) or a ``{filename: hash}`` dict checks against your own hashes.
    **options
        Parser options of the ``iot`` set: ``target`` (``"device"`` or
        ``"traffic"``), ``devices`` (list of device folder names),
        ``max_rows_per_file`` (int).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), or CSR matrix (adult)
    y : ndarray of shape (n_samples,)
        int64 class labels (banknote 0/1; adult, diabetes -1/+1; mnist 0..9;
        forest 1..7), float64 regression target (cpu), or ``str`` labels
        (avila letters; iot device or traffic names).

    Raises
    ------
    DatasetNotFoundError
        The files are in none of the searched places (all are listed).
    ValueError
        Checksum mismatch (naming the file, expected and actual hash), a
        truncated or corrupt gzip, or content not in the documented format.

    Notes
    -----
    The checksum is that of the file as stored (the ``.gz``), recorded in each
    ``SOURCE.md`` of ``shared/datasets`` and in :data:`DATASETS`.  It is
    computed once per (path, size, mtime) in a process, so repeated loads
    only pay for parsing.  Cost: one pass over the compressed bytes for the
    hash, one decompression, one parse; MNIST takes about a second.

    References
    ----------
    See :func:`citation` for the reference of each dataset.

    Examples
    --------
    >>> from kernelsketch.datasets import load_dataset
    >>> X, y = load_dataset("banknote")
    >>> X.shape, X.dtype, sorted(set(y.tolist()))
    ((1372, 4), dtype('float64'), [0, 1])
    """
    info = get_info(name)
    allowed = set(info.options)
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise TypeError(
            f"load_dataset({info.name!r}) got unexpected keyword argument(s) {unknown}; "
            f"accepted: {sorted(allowed) or 'none beyond data_home, return_split, dtype, sha256'}"
        )
    if return_split and not info.has_split:
        with_split = sorted(n for n, i in DATASETS.items() if i.has_split)
        raise ValueError(f"dataset {info.name!r} ships no train/test split; return_split=True works for {with_split}")
    target_dtype = _target_dtype(info, dtype)
    expected, strict = _expected_hashes(info, sha256)
    folder = find_dataset(info, data_home)
    parser = getattr(_parsers, info.parser)
    if info.is_directory:
        parts = parser(folder, **options)
    else:
        files = [folder / spec.name for spec in info.files]
        # Every file is verified before any is parsed: a bad test file must not cost a train parse.
        for path, spec in zip(files, info.files, strict=True):
            if expected[spec.name] is not None:
                verify_file(path, expected[spec.name])
        parts = parser(files, info.files, strict=strict)
    if strict:
        n_rows = sum(X.shape[0] for X, _ in parts)
        if (n_rows, parts[0][0].shape[1]) != info.shape:
            raise ValueError(f"dataset {info.name!r} parsed to {(n_rows, parts[0][0].shape[1])}, expected {info.shape}")
    if return_split:
        (X_tr, y_tr), (X_te, y_te) = parts
        return _as_dtype(X_tr, target_dtype), y_tr, _as_dtype(X_te, target_dtype), y_te
    if len(parts) == 1:
        X, y = parts[0]
        return _as_dtype(X, target_dtype), y
    return _stack([X for X, _ in parts], target_dtype), np.concatenate([y for _, y in parts])


def dataset_path(name, data_home=None) -> Path:
    """Folder from which ``load_dataset(name, data_home)`` would read.

    Raises :class:`DatasetNotFoundError` (listing every place searched) when the
    files are nowhere.  No checksum is computed.

    Examples
    --------
    >>> from kernelsketch.datasets import dataset_path
    >>> (dataset_path("banknote") / "data_banknote_authentication.txt.gz").is_file()
    True
    """
    return find_dataset(get_info(name), data_home)


def _checksum_status(info, folder) -> str:
    if info.is_directory:
        return "no published checksum (CSV headers are checked when loading)"
    bad = []
    for spec in info.files:
        try:
            if file_sha256(folder / spec.name) != spec.sha256:
                bad.append(spec.name)
        except OSError:
            bad.append(spec.name)
    return f"mismatch: {', '.join(bad)}" if bad else "ok"


def list_datasets(data_home=None, *, verify=True) -> list[dict]:
    """One info dict per registered dataset: where it is and whether it checks out.

    Keys: ``name``, ``available`` (bool), ``path`` (folder or ``None``),
    ``checksum`` (``"ok"``, ``"mismatch: <files>"``, ``"not checked"``,
    ``"missing"`` or, for iot, a note that none is published), ``shape``,
    ``task``, ``description``.

    Examples
    --------
    >>> from kernelsketch.datasets import list_datasets
    >>> info = {d["name"]: d for d in list_datasets()}
    >>> info["banknote"]["available"], info["banknote"]["checksum"]
    (True, 'ok')
    """
    rows = []
    for name, info in DATASETS.items():
        try:
            folder = find_dataset(info, data_home)
        except DatasetNotFoundError:
            folder = None
        if folder is None:
            status = "missing"
        elif verify:
            status = _checksum_status(info, folder)
        else:
            status = "not checked"
        rows.append(
            {
                "name": name,
                "available": folder is not None,
                "path": folder,
                "checksum": status,
                "shape": info.shape,
                "task": info.task,
                "description": info.description,
            }
        )
    return rows


def citation(name) -> str:
    """The reference to cite when using dataset ``name``.

    Examples
    --------
    >>> from kernelsketch.datasets import citation
    >>> "LeCun" in citation("mnist")
    True
    """
    return get_info(name).citation


def download_dataset(name, data_home=None) -> Path:
    """Download ``name``'s files into ``<data_home>/<name>/`` and verify them (needs network).

    Only sets whose published files have a direct URL and a known sha256 can be
    fetched (currently ``forest``); the others list where to get them.  Never
    called by the tests or at import.
    """
    info = get_info(name)
    if not info.files or any(spec.url is None for spec in info.files):
        raise ValueError(
            f"dataset {info.name!r} cannot be downloaded automatically: get it from {info.url} "
            f"(or the project's shared/datasets folder) and place it under <data_home>/{info.name}/"
        )
    if data_home is None:
        data_home = os.environ.get(ENV_VAR, "").split(os.pathsep)[0] or None
    if data_home is None:
        raise ValueError(f"pass data_home or set ${ENV_VAR} to say where to store {info.name!r}")
    folder = Path(os.fspath(data_home)).expanduser() / info.name
    folder.mkdir(parents=True, exist_ok=True)
    for spec in info.files:
        target = folder / spec.name
        if target.is_file() and (spec.sha256 is None or file_sha256(target) == spec.sha256):
            continue
        if spec.url is None:
            raise ValueError(f"dataset {info.name!r}: file {spec.name} has no download address; get it from {info.url}")
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".part")
        try:
            with os.fdopen(fd, "wb") as out, urllib.request.urlopen(spec.url, timeout=60) as resp:
                shutil.copyfileobj(resp, out)
            if spec.sha256 is not None:
                verify_file(tmp, spec.sha256)
            os.replace(tmp, target)  # atomic: a half-downloaded file is never left under the real name
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return folder


def shipped_datasets() -> dict[str, str]:
    """Dataset name -> ``"ok"``, ``"missing"`` or ``"checksum mismatch"`` for every copy shipped in the package.

    What ``kernelsketch info`` reports (and exits 1 on, unless every copy is ``"ok"``): a check
    that an installation carries its vendored data intact.

    Examples
    --------
    >>> shipped_datasets()
    {'banknote': 'ok'}
    """
    from . import _locate

    states = {}
    for name, ds in DATASETS.items():
        if not ds.vendored:
            continue
        paths = [_locate.VENDORED_DIR / spec.name for spec in ds.files]
        if not all(path.is_file() for path in paths):
            states[name] = "missing"
        elif any(spec.sha256 and file_sha256(path) != spec.sha256 for spec, path in zip(ds.files, paths, strict=True)):
            states[name] = "checksum mismatch"
        else:
            states[name] = "ok"
    return states
