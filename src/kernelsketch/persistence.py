"""Save and load fitted estimators in a safe, versioned file format.

A model file is one ZIP archive (readable by ``numpy.load`` as an ``.npz``)
holding ``meta.json`` and one ``.npy`` entry per array.  ``meta.json`` records
the format name and version, the library version, the estimator tree
(parameters and fitted state as JSON, arrays by reference), the dtype and
shape of every array, and the sha256 of the arrays.

Loading never unpickles and never imports or executes anything named by the
file: classes are looked up by name in a fixed allowlist of kernelsketch
estimators (and a few scikit-learn ones they may hold), kernels in the table
of kernel classes, and arrays are read with ``allow_pickle=False`` after
their header has been checked against the metadata.  A file with another
format version, a missing or extra array, a shape or dtype mismatch or a
checksum mismatch is refused with a :class:`ModelFormatError` naming the
problem.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import numbers
import os
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._typing import PathLike
from ._version import __version__
from .estimators import estimator_locations
from .utils.array_api import host_array, is_device_array, move_estimator_to

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "ModelFormatError", "load", "save"]

FORMAT_NAME = "kernelsketch-model"
FORMAT_VERSION = 2
#: versions this release reads (1: the arrays' checksum only; 2: meta.json covered too)
READABLE_VERSIONS = (1, 2)
_META = "meta.json"
# meta.json larger than this is not ours (protects json.loads from a crafted giant entry)
_MAX_META_BYTES = 64 * 2**20
# scikit-learn classes a model may hold: as a kernelsketch estimator's fitted state, or as the
# steps of a Pipeline around kernelsketch estimators (preprocessing and the linear models
# commonly put after a kernel map).  Only these are ever constructed by load().
_SKLEARN_CLASSES = {
    "sklearn.KMeans": ("sklearn.cluster", "KMeans"),
    "sklearn.MiniBatchKMeans": ("sklearn.cluster", "MiniBatchKMeans"),
    "sklearn.PCA": ("sklearn.decomposition", "PCA"),
    "sklearn.IncrementalPCA": ("sklearn.decomposition", "IncrementalPCA"),
    "sklearn.Pipeline": ("sklearn.pipeline", "Pipeline"),
    "sklearn.StandardScaler": ("sklearn.preprocessing", "StandardScaler"),
    "sklearn.MinMaxScaler": ("sklearn.preprocessing", "MinMaxScaler"),
    "sklearn.MaxAbsScaler": ("sklearn.preprocessing", "MaxAbsScaler"),
    "sklearn.RobustScaler": ("sklearn.preprocessing", "RobustScaler"),
    "sklearn.Normalizer": ("sklearn.preprocessing", "Normalizer"),
    "sklearn.LogisticRegression": ("sklearn.linear_model", "LogisticRegression"),
    "sklearn.Ridge": ("sklearn.linear_model", "Ridge"),
    "sklearn.RidgeClassifier": ("sklearn.linear_model", "RidgeClassifier"),
    "sklearn.LinearRegression": ("sklearn.linear_model", "LinearRegression"),
    "sklearn.SGDClassifier": ("sklearn.linear_model", "SGDClassifier"),
    "sklearn.LinearSVC": ("sklearn.svm", "LinearSVC"),
}
# kernelsketch helpers (not estimators) that fitted state may hold, e.g. Nystroem's
# reservoir of landmarks after partial_fit
_INTERNAL_CLASSES = {
    "kernelsketch.ReservoirSampler": ("kernelsketch.maps.landmarks", "ReservoirSampler"),
    # the package's searcher objects: a model fitted with one searches with it when loaded (device= / --device and
    # --search faiss; predict --device moves a model's searches)
    "kernelsketch.TorchSearch": ("kernelsketch.kernels.torch_search", "TorchSearch"),
    "kernelsketch.FaissSearch": ("kernelsketch.kernels.search", "FaissSearch"),
}
# bit generators whose state a fitted stream may carry (a reservoir's random stream)
_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")


class ModelFormatError(ValueError):
    """The file is not a valid kernelsketch model (or was modified after saving)."""


# -- the allowlists ---------------------------------------------------------------
def _estimator_table():
    """Class name -> (module, attribute) of every class that may appear in a model file."""
    table = estimator_locations()
    table.update(_SKLEARN_CLASSES)
    table.update(_INTERNAL_CLASSES)
    return table


#: state every estimator may carry besides its declared ``_persistent_state`` (scikit-learn's)
#: (``_sklearn_output_config``: what ``set_output(transform="pandas")`` set, restored on load)
_COMMON_STATE = ("n_features_in_", "feature_names_in_", "_sklearn_output_config")


def _persistent_state(est, params, where):
    """The fitted state to write: the class's declared ``_persistent_state`` (kernelsketch classes).

    An attribute the class does not declare is an error, not a silent omission; caches the class
    declares in ``_transient_state`` (rebuilt from the saved state when needed) are left out. Classes
    without a declaration (the allowlisted scikit-learn ones) give their ``__dict__``, as
    their own pickling does.
    """
    declared = getattr(type(est), "_persistent_state", None)
    transient = set(getattr(type(est), "_transient_state", ()))
    found = {k: v for k, v in vars(est).items() if k not in params and k not in transient}
    if declared is None:
        return found
    undeclared = sorted(set(found) - set(declared) - set(_COMMON_STATE))
    if undeclared:
        raise TypeError(
            f"cannot save {where}: {type(est).__name__} holds state its class does not declare in "
            f"_persistent_state: {undeclared}"
        )
    return {k: found[k] for k in (*_COMMON_STATE, *declared) if k in found}


def _init_param_names(cls):
    """Constructor parameters: scikit-learn's list, or a helper's declared ``_init_params``."""
    if hasattr(cls, "_get_param_names"):
        return list(cls._get_param_names())
    return list(getattr(cls, "_init_params", ()))


def _class_key(obj):
    """Allowlist key of ``obj``'s class, or None if the class is not allowlisted."""
    import importlib

    cls = type(obj)
    for key, (module, attr) in _estimator_table().items():
        if cls.__name__ == attr and cls.__module__.startswith(module.split(".")[0]):
            try:
                if getattr(importlib.import_module(module), attr) is cls:
                    return key
            except (ImportError, AttributeError):
                continue
    return None


def _resolve_class(key):
    import importlib

    table = _estimator_table()
    if not isinstance(key, str) or key not in table:
        raise ModelFormatError(
            f"class {key!r} is not a kernelsketch estimator this version can load (known: {sorted(table)})"
        )
    module, attr = table[key]
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ModelFormatError(f"class {key!r} is not available in this installation ({exc})") from exc


def _kernel_classes():
    from .kernels.kernel_functions import KERNELS

    return {cls.__name__: cls for cls in set(KERNELS.values())}


# -- encoding ---------------------------------------------------------------------
class _Encoder:
    def __init__(self):
        self.arrays = {}
        self.dropped = []

    def array(self, a, where):
        key = f"arr_{len(self.arrays)}"
        a = np.asarray(a)
        if a.dtype.hasobject and a.ndim == 1 and all(type(x) is str for x in a):
            # feature_names_in_, classes_ of strings: a list in JSON, an object array again on load
            return {"__strarray__": [str(x) for x in a]}
        if a.dtype.hasobject:
            raise TypeError(f"cannot save {where}: object arrays are not supported (they would need pickle)")
        if a.dtype.kind not in "biufcUS" or a.dtype.names is not None:
            raise TypeError(f"cannot save {where}: arrays of dtype {a.dtype} are not supported")
        self.arrays[key] = (np.ascontiguousarray(a), where)
        return {"__ndarray__": key}

    def encode(self, v, where, state=False):
        if state and isinstance(v, np.random.Generator):
            # fitted state (a reservoir's random stream): kept, so partial_fit continues as it would have
            bg = v.bit_generator
            if type(bg).__name__ not in _BIT_GENERATORS:
                raise TypeError(f"cannot save {where}: bit generator {type(bg).__name__}")
            return {"__generator__": type(bg).__name__, "state": self.encode(bg.state, f"{where}.state")}
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, numbers.Integral) and type(v) is int:
            return v
        if type(v) is float:
            return v
        if is_device_array(v):
            v = host_array(v)  # a model fitted on a device (PyTorch, CuPy, ...) is written as host arrays
        if isinstance(v, np.ndarray):
            return self.array(v, where)
        if isinstance(v, np.generic):
            if v.dtype.kind not in "biufc":
                raise TypeError(f"cannot save {where}: numpy scalar of dtype {v.dtype}")
            return {"__npscalar__": v.dtype.str, "value": self.encode(v.item(), where)}
        if isinstance(v, complex):
            return {"__complex__": [v.real, v.imag]}
        if isinstance(v, np.dtype):
            if v.kind not in "biufcUS" or v.names is not None:
                raise TypeError(f"cannot save {where}: dtype {v}")
            return {"__dtype__": v.str}
        if isinstance(v, (list, tuple)):
            items = [self.encode(x, f"{where}[{i}]", state) for i, x in enumerate(v)]
            return items if isinstance(v, list) else {"__tuple__": items}
        if isinstance(v, dict):
            return {
                "__dict__": [[self.encode(k, f"{where} key"), self.encode(x, f"{where}[{k!r}]")] for k, x in v.items()]
            }
        if sp.issparse(v):
            fmt = v.format
            if fmt not in ("csr", "csc"):
                v, fmt = v.tocsr(), "csr"
            return {
                "__sparse__": fmt,
                "shape": list(v.shape),
                "data": self.array(v.data, f"{where}.data"),
                "indices": self.array(v.indices, f"{where}.indices"),
                "indptr": self.array(v.indptr, f"{where}.indptr"),
            }
        from .kernels.kernel_functions import Kernel

        if isinstance(v, Kernel):
            name = type(v).__name__
            if _kernel_classes().get(name) is not type(v):
                raise TypeError(f"cannot save {where}: kernel class {name} is not a kernelsketch kernel")
            return {"__kernel__": name, "params": self.encode(v.get_params(), f"{where}.params")}
        if isinstance(v, (np.random.Generator, np.random.RandomState, np.random.SeedSequence, np.random.BitGenerator)):
            # Random generators are never stored (their state is not part of a fitted model).
            self.dropped.append(where)
            return None
        key = _class_key(v)
        if key is not None:
            return self.estimator(v, key, where)
        raise TypeError(
            f"cannot save {where}: values of type {type(v).__module__}.{type(v).__qualname__} "
            "are not supported by the model format"
        )

    def estimator(self, est, key, where):
        names = _init_param_names(type(est))
        params = {k: getattr(est, k) for k in names} if not hasattr(est, "get_params") else est.get_params(deep=False)
        state = _persistent_state(est, params, where)
        return {
            "__estimator__": key,
            "params": {k: self.encode(v, f"{where}.{k}") for k, v in params.items()},
            "state": {k: self.encode(v, f"{where}.{k}", state=True) for k, v in state.items()},
        }


def _npy_bytes(a) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, a, allow_pickle=False)
    return buf.getvalue()


def _digest(entries) -> str:
    """sha256 over (name, bytes) pairs in name order."""
    h = hashlib.sha256()
    for name in sorted(entries):
        h.update(name.encode())
        h.update(b"\0")
        h.update(entries[name])
    return h.hexdigest()


def _meta_digest(meta) -> str:
    """sha256 of meta.json's content (canonical JSON, without this digest): edits to parameters are caught too."""
    body = {k: v for k, v in meta.items() if k != "meta_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def save(estimator: Any, path: PathLike, *, overwrite: bool = True) -> Path:
    """Save a kernelsketch estimator (fitted or not) to ``path``.

    Parameters
    ----------
    estimator : kernelsketch estimator or Pipeline
        Any estimator exported by :mod:`kernelsketch` (maps, sketches,
        decompositions, clustering), or a :class:`sklearn.pipeline.Pipeline`
        of such estimators and scikit-learn scalers / linear models
        (``StandardScaler``, ``MinMaxScaler``, ``MaxAbsScaler``, ``RobustScaler``,
        ``Normalizer``, ``PCA``, ``LogisticRegression``, ``Ridge``,
        ``RidgeClassifier``, ``LinearRegression``, ``SGDClassifier``, ``LinearSVC``).
    path : path-like
        Target file (conventionally ``.npz``); written atomically.
    overwrite : bool, default=True
        Replace an existing file.

    Returns
    -------
    pathlib.Path

    Notes
    -----
    Parameters and every attribute of the instance that is not a parameter
    (fitted ``*_`` attributes and private fitted state, such as Nystroem's
    reservoir of landmarks after ``partial_fit`` and its random stream) are
    stored; arrays go to ``.npy`` entries, the rest to JSON.  A ``random_state``
    *parameter* given as a Generator is saved as None: a loaded model
    transforms exactly as the saved one, and a loaded stream continues
    ``partial_fit`` as the saved one would, but refitting from scratch is not
    reproducible.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from kernelsketch import KernelPCA, save, load
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> model = KernelPCA(n_components=2, bandwidth=2.0).fit(X)
    >>> path = save(model, os.path.join(tempfile.mkdtemp(), "kpca.npz"))
    >>> np.allclose(load(path).transform(X), model.transform(X), rtol=1e-12, atol=1e-12)
    True
    """
    from .io.atomic import AtomicPath

    key = _class_key(estimator)
    if key is None or (key.startswith("sklearn.") and key != "sklearn.Pipeline") or key in _INTERNAL_CLASSES:
        raise TypeError(
            f"save() takes a kernelsketch estimator or a Pipeline of kernelsketch and "
            f"scikit-learn steps ({', '.join(k.split('.', 1)[1] for k in _SKLEARN_CLASSES)}), "
            f"got {type(estimator).__name__}"
        )
    if key == "sklearn.Pipeline" and getattr(estimator, "memory", None) is not None:
        raise TypeError("save() needs Pipeline(memory=None): a cache location is not part of a model")
    enc = _Encoder()
    root = enc.estimator(estimator, key, type(estimator).__name__)
    entries = {f"{k}.npy": _npy_bytes(a) for k, (a, _) in enc.arrays.items()}
    meta = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "estimator": key,
        "root": root,
        "arrays": {
            k: {"dtype": a.dtype.str, "shape": list(a.shape), "name": where} for k, (a, where) in enc.arrays.items()
        },
        "arrays_sha256": _digest(entries),
        "not_stored": enc.dropped,
    }
    meta["meta_sha256"] = _meta_digest(meta)
    with AtomicPath(path, force=overwrite) as tmp:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED) as zf:
            zf.writestr(_META, json.dumps(meta, indent=1), compress_type=zipfile.ZIP_DEFLATED)
            for name, data in entries.items():
                zf.writestr(name, data)
    return Path(os.fspath(path))


# -- decoding ---------------------------------------------------------------------
def _read_array(path, name, data, spec):
    """Parse one ``.npy`` entry after checking its header against the metadata."""
    f = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, _fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, _fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f"npy version {version}")
    except ValueError as exc:
        raise ModelFormatError(f"{path}: array {spec.get('name', name)!r} ({name}) is corrupt: {exc}") from exc
    if dtype.hasobject:
        raise ModelFormatError(
            f"{path}: array {spec.get('name', name)!r} ({name}) holds Python objects; "
            "model files never contain pickled data"
        )
    if dtype.str != spec.get("dtype") or list(shape) != list(spec.get("shape", [])):
        raise ModelFormatError(
            f"{path}: array {spec.get('name', name)!r} ({name}) has dtype {dtype.str} and shape "
            f"{tuple(shape)}, the metadata says {spec.get('dtype')} and {tuple(spec.get('shape', []))}"
        )
    # the header's claim against the bytes actually there, before anything is allocated
    # (Python ints: a crafted shape cannot overflow)
    n_items = 1
    for n in shape:
        n_items *= int(n)
    if n_items * dtype.itemsize != len(data) - f.tell():
        raise ModelFormatError(
            f"{path}: array {spec.get('name', name)!r} ({name}) header claims shape {tuple(shape)} of "
            f"{dtype.str} ({n_items * dtype.itemsize} bytes) but the entry holds {len(data) - f.tell()} bytes"
        )
    f.seek(0)
    try:
        # A fresh, owned, writeable copy (partial_fit may update it in place), not a
        # read-only view of the zip buffer.
        return np.array(np.lib.format.read_array(f, allow_pickle=False), copy=True, order="K")
    except ValueError as exc:
        raise ModelFormatError(
            f"{path}: array {spec.get('name', name)!r} ({name}) is truncated or corrupt: {exc}"
        ) from exc


class _Decoder:
    def __init__(self, path, arrays):
        self.path = path
        self.arrays = arrays

    def fail(self, msg):
        raise ModelFormatError(f"{self.path}: {msg}")

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(x) for x in node]
        if not isinstance(node, dict) or len(node) == 0:
            self.fail(f"unexpected metadata node {node!r}")
        if "__ndarray__" in node:
            key = node["__ndarray__"]
            if key not in self.arrays:
                self.fail(f"array {key!r} is referenced but not listed")
            return self.arrays[key]
        if "__strarray__" in node:
            items = node["__strarray__"]
            if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
                self.fail("malformed string array")
            return np.array(items, dtype=object)
        if "__generator__" in node:
            name = node["__generator__"]
            if name not in _BIT_GENERATORS:
                self.fail(f"unknown bit generator {name!r}")
            bg = getattr(np.random, name)()
            try:
                bg.state = self.decode(node.get("state"))
            except (TypeError, ValueError, KeyError) as exc:
                self.fail(f"invalid {name} state: {exc}")
            return np.random.Generator(bg)
        if "__npscalar__" in node:
            dt = self.dtype(node["__npscalar__"])
            return dt.type(self.decode(node["value"]))
        if "__complex__" in node:
            re_, im = node["__complex__"]
            return complex(re_, im)
        if "__dtype__" in node:
            return self.dtype(node["__dtype__"])
        if "__tuple__" in node:
            return tuple(self.decode(x) for x in node["__tuple__"])
        if "__dict__" in node:
            out = {}
            for pair in node["__dict__"]:
                if not isinstance(pair, list) or len(pair) != 2:
                    self.fail("malformed dict entry")
                k = self.decode(pair[0])
                try:
                    out[k] = self.decode(pair[1])
                except TypeError:
                    self.fail(f"unhashable dict key {k!r}")
            return out
        if "__sparse__" in node:
            fmt = node["__sparse__"]
            cls = {"csr": sp.csr_matrix, "csc": sp.csc_matrix}.get(fmt)
            if cls is None:
                self.fail(f"unknown sparse format {fmt!r}")
            try:
                return cls(
                    (self.decode(node["data"]), self.decode(node["indices"]), self.decode(node["indptr"])),
                    shape=tuple(node["shape"]),
                )
            except (ValueError, TypeError, KeyError) as exc:
                self.fail(f"inconsistent sparse matrix: {exc}")
        if "__kernel__" in node:
            cls = _kernel_classes().get(node["__kernel__"])
            if cls is None:
                self.fail(f"unknown kernel class {node['__kernel__']!r}")
            params = self.decode(node.get("params", {"__dict__": []}))
            try:
                return cls(**params)
            except (TypeError, ValueError) as exc:
                self.fail(f"invalid kernel parameters {params!r}: {exc}")
        if "__estimator__" in node:
            return self.estimator(node)
        self.fail(f"unknown metadata node with keys {sorted(node)}")

    def dtype(self, s):
        try:
            dt = np.dtype(s)
        except TypeError:
            self.fail(f"invalid dtype {s!r}")
        if dt.kind not in "biufcUS" or dt.names is not None:
            self.fail(f"dtype {s!r} is not allowed")
        return dt

    def estimator(self, node):
        cls = _resolve_class(node["__estimator__"])
        params = {k: self.decode(v) for k, v in node.get("params", {}).items()}
        # A parameter added after a file was written takes the value that reproduces
        # that file's behaviour, not today's default (KernelJL's scaling="paper"),
        # and fitted attributes added with it get their then-implied values.
        added = getattr(cls, "_before_parameter_added", {})
        upgraded_state = {}
        for k, (value, attrs) in added.items():
            if k not in params:
                params[k] = value
                upgraded_state.update(attrs)
        known = set(_init_param_names(cls))
        unknown = set(params) - known
        if unknown:
            self.fail(f"parameters {sorted(unknown)} are not parameters of {cls.__name__} in this version")
        try:
            est = cls(**params)
        except (TypeError, ValueError) as exc:
            self.fail(f"cannot rebuild {cls.__name__}({params}): {exc}")
        declared = getattr(cls, "_persistent_state", None)
        for k, v in node.get("state", {}).items():
            if not isinstance(k, str) or not k.isidentifier() or k.startswith("__"):
                self.fail(f"invalid attribute name {k!r}")
            if declared is not None and k not in declared and k not in _COMMON_STATE:
                self.fail(f"{cls.__name__} has no fitted attribute {k!r} in this version")
            est.__dict__[k] = self.decode(v)
        if node.get("state"):
            for k, v in upgraded_state.items():
                est.__dict__.setdefault(k, v)
        return est


def _estimators_in(est):
    """The estimator and every estimator its parameters or fitted state hold (Pipeline steps too)."""
    seen, stack = [], [est]
    while stack:
        e = stack.pop()
        if any(e is x for x in seen):
            continue
        seen.append(e)
        for v in vars(e).values():
            items = v if isinstance(v, (list, tuple)) else [v]
            for item in items:
                item = item[-1] if isinstance(item, tuple) and item else item
                if hasattr(item, "get_params") and hasattr(item, "__dict__"):
                    stack.append(item)
    return seen


def _check_loaded(path, est):
    """What a file may not carry even with valid checksums (they are unkeyed: anyone can recompute them).

    A Pipeline's ``memory`` (its ``fit`` would write to a directory named by the file), and
    non-finite numbers in a kernelsketch estimator's fitted arrays (no fit produces them,
    and ``transform`` would write NaN embeddings).
    """
    for e in _estimators_in(est):
        if type(e).__name__ == "Pipeline" and getattr(e, "memory", None) is not None:
            raise ModelFormatError(
                f"{path}: the Pipeline has memory={e.memory!r}; model files never name a cache location "
                "(save() refuses one too)"
            )
        if not type(e).__module__.startswith("kernelsketch."):
            continue
        _check_loaded_params(path, e)
        declared = getattr(type(e), "_persistent_state", ())
        for k in declared:
            v = e.__dict__.get(k)
            _check_loaded_state_type(path, e, k, v)
            _check_loaded_array_dtype(path, e, k, v)
            if sp.issparse(v):
                v = v.data
            if isinstance(v, np.ndarray) and v.dtype.kind in "fc" and not np.all(np.isfinite(v)):
                raise ModelFormatError(
                    f"{path}: {type(e).__name__}.{k} holds NaN or infinite values, which no fit produces "
                    "(a damaged or edited file)"
                )
            if isinstance(v, float) and not np.isfinite(v):
                raise ModelFormatError(f"{path}: {type(e).__name__}.{k} = {v}, which no fit produces")
        _check_loaded_shapes(path, e)
        check = getattr(type(e), "_check_fitted_state", None)
        if check is not None:  # (how the class's fitted attributes must agree, beyond shapes: kinds, ranges)
            try:
                check(e)
            except (ValueError, TypeError) as exc:
                raise ModelFormatError(f"{path}: {type(e).__name__}: {exc} (a damaged or edited file)") from None


def _check_loaded_array_dtype(path, est, name, value):
    """A fitted array of numbers, never text, objects or complex numbers (no fit makes them; transform would
    compute with them or fail deep in numpy)."""
    arr = value.data if sp.issparse(value) else value
    if isinstance(arr, np.ndarray) and arr.dtype.kind not in "biuf":
        raise ModelFormatError(
            f"{path}: {type(est).__name__}.{name} is an array of {arr.dtype} ({arr.dtype.kind!r}), which no fit "
            "produces: fitted arrays hold real numbers (a damaged or edited file)"
        )


def _check_loaded_shapes(path, est):
    """The fitted arrays' shapes against each other (the class's ``_state_shapes``: attribute -> dimension
    names, ``"d"`` being ``n_features_in_``): a file whose arrays disagree is refused at load, not by numpy's
    "tuple index out of range" at the first ``transform``."""
    rules = getattr(type(est), "_state_shapes", None)
    if not rules:
        return
    bound: dict[str, tuple[int, str]] = {}
    if isinstance(getattr(est, "n_features_in_", None), (int, np.integer)):
        bound["d"] = (int(est.n_features_in_), "n_features_in_")
    for name, dims in rules.items():
        value = est.__dict__.get(name)
        if value is None:
            continue
        shape = getattr(value, "shape", None)
        if shape is None or len(shape) != len(dims):
            raise ModelFormatError(
                f"{path}: {type(est).__name__}.{name} has shape {shape}, expected {len(dims)} dimension(s) "
                f"{tuple(dims)} (a damaged or edited file)"
            )
        for size, dim in zip(shape, dims, strict=True):
            seen = bound.setdefault(dim, (int(size), name))
            if seen[0] != size:
                raise ModelFormatError(
                    f"{path}: {type(est).__name__}.{name} has shape {tuple(shape)}, but {seen[1]} gives its "
                    f"'{dim}' as {seen[0]}: the fitted arrays disagree (a damaged or edited file)"
                )


def _check_loaded_params(path, est):
    """The parameters as the estimator's own constraints accept them (``fit`` would check them; ``transform`` not)."""
    from sklearn.utils._param_validation import InvalidParameterError

    if getattr(type(est), "_parameter_constraints", None) is None:
        return
    try:
        est._validate_params()
    except InvalidParameterError as exc:
        raise ModelFormatError(f"{path}: {type(est).__name__}: {exc} (a damaged or edited file)") from None


def _check_loaded_state_type(path, est, name, value):
    """A public fitted attribute of the kind a fit makes: never text; counts whole and >= 0; a bandwidth > 0."""
    if name.startswith("_") or value is None:
        return
    where = f"{path}: {type(est).__name__}.{name} = {value!r}"
    if isinstance(value, str):
        raise ModelFormatError(f"{where} is text, which no fit produces (a damaged or edited file)")
    if name.startswith("n_") and not (
        isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0
    ):
        raise ModelFormatError(f"{where}: a count must be a whole number >= 0 (a damaged or edited file)")
    if name == "bandwidth_" and not (isinstance(value, (int, float, np.number)) and value > 0 and _finite(value)):
        raise ModelFormatError(f"{where}: a bandwidth must be a number > 0 (a damaged or edited file)")


def _finite(value):
    """A number that is finite as a float (an integer beyond float's range is not: 10**400)."""
    try:
        return bool(np.isfinite(float(value)))
    except OverflowError:
        return False


def _read_meta(zf, names, path):
    """The archive's metadata, checked: present, JSON, this format, a readable version, its own checksum."""
    if _META not in names:
        raise ModelFormatError(
            f"{path}: not a kernelsketch model file (no {_META}); plain .npz/pickle files are never loaded"
        )
    if zf.getinfo(_META).file_size > _MAX_META_BYTES:
        raise ModelFormatError(f"{path}: {_META} is implausibly large")
    try:
        meta = json.loads(zf.read(_META).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ModelFormatError(f"{path}: {_META} is not valid JSON ({type(exc).__name__}: {exc})") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        raise ModelFormatError(
            f"{path}: not a kernelsketch model file (format {meta.get('format')!r})"
            if isinstance(meta, dict)
            else f"{path}: malformed {_META}"
        )
    version = meta.get("format_version")
    if version not in READABLE_VERSIONS:
        raise ModelFormatError(
            f"{path}: model format version {version!r} is not supported by kernelsketch {__version__} "
            f"(reads versions {READABLE_VERSIONS}); the file was written by kernelsketch "
            f"{meta.get('library_version', '?')}"
        )
    # every checksum present is checked, whatever the version says (an edited version
    # number must not switch the check off); version 2 files must carry one
    if (version >= 2 or "meta_sha256" in meta) and meta.get("meta_sha256") != _meta_digest(meta):
        raise ModelFormatError(
            f"{path}: {_META} checksum mismatch: the parameters or metadata were modified after saving"
        )
    return meta


def _check_entries(zf, names, meta, path, file_size):
    """The array table against the archive: every array present, nothing extra, stored plainly, sizes plausible."""
    specs = meta.get("arrays")
    if not isinstance(specs, dict) or not all(isinstance(v, dict) for v in specs.values()):
        raise ModelFormatError(f"{path}: malformed {_META} (no array table)")
    expected = {f"{k}.npy" for k in specs}
    missing = sorted(expected - names)
    if missing:
        which = [specs[m[:-4]].get("name", m) for m in missing]
        raise ModelFormatError(f"{path}: missing array(s) {which} ({', '.join(missing)})")
    extra = sorted(names - expected - {_META})
    if extra:
        raise ModelFormatError(f"{path}: unexpected entries {extra}")
    for k, spec in specs.items():
        info = zf.getinfo(f"{k}.npy")
        # arrays are stored uncompressed: a deflated entry could expand far beyond the file (a zip bomb)
        if info.flag_bits & 0x1:
            raise ModelFormatError(f"{path}: entry {k}.npy is encrypted; model files are never encrypted")
        if info.compress_type != zipfile.ZIP_STORED:
            raise ModelFormatError(
                f"{path}: entry {k}.npy is compressed; model files store arrays "
                "uncompressed (refused: it could expand far beyond the file's size)"
            )
        if info.file_size > file_size:
            raise ModelFormatError(
                f"{path}: entry {k}.npy claims {info.file_size} bytes, more than the whole file ({file_size})"
            )
        shape = spec.get("shape", [0])
        if not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
            raise ModelFormatError(f"{path}: malformed shape {shape!r} for array {k}")
        nbytes = math.prod(shape) * np.dtype(spec.get("dtype", "u1")).itemsize  # Python ints: no overflow
        if info.file_size > nbytes + 65536 + 1024:
            raise ModelFormatError(f"{path}: entry {k}.npy is larger than its recorded shape allows")
    return specs


def _read_entries(zf, specs):
    """``(sha256 hex digest, {entry name: bytes})``: hashed as read (name, then bytes), in name order."""
    h = hashlib.sha256()
    entries = {}
    for name in sorted(f"{k}.npy" for k in specs):
        h.update(name.encode())
        h.update(b"\0")
        entries[name] = zf.read(name)
        h.update(entries[name])
    return h.hexdigest(), entries


def load(path: PathLike, *, xp: Any = None, device: Any = None) -> Any:
    """Load an estimator saved by :func:`save`.

    Parameters
    ----------
    path : str or Path
    xp : array namespace or its name, optional
        Where the loaded model's fitted state lives: ``"torch"``, ``"cupy"``, ... (default: NumPy,
        on the host, as saved). See :func:`kernelsketch.move_estimator_to`.
    device : the library's device, optional
        With ``xp``: ``"cuda"``, ``"cuda:1"``, ...; None is the library's default device.

    Raises
    ------
    FileNotFoundError
        No such file.
    ModelFormatError (a ValueError)
        Not a model file, another format version, an unknown class, a missing,
        extra, mis-shaped or object array, or arrays whose sha256 differs from
        the one recorded when saving (a modified file).
    """

    path = Path(os.fspath(path)).expanduser()
    if path.is_dir():
        raise IsADirectoryError(f"model file {str(path)!r} is a directory, not a model file (ks.save writes one file)")
    if not path.is_file():
        raise FileNotFoundError(f"model file {str(path)!r} does not exist")
    if not zipfile.is_zipfile(path):
        raise ModelFormatError(f"{path}: not a kernelsketch model file (not a ZIP/.npz archive)")
    file_size = path.stat().st_size
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            meta = _read_meta(zf, names, path)
            specs = _check_entries(zf, names, meta, path, file_size)
            digest, entries = _read_entries(zf, specs)
    except (
        zipfile.BadZipFile,
        zlib.error,
        EOFError,
        OSError,
        NotImplementedError,
        struct.error,
        RuntimeError,
    ) as exc:  # RuntimeError: zipfile's "encrypted, password required" (meta.json too)
        # a damaged archive fails in the zip layer (bad CRC, bad deflate stream, truncated member)
        raise ModelFormatError(f"{path}: corrupt model file ({type(exc).__name__}: {exc})") from exc
    except (TypeError, AttributeError, KeyError) as exc:
        raise ModelFormatError(f"{path}: malformed {_META} ({type(exc).__name__}: {exc})") from exc
    if digest != meta.get("arrays_sha256"):
        raise ModelFormatError(f"{path}: array checksum mismatch: the file was modified or corrupted after saving")
    arrays = {name[:-4]: _read_array(path, name, data, specs[name[:-4]]) for name, data in entries.items()}
    try:
        est = _Decoder(path, arrays).decode(meta.get("root"))
    except ModelFormatError:
        raise
    except (TypeError, AttributeError, KeyError, IndexError, ValueError, RecursionError) as exc:
        raise ModelFormatError(f"{path}: malformed {_META} ({type(exc).__name__}: {exc})") from exc
    root_key = _class_key(est)
    if (
        root_key is None
        or (root_key.startswith("sklearn.") and root_key != "sklearn.Pipeline")
        or root_key in _INTERNAL_CLASSES
    ):
        raise ModelFormatError(f"{path}: the root object is not a kernelsketch estimator or Pipeline")
    _check_loaded(path, est)
    if xp is not None or device is not None:
        if xp is None:
            raise ValueError("device= needs xp= as well: the array library whose device it is (e.g. xp='torch')")
        return move_estimator_to(est, xp, device)
    return est
