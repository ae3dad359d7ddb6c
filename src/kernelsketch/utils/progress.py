"""Progress bars (tqdm) that stay quiet when nobody is watching.

Shown when ``config_context(show_progress=True)``, or when the setting is
None (default) and stderr is a terminal.  ``show_progress="lines"`` (the command
line off a terminal, e.g. a log file) writes one line per finished pass to stdout instead.
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
    if enabled is None and get_config()["show_progress"] == "lines":  # (off a terminal: a line, no "\r")
        return _LineBar(desc, unit) if iterable is None else _lines(iterable, desc, unit)
    if not progress_enabled(enabled):
        return iterable if iterable is not None else _NullBar()
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit=unit, leave=False, file=sys.stderr)


class _LineBar:
    """One line on stdout when the pass ends: what it did, how much, how fast (stderr stays for errors)."""

    def __init__(self, desc, unit):
        import time

        self.desc, self.unit, self.n, self.t0 = desc or "pass", unit, 0, time.perf_counter()

    def update(self, n=1):
        self.n += n

    def close(self):
        import time

        dt = time.perf_counter() - self.t0
        rate = f", {self.n / dt:,.0f} {self.unit}/s" if dt > 0 and self.n else ""
        print(f"[{self.desc}] {self.n:,} {self.unit} in {dt:.1f} s{rate}", file=sys.stdout, flush=True)

    def abort(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            self.close()
        return False


def _lines(iterable, desc, unit):
    """``iterable``, with one :class:`_LineBar` line when it is exhausted."""
    with _LineBar(desc, unit) as bar:
        for item in iterable:
            yield item
            bar.update()


class _NullBar:
    def update(self, n=1):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
