"""What the user sees: messages, progress bars, the ``--json`` summary, errors."""

from __future__ import annotations

import json
import sys

import numpy as np


class UsageError(Exception):
    """A command line that cannot be run as given (exit code 2)."""


class UI:
    """Human messages on stdout, progress bars on stderr, or one JSON document with ``--json``.

    Progress bars show only when stdout is a terminal and neither ``--quiet``
    nor ``--json`` was given.
    """

    def __init__(self, *, quiet=False, json_output=False):
        self.quiet = quiet
        self.json = json_output
        self.summary = {}
        #: the output files this command has committed so far (what an interrupt leaves behind)
        self.written = []
        self.show_progress = not quiet and not json_output and sys.stdout.isatty()
        #: what the library's passes show: bars on a terminal, a line per pass in a log, nothing with -q/--json
        self.pass_progress = (True if self.show_progress else "lines") if not (quiet or json_output) else False

    def say(self, text=""):
        if not self.quiet and not self.json:
            print(text, flush=True)

    def progress(self, total=None, desc="", unit="rows"):
        from tqdm.auto import tqdm

        return tqdm(
            total=total,
            desc=desc,
            unit=unit,
            unit_scale=True,
            disable=not self.show_progress,
            file=sys.stderr,
            leave=False,
            dynamic_ncols=True,
        )

    def wrote(self, path):
        """Note a committed output file (an interrupt's message lists them)."""
        self.written.append(str(path))

    def record(self, **items):
        self.summary.update(items)

    def finish(self):
        if self.json:
            print(json.dumps(self.summary, indent=2, default=_jsonable))


def _jsonable(v):
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    return str(v)
