"""The package's layering (docs/architecture.md): every import points down or sideways, and no module cycle.

The imports are read from the source with :mod:`ast` -- those inside functions
too, since a lazy import is still a dependency -- so the test needs nothing
imported and fails on the edit that adds an upward import, wherever it is.
"""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "kernelsketch"

#: bottom to top; a module may import its own layer and the ones below it.
#: Keep in step with the table in docs/architecture.md (checked below).
LAYERS = [
    ("foundation", {"_config", "_lazy", "_typing", "_version", "utils"}),
    ("kernels and data", {"kernels", "io", "datasets"}),
    ("feature maps and sketches", {"maps", "sketches"}),
    ("estimators and metrics", {"decomposition", "cluster", "preprocessing", "metrics"}),
    ("whole jobs", {"out_of_core", "estimators", "persistence"}),
    ("engines and tools", {"distributed", "diagnostics"}),
    ("applications", {"experiments", "cli"}),
    ("public namespace", {"__init__"}),
]
RANK = {part: i for i, (_, parts) in enumerate(LAYERS) for part in parts}


def _modules():
    mods = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        mods[".".join(parts)] = (path, is_package)
    return mods


MODULES = _modules()


def _imports(name):
    """Modules of the package that module ``name`` imports (anywhere in its body)."""
    path, is_package = MODULES[name]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("kernelsketch"):
                continue
            for alias in node.names:
                # "from pkg import sub" imports the submodule; "from mod import name" the module
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in MODULES else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("kernelsketch"))
    # importlib.import_module("kernelsketch.x") is an import too
    text = path.read_text()
    found.update(re.findall(r"import_module\(\s*[\"'](kernelsketch[\w.]*)[\"']", text))
    return {t if t in MODULES else _owner(t) for t in found} - {name}


def _owner(target):
    while target not in MODULES and "." in target:
        target = target.rsplit(".", 1)[0]
    return target


GRAPH = {name: _imports(name) for name in MODULES}


def _part(module):
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def test_every_module_has_a_layer():
    assert {_part(m) for m in MODULES} <= set(RANK), sorted({_part(m) for m in MODULES} - set(RANK))


def test_imports_point_down():
    upward = [
        f"{a} ({LAYERS[RANK[_part(a)]][0]}) imports {b} ({LAYERS[RANK[_part(b)]][0]})"
        for a, targets in GRAPH.items()
        for b in targets
        if RANK[_part(b)] > RANK[_part(a)]
    ]
    assert not upward, "\n".join(upward)


def _cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def _without_package_namespaces(graph):
    """Drop the edges *out of* package ``__init__`` modules.

    A package namespace re-exports its submodules (lazily), so ``pkg -> pkg.mod``
    and ``pkg.mod -> pkg.other`` would read as a cycle through ``pkg`` although
    nothing imports in a circle.  Imports *into* a package (``from ..maps import
    Nystroem``) stay: they resolve to the defining module through that edge-free node.
    """
    return {m: (set() if MODULES[m][1] else set(t)) for m, t in graph.items()}


def test_no_import_cycles():
    assert _cycles(_without_package_namespaces(GRAPH)) == []


def test_the_checks_catch_a_cycle_and_an_upward_import():
    # the checks themselves: a two-module cycle is found, and a kernels -> maps edge is upward
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    assert RANK[_part("kernelsketch.maps.nystroem")] > RANK[_part("kernelsketch.kernels.blocks")]


def test_the_known_seams_are_not_upward():
    # the imports that used to break the layering (issue 15) stay gone
    assert "kernelsketch.kernels.blocks" not in GRAPH["kernelsketch.kernels.kernel_functions"]
    assert not any(t.startswith("kernelsketch.kernels") for t in GRAPH["kernelsketch.utils.estimator_checks"])
    assert not any(t.startswith("kernelsketch.distributed") for t in GRAPH["kernelsketch.utils.dispatch"])
    driver = [m for m in GRAPH if m == "kernelsketch.out_of_core" or m.startswith("kernelsketch.out_of_core.")]
    assert len(driver) >= 6  # the package and its engine, standardize, fit, sinks, drivers modules
    for m in driver:
        assert not any(t.startswith("kernelsketch.distributed") for t in GRAPH[m]), m


def test_architecture_doc_lists_the_layers():
    doc = (SRC.parents[1] / "docs" / "architecture.md").read_text()
    for title, parts in LAYERS:
        row = next((line for line in doc.splitlines() if line.startswith(f"| {title} |")), None)
        assert row is not None, f"docs/architecture.md has no row for the layer {title!r}"
        for part in parts:
            shown = "kernelsketch/__init__.py" if part == "__init__" else part
            assert shown in row, f"docs/architecture.md: {shown} missing from the {title!r} row"


def _folder_map():
    """``{folder: {module file names}}`` of docs/architecture.md's folder map ("" for the package's own files)."""
    doc = (SRC.parents[1] / "docs" / "architecture.md").read_text()
    block = doc.split("## Folder map", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    listed: dict[str, set] = {"": set()}
    folder = ""
    for line in block.splitlines():
        if m := re.match(r"^  (\w+)/\s", line + " "):
            folder = m[1]
            listed.setdefault(folder, set())
        elif m := re.match(r"^    (\S+\.py)\b", line):
            listed[folder].add(m[1])
        elif m := re.match(r"^  (\S+\.py)\b", line):
            listed[""].add(m[1])
    return listed


def _package_files():
    files: dict[str, set] = {"": {p.name for p in SRC.glob("*.py")}}
    for d in SRC.iterdir():
        if d.is_dir() and d.name != "__pycache__":
            files[d.name] = {p.name for p in d.glob("*.py") if p.name != "__init__.py"}
    return files


@pytest.mark.parametrize("folder", sorted(_package_files()))
def test_the_folder_map_names_every_module_and_no_other(folder):
    listed, files = _folder_map(), _package_files()
    assert folder in listed, f"docs/architecture.md's folder map does not mention {folder}/"
    assert listed[folder] == files[folder], (
        f"docs/architecture.md's folder map for {folder or 'src/kernelsketch'}/: missing "
        f"{sorted(files[folder] - listed[folder])}, not in the package {sorted(listed[folder] - files[folder])}"
    )


#: the landmark spectral estimators' modules, whose private methods no other module calls (#64)
SPECTRAL = ("maps/landmark_spectral.py", "cluster/landmark_spectral_clustering.py")
#: the private methods of theirs that other modules may call, each named with its reason in docs/architecture.md
SPECTRAL_PRIVATE_ALLOWED: set = set()


def _private_methods_of(path, classes=None):
    tree = ast.parse(path.read_text())
    return {
        f.name
        for c in ast.walk(tree)
        if isinstance(c, ast.ClassDef) and (classes is None or c.name in classes)
        for f in c.body
        if isinstance(f, ast.FunctionDef) and f.name.startswith("_") and not f.name.startswith("__")
    }


def test_no_other_module_calls_a_private_method_of_the_landmark_spectral_estimators():
    own = set().union(*(_private_methods_of(SRC / p) for p in SPECTRAL))
    # (a name that another class defines too, e.g. Kernel._finish, cannot be told apart by name: left out)
    elsewhere = set().union(
        *(_private_methods_of(p) for p in SRC.rglob("*.py") if str(p.relative_to(SRC)) not in SPECTRAL)
    )
    watched = own - elsewhere - SPECTRAL_PRIVATE_ALLOWED
    assert {"_plan", "_choose_landmarks", "_solve", "_choose_labeling"} <= watched  # (the test sees the seams)
    calls = [
        f"{p.relative_to(SRC)}:{node.lineno} .{node.attr}"
        for p in SRC.rglob("*.py")
        if str(p.relative_to(SRC)) not in SPECTRAL
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.Attribute) and node.attr in watched
    ]
    assert not calls, f"private methods of the landmark spectral estimators called from other modules: {calls}"


#: the most code lines (docstring, comments and blank lines left out) one function may have
MAX_FUNCTION_LINES = 100


def _function_lengths(source):
    """``(name, line, code lines)`` of every function in ``source``."""
    tree = ast.parse(source)
    text = source.splitlines()
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = node.body
        if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and len(body) > 1:
            body = body[1:]
        lines = {
            ln
            for b in body
            for ln in range(b.lineno, b.end_lineno + 1)
            if text[ln - 1].strip() and not text[ln - 1].strip().startswith("#")
        }
        out.append((node.name, node.lineno, len(lines)))
    return out


def test_no_function_is_over_a_hundred_code_lines():
    """#52: a function that long does several things (cluster_file had 106 lines); split it."""
    long = [
        f"{path.relative_to(SRC)}:{line} {name} ({n} lines)"
        for path in sorted(SRC.rglob("*.py"))
        for name, line, n in _function_lengths(path.read_text(encoding="utf-8"))
        if n > MAX_FUNCTION_LINES
    ]
    assert long == []


def test_the_length_check_counts_code_not_docstrings():
    body = "\n".join(f"    x{i} = {i}" for i in range(101))
    src = f'def f():\n    """Doc.\n\n    More.\n    """\n    # note\n\n{body}\n'
    assert _function_lengths(src) == [("f", 1, 101)]
