"""``python -m kernelsketch.cli``: the same as the ``kernelsketch`` console script."""

import sys

from .main import main

sys.exit(main())
