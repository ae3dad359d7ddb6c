"""Every results page is what its template makes of the committed CSVs."""

import pytest

from .results_pages import PAGES, RESULTS, TEMPLATES, render


def test_every_results_page_has_a_template():
    pages = {p.name for p in RESULTS.glob("*.md")} - {"scaling.md"}  # (written whole by benchmarks/scaling.py)
    assert pages == set(PAGES)


@pytest.mark.parametrize("page", sorted(PAGES))
def test_page_is_its_template_over_the_committed_csvs(page):
    """A page that disagrees with its CSVs (a rerun not rendered, a hand edit) fails here."""
    assert (RESULTS / page).read_text(encoding="utf-8") == render(page), (
        f"docs/results/{page} is stale or edited by hand: edit templates/{page}.j2, run python -m tests.results_pages"
    )


@pytest.mark.parametrize("page", sorted(PAGES))
def test_no_measured_number_is_typed_in_a_template(page):
    """Every decimal number in a template's prose is an expression over the CSVs (or inside code)."""
    from kernelsketch.experiments.pages import typed_numbers

    assert typed_numbers((TEMPLATES / f"{page}.j2").read_text(encoding="utf-8")) == []


def test_the_page_renderer_fails_on_a_missing_row_and_finds_typed_numbers(tmp_path):
    from kernelsketch.experiments.pages import render_page, typed_numbers

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "t.csv").write_text("method,error\nA,0.25\nB,0.5\n", encoding="utf-8")
    (tmp_path / "p.md.j2").write_text(
        '{% set t = csv("run/t") %}A {{ t.one(method="A").error|bare(".2f") }}, '
        'B {{ t.one(method="B").error|sci(1) }}\n',
        encoding="utf-8",
    )
    assert render_page(tmp_path / "p.md.j2", tmp_path) == "A .25, B 5.0e-1\n"
    (tmp_path / "q.md.j2").write_text('{{ csv("run/t").one(method="C").error }}', encoding="utf-8")
    with pytest.raises(KeyError, match="0 rows match"):
        render_page(tmp_path / "q.md.j2", tmp_path)
    assert typed_numbers("error 0.25 and {{ x|fmt('.3f') }} and `h = 0.5` and 4.3.1 and 30 runs") == ["0.25"]
    assert typed_numbers("Lemmas 2.1-2.2 and Theorem 6 and Section 1.2, but 0.18 of it") == ["0.18"]
