"""The user guide's "Every parameter and its default" section, generated from the estimators themselves.

Each table lists ``get_params()`` in signature order, the default's ``repr`` and the
whole description from the class docstring's numpydoc ``Parameters`` section (one
line, ``|`` escaped), or "see *Common parameters*" for an undocumented common one.
``tests/test_docs_tables.py`` fails when the guide and this rendering differ; rewrite
the section with ``python -m tests.doc_tables``.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "user_guide.md"
START = "## Every parameter and its default\n"
END = "## Reproductions\n"
CLASSES = (
    "KernelPCA",
    "SubsampleKPCA",
    "KernelJL",
    "Nystroem",
    "NystroemKernelKMeans",
    "LandmarkSpectralClustering",
    "LandmarkSpectralEmbedding",
    "StreamingKMeans",
    "RandomFourierFeatures",
    "RFKPCA",
    "RNCA",
    "FrequentDirections",
    "StreamingKPCA",
)
COMMON = {"kernel", "bandwidth", "gamma", "kernel_params", "random_state"}


def parameter_docs(cls):
    """name -> one-line description from the numpydoc Parameters section."""
    doc = inspect.getdoc(cls) or ""
    m = re.search(r"^Parameters\n-+\n(.*?)(?=^\w[^\n]*\n-+\n|\Z)", doc, flags=re.M | re.S)
    out = {}
    if not m:
        return out
    name, lines = None, []
    for line in m.group(1).splitlines():
        head = re.match(r"^(\w+)(?:, (\w+))* ?:", line) if line and not line.startswith(" ") else None
        if head:
            if name:
                out[name] = lines
            name, lines = head.group(1), []
            for extra in re.findall(r", (\w+)", line.split(":")[0]):
                out.setdefault(extra, None)
        elif name:
            lines.append(line.strip())
    if name:
        out[name] = lines
    return {k: " ".join(x for x in (v or []) if x).strip() for k, v in out.items()}


def _cell(text):
    text = text.replace("``", "`").replace("|", "\\|")
    text = re.sub(r":(?:class|meth|func|attr|data|mod):`~?([^`]+)`", r"`\1`", text)
    return text


def table(cls):
    params = cls().get_params(deep=False)
    order = [p for p in inspect.signature(cls.__init__).parameters if p in params]
    docs = parameter_docs(cls)
    rows = [f"### `{cls.__name__}`", "", "| parameter | default | meaning |", "|---|---|---|"]
    for p in order:
        meaning = docs.get(p) or ("see *Common parameters*" if p in COMMON else "")
        if not meaning:
            raise AssertionError(f"{cls.__name__}.{p} is not documented in its docstring")
        rows.append(f"| `{p}` | `{params[p]!r}` | {_cell(meaning)} |")
    return "\n".join(rows) + "\n"


def render():
    import kernelsketch as ks

    body = "\n".join(table(getattr(ks, name)) for name in CLASSES)
    return (
        START + "\nGenerated from the docstrings (`python -m tests.doc_tables` rewrites this section; a test keeps it "
        "in step).\n\n" + body + "\n"
    )


def current_section(text=None):
    text = GUIDE.read_text() if text is None else text
    a, b = text.index(START), text.index(END)
    return text[a:b]


if __name__ == "__main__":
    text = GUIDE.read_text()
    GUIDE.write_text(text.replace(current_section(text), render()))
    print(f"rewrote the parameter tables in {GUIDE}")
