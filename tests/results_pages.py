"""The results pages ``docs/results/*.md``: rendered from the committed CSVs, never typed.

A page in :data:`PAGES` is rendered whole from its template
(``docs/results/templates/PAGE.md.j2``, :mod:`kernelsketch.experiments.pages`) and its
reproduction's ``page_values``.  A page not yet templated marks generated sections with
``<!-- generated: NAME -->`` and ``<!-- end generated: NAME -->``; :data:`SECTIONS` says which
function renders each.  ``tests/test_results_pages.py`` fails when a committed page or section
and its rendering differ; rewrite them with ``python -m tests.results_pages``.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"


def _skpca_lemmas():
    from kernelsketch.experiments.skpca_lemmas import render_summary

    return render_summary(RESULTS / "skpca-lemmas", RESULTS / "skpca-figures")


def _nystrom_theorems_2_5():
    from kernelsketch.experiments.nystrom_eigengap import render_theorems_2_5

    return render_theorems_2_5(RESULTS / "nystrom-eigengap")


def _rf_kpca_values(csv, params):
    from kernelsketch.experiments.rf_kpca_tradeoff import page_values

    return page_values(csv, params)


def _nystrom_values(csv, params):
    from kernelsketch.experiments.nystrom_eigengap import page_values

    return page_values(csv, params)


def _kernel_jl_values(csv, params):
    from kernelsketch.experiments.kernel_jl import page_values

    return page_values(csv, params)


#: page -> (the reproduction's page_values, the sections its template includes); the template is templates/PAGE.j2
PAGES = {
    "rf_kpca_tradeoff.md": (_rf_kpca_values, {}),
    "kernel_jl.md": (_kernel_jl_values, {}),
    "nystrom_eigengap.md": (_nystrom_values, {"nystrom-theorems-2-5": _nystrom_theorems_2_5}),
}

TEMPLATES = RESULTS / "templates"


def render(page):
    """The page as its template and the committed CSVs give it."""
    from kernelsketch.experiments.pages import render_page

    values, sections = PAGES[page]
    return render_page(TEMPLATES / f"{page}.j2", RESULTS, values=values, sections=sections)


#: (page, section name) -> renderer
SECTIONS = {
    ("streaming_kpca.md", "skpca-lemmas"): _skpca_lemmas,
}


def _pattern(name):
    return re.compile(
        rf"(<!-- generated: {re.escape(name)} -->\n)(.*?)(<!-- end generated: {re.escape(name)} -->)", flags=re.S
    )


def committed(page, name):
    """The section as committed in the page (without its markers)."""
    m = _pattern(name).search((RESULTS / page).read_text(encoding="utf-8"))
    if m is None:
        raise ValueError(f"docs/results/{page} has no generated section {name!r}")
    return m.group(2)


def rewrite():
    for page in PAGES:
        (RESULTS / page).write_text(render(page), encoding="utf-8")
        print(f"rewrote docs/results/{page} from templates/{page}.j2")
    for (page, name), render_section in SECTIONS.items():
        path = RESULTS / page
        text = path.read_text(encoding="utf-8")
        committed(page, name)  # the markers must exist
        body = render_section()
        text = _pattern(name).sub(lambda m, body=body: m.group(1) + body + m.group(3), text)
        path.write_text(text, encoding="utf-8")
        print(f"rewrote docs/results/{page} section {name}")


if __name__ == "__main__":
    rewrite()
