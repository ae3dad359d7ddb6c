"""Lazy (PEP 562) namespaces: ``import kernelsketch`` stays cheap and optional extras load on use.

Every package namespace (the root and the subpackages) maps its public names
to the module that defines them and imports that module on first access.
Concurrent first accesses from several threads import one at a time: a thread
must never see a module another thread is still initialising (an
``ImportError`` then).  This module is in the foundation layer: it imports
nothing from the package.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

#: one import at a time across threads
IMPORT_LOCK = threading.RLock()


def attach(
    package: str, names: Mapping[str, str], modules: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, loading ``names[name]`` (a submodule) on first access.

    ``modules`` are submodules that are themselves attributes of the package.

    Examples
    --------
    >>> getattr_, dir_ = attach("kernelsketch.maps", {"Nystroem": "nystroem"})
    >>> getattr_("Nystroem").__name__
    'Nystroem'
    >>> "Nystroem" in dir_()
    True
    """
    names = dict(names)
    modules = tuple(modules)

    def __getattr__(name: str) -> Any:
        if name in modules:
            with IMPORT_LOCK:
                return importlib.import_module(f"{package}.{name}")
        if name in names:
            with IMPORT_LOCK:
                return getattr(importlib.import_module(f"{package}.{names[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        module = importlib.import_module(package)
        return sorted(set(vars(module)) | set(names) | set(modules))

    return __getattr__, __dir__


# -- optional array backends ---------------------------------------------------------
#: array library -> module implementing ``transform``, ``predict`` and ``Engine`` for it
_BACKENDS: dict[str, str] = {}


def register_backend(library: str, module: str) -> None:
    """Name the module that handles arrays of ``library`` (imported only when such an array arrives).

    The lower layers (estimators' ``transform``, the out-of-core driver) ask
    :func:`backend` for it and so never import the integration themselves; the
    package root registers ``"dask"``.
    """
    _BACKENDS[library] = module


def backend(library: str):
    """The module registered for ``library``, imported now.

    Examples
    --------
    >>> backend("dask").__name__
    'kernelsketch.distributed.backend'
    """
    if library not in _BACKENDS:
        raise ImportError(f"no kernelsketch integration is registered for {library} arrays")
    with IMPORT_LOCK:
        return importlib.import_module(_BACKENDS[library])
