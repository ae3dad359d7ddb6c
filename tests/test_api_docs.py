"""The API reference (docs/api/index.rst) lists every public class and function, once."""

from __future__ import annotations

import importlib
import inspect
import pathlib
import re

import pytest

import kernelsketch

INDEX = pathlib.Path(__file__).resolve().parents[1] / "docs" / "api" / "index.rst"
PACKAGES = [
    "kernelsketch",
    "kernelsketch.kernels",
    "kernelsketch.metrics",
    "kernelsketch.io",
    "kernelsketch.datasets",
    "kernelsketch.distributed",
    "kernelsketch.maps",
    "kernelsketch.decomposition",
    "kernelsketch.cluster",
    "kernelsketch.sketches",
    "kernelsketch.utils",
    "kernelsketch.experiments",
]


def _documented():
    """``{qualified name}`` of every autosummary entry, with its section's currentmodule."""
    module, names = "kernelsketch", set()
    in_summary = False
    for line in INDEX.read_text().splitlines():
        if m := re.match(r"\.\. currentmodule:: (\S+)", line):
            module = m[1]
        elif line.startswith(".. autosummary::"):
            in_summary = True
        elif in_summary and re.match(r"   \w", line):
            names.add(f"{module}.{line.strip()}")
        elif in_summary and line and not line.startswith(" "):
            in_summary = False
    return names


DOCUMENTED = _documented()


def _public(package):
    mod = importlib.import_module(package)
    for name in mod.__all__:
        obj = getattr(mod, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            yield name, obj


def _same(obj, qualified):
    module, _, name = qualified.rpartition(".")
    return getattr(importlib.import_module(module), name, None) is obj


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_class_and_function_has_a_page(package):
    missing = [f"{package}.{name}" for name, obj in _public(package) if not any(_same(obj, q) for q in DOCUMENTED)]
    assert not missing, f"add these to docs/api/index.rst: {missing}"


def test_every_entry_resolves():
    for qualified in sorted(DOCUMENTED):
        module, _, name = qualified.rpartition(".")
        assert hasattr(importlib.import_module(module), name), qualified


def test_the_index_is_parsed():
    # the parser above must see the entries, or the first test would pass vacuously
    assert "kernelsketch.Nystroem" in DOCUMENTED and "kernelsketch.metrics.rand_index" in DOCUMENTED
    assert len(DOCUMENTED) > 60
    assert kernelsketch.__version__
