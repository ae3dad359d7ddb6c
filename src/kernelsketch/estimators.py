"""The public estimator classes, by name: the one list that persistence (its allowlist) and the CLI read.

A new estimator is exported from its subpackage's ``__all__``; nothing else
needs to learn its name.
"""

from __future__ import annotations

from . import cluster, decomposition, maps, preprocessing, sketches

#: the subpackages whose exported classes are estimators
PACKAGES = (maps, sketches, decomposition, cluster, preprocessing)


def estimator_locations() -> dict[str, tuple[str, str]]:
    """Class name -> ``(module, attribute)`` of every public estimator, without importing them.

    Examples
    --------
    >>> estimator_locations()["Nystroem"]
    ('kernelsketch.maps', 'Nystroem')
    """
    return {name: (pkg.__name__, name) for pkg in PACKAGES for name in pkg.__all__ if name[:1].isupper()}


def estimator_class(name: str) -> type:
    """The public estimator class called ``name``.

    Examples
    --------
    >>> estimator_class("KernelJL").__module__
    'kernelsketch.maps.kernel_jl'
    """
    locations = estimator_locations()
    if name not in locations:
        raise ValueError(f"unknown estimator {name!r}; choose one of {sorted(locations)}")
    module, attr = locations[name]
    return getattr(next(p for p in PACKAGES if p.__name__ == module), attr)
