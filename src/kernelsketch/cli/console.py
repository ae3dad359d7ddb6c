"""The ``kernelsketch`` console script's entry point: the command line's own imports can be interrupted.

Importing the command line loads numpy and the library (a second or so on a cold start); a Ctrl-C in that
second used to end in a traceback of the imports.  Here it ends as every later Ctrl-C does: one line, exit 130.
"""

from __future__ import annotations

import sys

INTERRUPTED = "kernelsketch: interrupted; no output was written"


def main() -> int:
    """Import the command line and run it (:func:`kernelsketch.cli.main.main`); 130 on Ctrl-C during the imports."""
    try:
        from .main import main as run
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    return run()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
