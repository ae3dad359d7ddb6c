"""What every reproduction writes: tables (CSV + Markdown), PNG figures, parameters.

A :class:`Report` prints the seed and every parameter when it starts, writes
each table as ``<name>.csv`` and ``<name>.md`` and each figure as
``<name>.png`` into the output folder (atomically: temp file + rename), and
``params.json`` at the end.
"""

from __future__ import annotations

import csv
import io
import json
import platform
import time
from pathlib import Path

import numpy as np

from .._version import __version__


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` the way every kernelsketch output is written (:class:`~kernelsketch.io.AtomicPath`:
    temp file + rename, the permissions a plain ``open`` would give)."""
    from ..io.atomic import AtomicPath

    path.parent.mkdir(parents=True, exist_ok=True)
    with AtomicPath(path, force=True) as tmp:
        tmp.write_bytes(data)


def _fmt(v):
    if isinstance(v, (float, np.floating)):
        if not np.isfinite(v):
            return str(v)
        return f"{v:.4g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.3e}"
    return str(v)


def markdown_table(rows, columns=None) -> str:
    """Render a list of dicts as a GitHub Markdown table."""
    if not rows:
        return "(no rows)\n"
    columns = columns or list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        lines.append("| " + " | ".join(_fmt(r.get(c, "")) for c in columns) + " |")
    return "\n".join(lines) + "\n"


def read_csv_rows(path) -> list:
    """The rows of a CSV a :class:`Report` wrote, as dicts of strings (for pages rendered from results)."""
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


class Report:
    """Collects the outputs of one reproduction run.

    Parameters
    ----------
    name : str
        Reproduction name (e.g. ``"kjl-table2"``).
    output_dir : path-like
    params : dict
        Every parameter of the run, including ``seed`` and ``quick``.
    echo : bool
        Print the header and tables to stdout.
    """

    def __init__(self, name, output_dir, params, echo=True):
        self.name = name
        self.output_dir = Path(output_dir)
        self.output_dir.mkdir(parents=True, exist_ok=True)
        self.params = dict(params)
        self.echo = echo
        self.tables = {}
        self.figures = []
        self.notes = []
        self._t0 = time.perf_counter()
        if echo:
            print(f"# kernelsketch reproduce {name}  (kernelsketch {__version__})")
            print("parameters: " + json.dumps(self.params, default=str, sort_keys=True))

    def table(self, name, rows, columns=None, title=None):
        columns = columns or (list(rows[0]) if rows else [])
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for r in rows:
            writer.writerow({c: r.get(c, "") for c in columns})
        _atomic_write_bytes(self.output_dir / f"{name}.csv", buf.getvalue().encode())
        md = (f"### {title}\n\n" if title else "") + markdown_table(rows, columns)
        _atomic_write_bytes(self.output_dir / f"{name}.md", md.encode())
        self.tables[name] = rows
        if self.echo:
            print()
            print(md)
        return md

    def figure(self, fig, name):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
        _atomic_write_bytes(self.output_dir / f"{name}.png", buf.getvalue())
        self.figures.append(f"{name}.png")
        import matplotlib.pyplot as plt

        plt.close(fig)

    def note(self, text):
        self.notes.append(text)
        if self.echo:
            print(text)

    def finish(self):
        meta = {
            "reproduction": self.name,
            "kernelsketch_version": __version__,
            "python": platform.python_version(),
            "params": self.params,
            "elapsed_seconds": round(time.perf_counter() - self._t0, 2),
            "tables": sorted(self.tables),
            "figures": self.figures,
            "notes": self.notes,
        }
        _atomic_write_bytes(self.output_dir / "params.json", json.dumps(meta, indent=2, default=str).encode())
        if self.echo:
            print(
                f"wrote {len(self.tables)} tables and {len(self.figures)} figures to {self.output_dir} "
                f"in {meta['elapsed_seconds']} s"
            )
        return {
            "tables": self.tables,
            "figures": self.figures,
            "params": self.params,
            "notes": self.notes,
            "output_dir": str(self.output_dir),
        }


def pyplot():
    """matplotlib.pyplot with the non-interactive Agg backend (imported lazily)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt
