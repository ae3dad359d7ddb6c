"""Reproductions of the papers' experiments, one module per paper.

Every reproduction is a function ``run(output_dir, *, quick=False, seed=0,
progress=None, **params) -> dict`` that writes a CSV + Markdown table and PNG
plots into ``output_dir``, prints the seed and every parameter, and returns
a summary dict (``{"tables": {...}, "figures": [...], "params": {...}}``).
``REPRODUCTIONS`` maps the CLI name (``kernelsketch reproduce NAME``) to
``"module:function"``; modules are imported only when run.
"""

import importlib

REPRODUCTIONS = {
    "kjl-figure1": "kernel_jl:figure1",
    "kjl-table2": "kernel_jl:table2",
    "kjl-figure2": "kernel_jl:figure2",
    "kjl-theorem1": "kernel_jl:theorem1",
    "skpca-figures": "streaming_kpca:figures",
    "skpca-lemmas": "skpca_lemmas:lemmas",
    "nystrom-eigengap": "nystrom_eigengap:figure1",
    "rf-kpca-tradeoff": "rf_kpca_tradeoff:tradeoff",
}


def get_reproduction(name):
    """Return the function that runs reproduction ``name``."""
    if name not in REPRODUCTIONS:
        raise ValueError(f"unknown reproduction {name!r}; choose one of {sorted(REPRODUCTIONS)}")
    module, func = REPRODUCTIONS[name].split(":")
    return getattr(importlib.import_module(f".{module}", __name__), func)


__all__ = ["REPRODUCTIONS", "get_reproduction"]
