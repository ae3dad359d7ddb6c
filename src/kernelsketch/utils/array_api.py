"""Which array library an input belongs to: scikit-learn's ``array_api_dispatch`` convention.

Foundation layer: the estimators ask :func:`array_namespace` whether an input takes the
device path (:mod:`kernelsketch.kernels.array_api`) and :func:`to_numpy` brings any
other input to the host for the NumPy code.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "array_namespace",
    "dispatch_enabled",
    "fitted_namespace",
    "host_array",
    "host_rows",
    "is_device_array",
    "like",
    "like_state",
    "move_array",
    "move_estimator_to",
    "move_state_to",
    "namespace_of",
    "resolve_namespace",
    "state_namespace",
    "to_numpy",
]


def dispatch_enabled() -> bool:
    """Whether scikit-learn's ``array_api_dispatch`` is on."""
    from sklearn._config import get_config as sklearn_config

    return bool(sklearn_config().get("array_api_dispatch", False))


def array_namespace(*arrays) -> tuple[Any, Any] | None:
    """``(xp, device)`` of non-NumPy inputs under scikit-learn's ``array_api_dispatch``; None otherwise.

    None means: take the NumPy path (NumPy arrays, sparse matrices, lists, or dispatch off,
    where scikit-learn's own validation converts other arrays to NumPy).
    """
    present = [a for a in arrays if a is not None]
    if not present or any(isinstance(a, np.ndarray | list | tuple) for a in present):
        return None
    if not dispatch_enabled():
        return None
    from sklearn.utils._array_api import _is_numpy_namespace, get_namespace_and_device

    try:
        xp, _, device = get_namespace_and_device(*present)
    except (TypeError, ValueError):
        return None
    return None if _is_numpy_namespace(xp) else (xp, device)


def to_numpy(A, xp) -> np.ndarray:
    """``A`` (of namespace ``xp``, on any device) as a NumPy array on the host."""
    from sklearn.utils._array_api import _convert_to_numpy

    return np.asarray(_convert_to_numpy(A, xp))


def host_array(a):
    """``a`` as a NumPy array: None, NumPy arrays and sparse matrices pass through; any other
    array-API array (PyTorch, CuPy, ...) is copied to the host, whatever the dispatch setting."""
    if not is_device_array(a):
        return a
    return to_numpy(a, _compat().array_namespace(a))


def _compat():
    """array-api-compat: scikit-learn's vendored copy (1.6 and later), else the package, else None."""
    try:
        from sklearn.externals import array_api_compat
    except ImportError:  # pragma: no cover - scikit-learn < 1.6
        try:
            import array_api_compat
        except ImportError:
            return None
    return array_api_compat


def is_device_array(a) -> bool:
    """Whether ``a`` is an array of another library than NumPy (PyTorch, CuPy, array-api-strict, ...)."""
    if a is None or isinstance(a, np.ndarray | np.generic | list | tuple | dict | str | bytes | int | float):
        return False
    if (compat := _compat()) is None:  # pragma: no cover - no array-api-compat at all
        return hasattr(a, "__array_namespace__")
    return bool(compat.is_array_api_obj(a)) and not compat.is_numpy_array(a)


def namespace_of(a) -> tuple[Any, Any] | None:
    """``(xp, device)`` of one non-NumPy array (whatever the dispatch setting); None for NumPy and non-arrays."""
    if not is_device_array(a):
        return None
    compat = _compat()
    return compat.array_namespace(a), compat.device(a)


def _is_estimator(value) -> bool:
    return hasattr(type(value), "_persistent_state") and hasattr(value, "get_params")


def _state_values(estimator):
    """The declared fitted state's values, nested estimators' state included (depth first)."""
    for name in getattr(type(estimator), "_persistent_state", ()):
        value = vars(estimator).get(name)
        if _is_estimator(value):
            yield from _state_values(value)
        elif isinstance(value, dict):
            yield from value.values()
        elif isinstance(value, tuple):
            yield from value
        else:
            yield value


def state_namespace(estimator) -> tuple[Any, Any] | None:
    """``(xp, device)`` where ``estimator``'s fitted state lives; None for NumPy (host) state."""
    for value in _state_values(estimator):
        if (ns := namespace_of(value)) is not None:
            return ns
    return None


def _describe(ns) -> str:
    if ns is None:
        return "NumPy arrays"
    name = ns[0].__name__.removeprefix("sklearn.externals.").removeprefix("array_api_compat.")
    return f"{name} arrays on device {ns[1]!r}"


def like_state(estimator, A):
    """Host array ``A`` where ``estimator``'s fitted state lives (its device, for a device-fitted model)."""
    ns = state_namespace(estimator)
    return A if ns is None else move_array(A, *ns)


def like(A, ref):
    """``A`` (NumPy or any device; None passes) in the namespace and on the device of array ``ref``."""
    ns = namespace_of(ref)
    return host_array(A) if ns is None else move_array(A, *ns)


def _same_place(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a[0].__name__ == b[0].__name__ and str(a[1]) == str(b[1])


def fitted_namespace(estimator, X, method: str) -> tuple[Any, Any] | None:
    """``(xp, device)`` when ``X`` takes the device path of ``estimator.method``; None for the NumPy path.

    scikit-learn's array-API rule: under ``array_api_dispatch``, the input of ``transform``
    (``partial_fit``, ...) must be of the namespace and on the device of the fitted state;
    anything else is a ``ValueError`` that says how to move the model
    (:func:`kernelsketch.move_estimator_to`). With dispatch off, every input takes the
    NumPy path and a device-fitted state is read through :func:`host_array`.
    """
    if not dispatch_enabled():
        return None
    ns = array_namespace(X)
    state = state_namespace(estimator)
    if _same_place(ns, state):
        return ns
    raise ValueError(
        f"Inputs passed to {type(estimator).__name__}.{method}() must use the same namespace and the same "
        f"device as those passed to fit(): the model holds {_describe(state)}, the input is "
        f"{_describe(ns) if ns is not None else type(X).__name__}. Move the model with "
        "kernelsketch.move_estimator_to(model, xp, device), or load it with ks.load(path, xp=..., device=...)"
    )


def resolve_namespace(xp) -> Any:
    """An array namespace from a module or its name (``"torch"``, ``"cupy"``, ``"numpy"``, ...);
    array-API-compatible wrappers (``array_api_compat``) where the library needs one."""
    import importlib

    array_api_compat = _compat()
    if isinstance(xp, str):
        try:
            module = importlib.import_module(xp)
        except ImportError as exc:
            raise ValueError(f"xp={xp!r}: no array library of that name is installed") from exc
    else:
        module = xp
    if module is None or getattr(module, "__name__", "") in ("numpy", "array_api_compat.numpy"):
        return np
    if not hasattr(module, "asarray"):
        raise TypeError(f"xp must be an array namespace or its name, got {type(xp).__name__}")
    try:  # torch, cupy, ...: the array-API wrapper of the library (what scikit-learn dispatches to)
        return array_api_compat.array_namespace(module.asarray([0.0]))
    except TypeError:
        return module


def move_array(value, xp, device):
    """``value`` in namespace ``xp`` on ``device`` when it is a numeric array (NumPy or any device);
    anything else (None, scalars, objects) as it is. ``xp=numpy`` brings arrays to the host.

    Between devices it is scikit-learn's ``move_to`` (DLPack, no host round trip where the
    libraries allow it), else a copy through the host.
    """
    if xp is np:
        return host_array(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return xp.asarray(np.ascontiguousarray(value), device=device)
    if namespace_of(value) is None:
        return value
    try:
        from sklearn.utils._array_api import move_to
    except ImportError:  # pragma: no cover - scikit-learn without move_to
        return xp.asarray(host_array(value), device=device)
    return move_to(value, xp=xp, device=device)


def move_state_to(estimator, xp, device=None) -> None:
    """Move ``estimator``'s declared fitted state (``_persistent_state``) to ``device`` of ``xp``, in place.

    Numeric NumPy arrays, arrays of another device, and those inside nested estimators,
    dicts and tuples are moved; everything else is kept. ``xp=numpy`` (or None) brings the
    state to the host. After a fit on a device array the model lives where its data does
    (scikit-learn's array-API convention); host paths read it through :func:`host_array`.
    """
    xp = np if xp is None else xp
    for name in getattr(type(estimator), "_persistent_state", ()):
        if name not in vars(estimator):
            continue
        value = vars(estimator)[name]
        if _is_estimator(value):
            move_state_to(value, xp, device)
        elif isinstance(value, dict):
            value.update({k: move_array(v, xp, device) for k, v in value.items()})
        elif isinstance(value, tuple):
            setattr(estimator, name, tuple(move_array(v, xp, device) for v in value))
        else:
            setattr(estimator, name, move_array(value, xp, device))


def move_estimator_to(estimator, xp, device=None):
    """A copy of a fitted ``estimator`` (or Pipeline) whose fitted state lives on ``device`` of ``xp``.

    Parameters
    ----------
    estimator : a fitted kernelsketch estimator, or a scikit-learn Pipeline of them
    xp : array namespace or its name
        ``"torch"``, ``"cupy"``, ``"array_api_strict"``, ... or the module; ``"numpy"`` (or None)
        brings the state to the host.
    device : the library's device, optional
        ``"cuda"``, ``torch.device("cuda:1")``, ...; None is the library's default device.

    Returns
    -------
    A deep copy; ``estimator`` is unchanged. Under ``array_api_dispatch`` a model accepts
    input of the namespace and device its state lives on (scikit-learn's rule), so this is
    how a model fitted on the CPU serves GPU input, or the reverse.
    """
    import copy

    xp = resolve_namespace(xp)
    if device is not None and xp is not np and isinstance(device, str):
        device = _library_device(xp, device)
    moved = copy.deepcopy(estimator)
    steps = getattr(moved, "steps", None)
    for est in [s for _, s in steps] if steps is not None else [moved]:
        if est is None or isinstance(est, str):
            continue
        if hasattr(type(est), "_persistent_state"):
            move_state_to(est, xp, device)
            continue
        # another library's step (a scikit-learn scaler, ...): its numeric array attributes, as
        # scikit-learn's own array-API estimators keep them
        if not hasattr(est, "get_params"):
            raise TypeError(f"cannot move {type(est).__name__}: not an estimator")
        for name, value in list(vars(est).items()):
            if (isinstance(value, np.ndarray) and value.dtype.kind in "biuf") or is_device_array(value):
                setattr(est, name, move_array(value, xp, device))
    return moved


def _library_device(xp, device: str):
    """A device named by a string, as the library ``xp`` wants it (``array_api_strict.Device(name)``)."""
    if "array_api_strict" in getattr(xp, "__name__", ""):
        return xp.Device(device)
    return device


def host_rows(X, idx):
    """Rows ``idx`` of ``X`` on the host: NumPy / sparse indexing, or a gather on X's device then a copy."""
    if (ns := namespace_of(X)) is None:
        return X[idx]
    xp, device = ns
    return to_numpy(xp.take(X, xp.asarray(np.asarray(idx, dtype=np.int64), device=device), axis=0), xp)
