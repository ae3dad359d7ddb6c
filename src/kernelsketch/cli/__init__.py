"""The ``kernelsketch`` command-line tool (thin: parses, calls the library, prints).

Run ``kernelsketch --help`` or ``python -m kernelsketch.cli --help``.
"""
