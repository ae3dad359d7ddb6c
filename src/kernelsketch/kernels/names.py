"""The kernels' names, importable without the kernels themselves (the command line's ``--kernel`` choices).

:data:`kernelsketch.kernels.kernel_functions.KERNELS` maps exactly these names to the classes (a test keeps the two
in step).
"""

from __future__ import annotations

#: every name ``kernel=`` (and ``--kernel``) takes, aliases included
KERNEL_NAMES = ("cauchy", "cosine", "gaussian", "laplacian", "linear", "poly", "polynomial", "rbf", "sigmoid")
