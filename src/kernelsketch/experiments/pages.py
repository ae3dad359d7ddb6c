"""Results pages rendered from a reproduction's committed CSVs and a template: no measured number typed by hand.

Each page of ``docs/results/`` has a template, ``docs/results/templates/PAGE.md.j2``
(Jinja2).  Its prose is written once; every number that a run measured is an expression
over the run's files, so a rerun that changes a CSV changes the page, and a page that
disagrees with its CSVs fails ``tests/test_results_pages.py``.  Rewrite the pages with
``python -m tests.results_pages``.

What a template sees:

* ``csv("kjl-table2/table2")`` -- a :class:`Table` of the rows of
  ``docs/results/kjl-table2/table2.csv`` (numbers parsed); ``.one(method="K-JL", ...)``
  the row that matches, ``.where(...)`` the rows that do, ``.col("rand_mean")`` a column;
* ``params("kjl-table2")`` -- the run's ``params.json``;
* ``section("skpca-lemmas")`` -- a section rendered by a reproduction's own function;
* filters: ``x | fmt(".3f")`` (Python's format), ``x | bare(".3f")`` (no leading zero:
  ``.698``; a minus sign as in print, ``−.001``), ``x | signed(".3f")``, ``x | pct``,
  ``x | thousands``, ``x | sci(2)`` (``2.65e-4``), ``x | sig(2)`` (``160``, ``4.8``),
  ``values | span(".2f")`` (``lo-hi``), ``n | words`` (``one`` .. ``ten``, then digits),
  ``ints | runs(6)`` (``7, 9-12, 16, ...``), ``x | isnan``;
* ``values`` -- what the reproduction's ``page_values(csv, params)`` computes from the CSVs (derived
  statistics: ratios, first crossings, ranges);
* ``paper`` -- the numbers the papers print (the experiments' ``PAPER_*`` constants).

:func:`typed_numbers` lists decimal numbers in a template's prose outside expressions
and code spans: the test requires none (a measured number is never typed).
"""

from __future__ import annotations

import csv as _csv
import json
import math
import re
from pathlib import Path
from typing import Any

__all__ = ["Table", "render_page", "typed_numbers"]


def _number(v: str) -> Any:
    """A CSV cell as int, float, bool or the string it is."""
    if v in ("True", "False"):
        return v == "True"
    try:
        return int(v)
    except ValueError:
        pass
    try:
        return float(v)
    except ValueError:
        return v


class Table(list):
    """The rows of one CSV (dicts, numbers parsed), with lookups for templates."""

    def __init__(self, rows, name=""):
        super().__init__(rows)
        self.name = name

    def __getitem__(self, i):
        got = super().__getitem__(i)
        return Table(got, self.name) if isinstance(i, slice) else got

    def where(self, **match):
        """The rows whose columns equal ``match`` (a list, possibly empty)."""
        return Table([r for r in self if all(r.get(k) == v for k, v in match.items())], self.name)

    def one(self, **match):
        """The single row that matches; a KeyError naming the CSV otherwise (a page never guesses)."""
        rows = self.where(**match)
        if len(rows) != 1:
            raise KeyError(f"{self.name}: {len(rows)} rows match {match}, expected one")
        return rows[0]

    def col(self, name):
        """One column, in row order."""
        return [r[name] for r in self]

    def distinct(self, name):
        """A column's distinct values, in order of first appearance."""
        return list(dict.fromkeys(r[name] for r in self))


def _fmt(x, spec=""):
    return format(x, spec)


def _bare(x, spec=".3f"):
    """``0.698`` as ``.698`` and ``-0.001`` as ``−.001``: the papers' table style."""
    s = format(x, spec)
    neg = s.startswith("-")
    s = s.lstrip("-+")
    if s.startswith("0."):
        s = s[1:]
    return ("−" if neg else "") + s


def _signed(x, spec=".3f"):
    """``+.015`` / ``−.001`` (zero as ``+.000`` or ``−.000`` by the sign of ``x``)."""
    s = _bare(x, spec)
    return s if s.startswith("−") else "+" + s


def _sci(x, digits=2):
    """``2.65e-4``: scientific notation without the exponent's padding zero."""
    mant, exp = format(x, f".{digits}e").split("e")
    return f"{mant}e{int(exp)}"


def _span(values, spec=".2f", sep="-", bare=False):
    """``lo-hi`` of some values (one value when they agree to the format); ``bare``: as :func:`_bare` (``.03``)."""
    values = list(values)
    fmt = _bare if bare else format
    lo, hi = fmt(min(values), spec), fmt(max(values), spec)
    return lo if lo == hi else f"{lo}{sep}{hi}"


def _sig(x, digits=2):
    """``x`` to ``digits`` significant digits, never in scientific notation: 160, 19, 4.8, 1.52."""
    return format(float(format(x, f".{digits}g")), "g") if abs(x) < 1e6 else format(x, ".0f")


def _words(n):
    """A small count as a word (``one`` .. ``ten``), larger ones as digits."""
    names = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    return names[n] if 0 <= n < len(names) else str(n)


def _runs(values, limit=None):
    """Sorted integers as runs: ``7, 9-12, 16`` (the first ``limit`` runs, then ``...``)."""
    runs, out = [], sorted(values)
    for v in out:
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    text = [f"{a}" if a == b else f"{a}-{b}" for a, b in runs]
    if limit is not None and len(text) > limit:
        text = [*text[:limit], "..."]
    return ", ".join(text)


def _thousands(x):
    return f"{x:,}"


def _pct(x, spec=".0f"):
    return format(100 * x, spec) + "%"


def render_page(template: str | Path, results_dir: str | Path, *, values=None, sections=None, paper=None) -> str:
    """The page that ``template`` gives over the runs in ``results_dir``.

    Parameters
    ----------
    template : path of a ``.md.j2`` file
    results_dir : the folder of the runs (``docs/results``)
    values : callable ``values(csv, params) -> dict``, exposed as ``values`` (a reproduction's ``page_values``)
    sections : dict of name -> callable returning Markdown, for ``section(name)``
    paper : mapping of the papers' printed numbers, exposed as ``paper``
    """
    try:
        import jinja2
    except ImportError as exc:  # pragma: no cover - the test extra installs it
        raise ImportError("rendering the results pages needs jinja2 (pip install 'kernelsketch[test]')") from exc
    results_dir = Path(results_dir)
    cache: dict[str, Table] = {}

    def csv(name):
        if name not in cache:
            path = results_dir / f"{name}.csv"
            with open(path, newline="", encoding="utf-8") as fh:
                rows = [{k: _number(v) for k, v in r.items()} for r in _csv.DictReader(fh)]
            cache[name] = Table(rows, name)
        return cache[name]

    def params(name):
        return json.loads((results_dir / name / "params.json").read_text(encoding="utf-8"))

    def section(name):
        return (sections or {})[name]()

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(template).parent)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters.update(fmt=_fmt, bare=_bare, signed=_signed, thousands=_thousands, pct=_pct, sci=_sci)
    env.filters.update(span=_span, sig=_sig, words=_words, runs=_runs, isnan=lambda x: x != x)
    env.filters["log10"] = lambda x: math.log10(x)
    env.globals.update(csv=csv, params=params, section=section, paper=paper or {}, max=max, min=min, len=len)
    env.globals.update(sum=sum, abs=abs, round=round, sorted=sorted, zip=zip)
    env.globals["values"] = values(csv, params) if values is not None else {}
    return env.get_template(Path(template).name).render()


_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", flags=re.S)
_CODE = re.compile(r"```.*?```|`[^`\n]*`", flags=re.S)
_DECIMAL = re.compile(r"(?<![\w.])[-−+]?\d*\.\d+(?![\w.])")
#: numbered parts of a paper ("Lemma 2.2", "Lemmas 2.1-2.2", "Section 1.2"): labels, not measurements
_CITED = re.compile(
    r"\b(?:Lemma|Theorem|Section|Corollary|Corollarie|Remark|Figure|Table|Algorithm|Proposition|Eq)s?\.?"
    r"\s+\d+(?:\.\d+)*(?:\s*(?:[-–,]|and)\s*\d+(?:\.\d+)*)*"
)


def typed_numbers(template_text: str) -> list[str]:
    """Decimal numbers in a template's prose: outside ``{{ }}`` / ``{% %}`` / ``{# #}`` and code spans.

    A results page may state parameters (integers, code such as ``h = 0.5``) and cite the
    papers' numbered parts ("Lemma 2.2") in its prose, but every decimal number -- an error, a
    ratio, a Rand index -- comes from the CSVs.
    """
    text = _CITED.sub(" ", _CODE.sub(" ", _TAG.sub(" ", template_text)))
    return _DECIMAL.findall(text)
