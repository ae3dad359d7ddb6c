"""Where dataset files are looked for, in order, and the error when they are nowhere.

Search order for dataset ``name`` (each place is a folder holding ``name/``):

1. the ``data_home`` argument;
2. every folder in ``$KERNELSKETCH_DATA`` (``os.pathsep``-separated);
3. a ``shared/datasets`` folder found by walking up from this package's
   directory, then from the current working directory (a checkout at
   ``/work/main`` finds ``/work/shared/datasets``);
4. for sets that ship one (banknote), the copy inside the package.
"""

from __future__ import annotations

import os
from pathlib import Path

from ._registry import DatasetInfo

__all__ = ["ENV_VAR", "VENDORED_DIR", "DatasetNotFoundError", "find_dataset", "search_locations"]

ENV_VAR = "KERNELSKETCH_DATA"
VENDORED_DIR = Path(__file__).resolve().parent / "data"


class DatasetNotFoundError(FileNotFoundError):
    """A dataset's files are in none of the searched places.

    ``searched`` lists ``(description, folder)`` pairs in search order and
    ``url`` is the public page the data can be downloaded from.
    """

    def __init__(self, name, searched, url, files):
        self.name = name
        self.searched = list(searched)
        self.url = url
        places = "\n".join(f"  - {folder}  ({why})" for why, folder in self.searched) or "  (nowhere)"
        wanted = ", ".join(files) if files else "a folder of per-device CSV files"
        super().__init__(
            f"dataset {name!r} not found: looked for {wanted} in\n{places}\n"
            f"Download it from {url} and put the files in <data_home>/{name}/, then pass "
            f"data_home=... or set {ENV_VAR}=<data_home>."
        )


def _walk_up_for_shared(start: Path):
    for folder in (start, *start.parents):
        candidate = folder / "shared" / "datasets"
        if candidate.is_dir():
            return candidate
    return None


def default_roots() -> list[tuple[str, Path]]:
    """``shared/datasets`` folders found above the package and above the working directory."""
    roots = []
    for origin, start in (("package", Path(__file__).resolve().parent), ("working directory", Path.cwd())):
        found = _walk_up_for_shared(start)
        if found is not None:
            roots.append((f"shared/datasets above the {origin}", found))
    return roots


def search_locations(info: DatasetInfo, data_home=None) -> list[tuple[str, Path]]:
    """``(description, folder)`` pairs where ``info``'s files are looked for, in order."""
    places = []
    if data_home is not None:
        places.append(("data_home argument", Path(os.fspath(data_home)).expanduser() / info.name))
    for entry in os.environ.get(ENV_VAR, "").split(os.pathsep):
        if entry.strip():
            places.append((f"${ENV_VAR}", Path(entry.strip()).expanduser() / info.name))
    for why, root in default_roots():
        places.append((why, root / info.name))
    if info.vendored:
        places.append(("copy shipped inside kernelsketch", VENDORED_DIR))
    unique, seen = [], set()
    for why, folder in places:
        key = os.path.abspath(folder)
        if key not in seen:
            seen.add(key)
            unique.append((why, folder))
    return unique


def holds_dataset(info: DatasetInfo, folder: Path) -> bool:
    """True when ``folder`` has every file of ``info`` (a device folder with a CSV for N-BaIoT)."""
    if info.is_directory:
        return folder.is_dir() and any(any(p.rglob("*.csv")) for p in folder.iterdir() if p.is_dir())
    return all((folder / spec.name).is_file() for spec in info.files)


def find_dataset(info: DatasetInfo, data_home=None, *, include_vendored=True) -> Path:
    """First folder in the search order that holds ``info``; DatasetNotFoundError otherwise."""
    places = search_locations(info, data_home)
    for _why, folder in places:
        if not include_vendored and folder == VENDORED_DIR:
            continue
        if holds_dataset(info, folder):
            return folder
    if not include_vendored:
        places = [(why, f) for why, f in places if f != VENDORED_DIR]
    raise DatasetNotFoundError(info.name, places, info.url, [spec.name for spec in info.files])
