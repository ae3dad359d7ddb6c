"""The results pages ``docs/results/*.md``: rendered from the committed CSVs, never typed.

Each page in :data:`PAGES` is rendered whole from its template
(``docs/results/templates/PAGE.j2``, :mod:`kernelsketch.experiments.pages`), its reproduction's
``page_values`` (what the page states, computed from the CSVs) and the sections a reproduction
renders itself.  ``tests/test_results_pages.py`` fails when a committed page and its rendering
differ; rewrite the pages with ``python -m tests.results_pages``.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
TEMPLATES = RESULTS / "templates"


def _skpca_lemmas():
    from kernelsketch.experiments.skpca_lemmas import render_summary

    return render_summary(RESULTS / "skpca-lemmas", RESULTS / "skpca-figures")


def _nystrom_theorems_2_5():
    from kernelsketch.experiments.nystrom_eigengap import render_theorems_2_5

    return render_theorems_2_5(RESULTS / "nystrom-eigengap")


#: page -> (the experiment module whose page_values it states, the sections its template includes)
PAGES = {
    "kernel_jl.md": ("kernel_jl", {}),
    "streaming_kpca.md": ("streaming_kpca", {"skpca-lemmas": _skpca_lemmas}),
    "rf_kpca_tradeoff.md": ("rf_kpca_tradeoff", {}),
    "nystrom_eigengap.md": ("nystrom_eigengap", {"nystrom-theorems-2-5": _nystrom_theorems_2_5}),
}


def render(page):
    """The page as its template and the committed CSVs give it."""
    from kernelsketch.experiments.pages import render_page

    module, sections = PAGES[page]
    values = import_module(f"kernelsketch.experiments.{module}").page_values
    return render_page(TEMPLATES / f"{page}.j2", RESULTS, values=values, sections=sections)


def rewrite():
    for page in PAGES:
        (RESULTS / page).write_text(render(page), encoding="utf-8")
        print(f"rewrote docs/results/{page} from templates/{page}.j2")


if __name__ == "__main__":
    rewrite()
