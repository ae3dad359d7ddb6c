"""Progress bars (tqdm) that stay quiet when nobody is watching.

Shown when ``config_context(show_progress=True)``, or when the setting is
None (default) and stderr is a terminal.
"""

from __future__ import annotations

import sys

from .._config import get_config


def progress_enabled(enabled=None) -> bool:
    if enabled is not None:
        return bool(enabled)
    setting = get_config()["show_progress"]
    if setting is not None:
        return bool(setting)
    return sys.stderr.isatty()


def progress(iterable=None, *, total=None, desc=None, enabled=None, unit="it"):
    """Wrap ``iterable`` in a tqdm bar when progress is enabled, else return it unchanged."""
    if not progress_enabled(enabled):
        return iterable if iterable is not None else _NullBar()
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit=unit, leave=False, file=sys.stderr)


class _NullBar:
    def update(self, n=1):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
