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


# ------------------------------------------------------------- the README's reproduction figures and the supplements


def _csv_rows(path):
    import csv

    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _readme_bullet(start):
    """The README's reproduction bullet that begins with ``start``, as one line."""
    text = (RESULTS.parents[1] / "README.md").read_text(encoding="utf-8")
    i = text.index(f"- **{start}")
    j = text.index("\n- ", i + 1)
    return " ".join(text[i:j].split())


def test_readme_table2_figures_are_the_committed_ones():
    """#53 item 16: the README's Avila Rand indices (3 decimals) and K-JL's mapping time are table2.csv's."""
    rows = {r["method"]: r for r in _csv_rows(RESULTS / "kjl-table2" / "table2.csv") if r["dataset"] == "Avila Bible"}
    bullet = _readme_bullet("Kernel JL, Table 2")

    def bare(x):
        return f"{float(x):.3f}".lstrip("0")

    want = ", ".join(f"{m} {bare(rows[m]['rand_mean'])}" for m in ("k-means", "K-k-means", "KPCA", "K-JL"))
    assert f"Rand index {want} " in bullet, bullet
    assert f"in {float(rows['K-JL']['time_mean_s']):.2g} s" in bullet, bullet


def test_readme_names_where_lemma_2_2_is_vacuous():
    """The sketch sizes at which Lemma 2.2's bound is at or above its trivial bound, from lemma_2_2.csv."""
    rows = _csv_rows(RESULTS / "skpca-lemmas" / "lemma_2_2.csv")
    vac = sorted({int(r["sketch_size"]) for r in rows if float(r["lemma_bound"]) >= float(r["trivial_bound"])})
    assert vac, "the committed run has no vacuous Lemma 2.2 point"
    assert f"vacuous at l = {', '.join(map(str, vac))} " in _readme_bullet("Streaming KPCA, Figures 1-4")


def _run_folders():
    """Every committed run folder under docs/results (a ``params.json`` beside its tables), supplements too."""
    return sorted(p.parent for p in RESULTS.rglob("params.json"))


@pytest.mark.parametrize("folder", _run_folders(), ids=lambda p: str(p.relative_to(RESULTS)))
def test_every_committed_run_has_the_tables_and_protocol_of_todays_code(folder):
    """A run written by older code (a supplement not rerun after a fix) lacks today's columns or protocol keys.

    Each folder is compared with the newest committed run of its reproduction: the same CSV headers and the same
    keys in ``params["params"]`` (what was run and how it was measured).
    """
    import json

    params = json.loads((folder / "params.json").read_text(encoding="utf-8"))
    main = RESULTS / params["reproduction"]
    ref = json.loads((main / "params.json").read_text(encoding="utf-8"))
    assert set(params["params"]) >= set(ref["params"]), (
        f"{folder.relative_to(RESULTS)} misses protocol keys {sorted(set(ref['params']) - set(params['params']))}"
    )
    for table in params["tables"]:
        if (main / f"{table}.csv").exists():
            head = (folder / f"{table}.csv").open(encoding="utf-8").readline()
            assert head == (main / f"{table}.csv").open(encoding="utf-8").readline(), (
                f"{folder.relative_to(RESULTS)}/{table}.csv has another header than {params['reproduction']}'s"
            )
