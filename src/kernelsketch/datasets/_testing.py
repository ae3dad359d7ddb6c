"""Test helper: skip (or, in CI, fail) when the shared datasets are absent."""

from __future__ import annotations

import os

from ._locate import ENV_VAR, DatasetNotFoundError, find_dataset
from ._registry import get_info

__all__ = ["require_shared_data"]


def require_shared_data(*names):
    """Folder of each named dataset, found without the package's vendored copies.

    When one is missing the calling test is skipped with a message saying how
    to get the data, except under ``CI=true`` where a missing dataset fails
    the test: CI must exercise the real files.  Returns a dict name -> folder.
    """
    import pytest  # imported here so that the package never depends on pytest

    found, missing = {}, []
    for name in names:
        try:
            found[name] = find_dataset(get_info(name), include_vendored=False)
        except DatasetNotFoundError as exc:
            missing.append(str(exc))
    if missing:
        msg = (
            "shared datasets missing; put the project's shared/datasets folder beside the checkout "
            f"(../shared/datasets) or set {ENV_VAR} to a folder holding <name>/<files>.\n" + "\n".join(missing)
        )
        if os.environ.get("CI", "").strip().lower() == "true":
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    return found
