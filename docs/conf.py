"""Sphinx configuration: the API reference built from the docstrings, with the Markdown guides beside it.

Build with ``./dev docs`` (HTML in ``docs/_build/html``); ``./dev test`` builds it with
warnings as errors, so a broken docstring or link fails CI.
"""

from __future__ import annotations

import kernelsketch

project = "kernelsketch"
author = "the kernelsketch developers"
copyright = "2026, the kernelsketch developers"
release = kernelsketch.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "**/.ipynb_checkpoints"]
templates_path = ["_templates"]

# -- API pages: one per public class and function (autosummary writes them) -------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # the numpydoc "Parameters" sections say the types
autodoc_default_options = {"inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- Markdown (the user guide, the reproductions) ----------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 4
# The guides link to files that are not pages (CSV tables, the README, source files): those
# links are for readers of the repository on GitHub and stay as they are.
suppress_warnings = ["myst.xref_missing", "myst.header"]

intersphinx_mapping = {}  # no network in CI: references to numpy/scikit-learn stay plain text

html_theme = "pydata_sphinx_theme"
html_title = f"kernelsketch {release}"
html_theme_options = {"navigation_with_keys": False}
