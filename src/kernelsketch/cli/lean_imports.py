"""The command line's process imports scikit-learn without the modules its version shims load and never use.

``import sklearn`` runs ``sklearn.utils.fixes``, which imports ``scipy.stats`` (0.7-0.8 s on the 2-core host) and
``pandas`` (0.4 s) at its top for functions that only ever run on pandas input or that the package never calls.  A
``kernelsketch cluster`` run used neither, and spent a quarter of its wall time importing them.

:func:`install` (the console script calls it first) puts a finder on :data:`sys.meta_path` that, while
``sklearn.utils.fixes`` executes and only then, lets its ``import scipy.stats`` and ``import pandas`` bind
placeholders: module objects that import the real module on their first attribute use and hand the attribute on.
Once ``fixes`` has run, the placeholders leave :data:`sys.modules`, so any later ``import scipy.stats`` or
``import pandas`` (scikit-learn's other modules, a pandas input, a plot) loads the real module as usual, and a
check such as narwhals' ``sys.modules.get("pandas")`` sees pandas as not imported, which it is not.  Nothing changes
for a Python process that imports kernelsketch: only the console script installs the finder.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

__all__ = ["DEFERRED", "SHIM", "install"]

#: modules that scikit-learn's version shims import at their top and a command need not load
DEFERRED = ("scipy.stats", "pandas")
#: the scikit-learn module whose imports of :data:`DEFERRED` get placeholders
SHIM = "sklearn.utils.fixes"


class _Deferred(types.ModuleType):
    """Stands for a module that was imported but not used: the first attribute asked for imports it."""

    def __getattr__(self, attr):
        name = self.__name__
        if sys.modules.get(name) is self:  # (asked for while the shim still runs)
            del sys.modules[name]
        return getattr(importlib.import_module(name), attr)


class _ShimLoader(importlib.abc.Loader):
    """The shim's own loader, run with the placeholders in :data:`sys.modules` (and only then)."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        placed = [name for name in DEFERRED if name not in sys.modules]
        for name in placed:
            sys.modules[name] = _Deferred(name)
        try:
            self.loader.exec_module(module)
        finally:
            for name in placed:
                if isinstance(sys.modules.get(name), _Deferred):
                    del sys.modules[name]

    def __getattr__(self, attr):  # (get_source, get_filename, ...: the real loader's)
        return getattr(self.loader, attr)


class _ShimFinder(importlib.abc.MetaPathFinder):
    """Finds :data:`SHIM` as the path finder does, with its loader wrapped; removes itself on that first use."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != SHIM:
            return None
        uninstall()
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _ShimLoader(spec.loader)
        return spec


def install():
    """Put the finder first on :data:`sys.meta_path`, unless scikit-learn's shims are imported already.

    Returns whether it was installed.
    """
    if SHIM in sys.modules or any(isinstance(f, _ShimFinder) for f in sys.meta_path):
        return False
    sys.meta_path.insert(0, _ShimFinder())
    return True


def uninstall():
    """Take the finder off :data:`sys.meta_path` (if there)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _ShimFinder)]
