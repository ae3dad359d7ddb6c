"""The driver functions' parameter constraints, checked once on entry (scikit-learn's ``validate_params``).

:func:`~kernelsketch.out_of_core.cluster_file`, :func:`~kernelsketch.out_of_core.fit_source`,
:func:`~kernelsketch.out_of_core.embed_file` and :func:`~kernelsketch.out_of_core.transform_source` declare what
each parameter may be, as estimators do in ``_parameter_constraints``; a value outside raises
:class:`~sklearn.utils._param_validation.InvalidParameterError` (a ``ValueError`` and a ``TypeError``) that names
the parameter, the function and what it may be, before anything is read.  The command line maps its flags to
these parameters and does not check them again: it reports such an error as a usage error (exit 2) under the
flag's name.  Constraints between parameters (``n_clusters="auto"`` needs the spectral embedding) stay in the
drivers.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, InvalidParameterError, StrOptions, validate_params

from ..cluster.landmark_labels import LABELINGS
from ..utils.missing_codes import MISSING_CELL_ACTIONS

__all__ = ["InvalidParameterError", "driver_params"]

_RANDOM_STATE = ["random_state", np.random.Generator]
_COMMON = {
    "n_jobs": [Interval(numbers.Integral, None, None, closed="neither"), None],
    "client": "no_validation",
    "block_rows": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "random_state": _RANDOM_STATE,
}
_FIT = {
    "fit_rows": [Interval(numbers.Integral, 2, None, closed="left")],
    "landmark_target": [Interval(numbers.Real, 0, 1, closed="neither"), None],
}

#: function name -> its parameters' constraints (``**read_options`` go to the reader, which checks them)
CONSTRAINTS = {
    "cluster_file": {
        **_COMMON,
        "force": ["boolean"],
        **_FIT,
        "n_clusters": [Interval(numbers.Integral, 2, None, closed="left"), StrOptions({"auto"})],
        "embedding": [StrOptions({"spectral", "kjl"}), HasMethods(["fit", "transform"]), None],
        "standardize": ["boolean", StrOptions({"auto"}), None],
        "keep_labels": ["boolean"],
        "init_size": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "lloyd_passes": [Interval(numbers.Integral, 0, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "plot_rows": [Interval(numbers.Integral, 0, None, closed="left")],
        "missing_codes": [StrOptions({"impute", "warn", "off"}), None],
        "keep_graph": ["boolean", StrOptions({"auto"})],
        "device": "no_validation",  # (a name or a torch.device: checked by TorchSearch's resolve_device)
        "assign_labels": [StrOptions(set(LABELINGS))],
        "missing": [StrOptions(set(MISSING_CELL_ACTIONS))],
        "label_column": "no_validation",  # (a name or an index: the reader checks it)
    },
    "fit_source": {
        **_COMMON,
        **_FIT,
        "estimator": [HasMethods(["fit"])],
        "keep_graph": ["boolean"],
    },
    "embed_file": {
        **_COMMON,
        "force": ["boolean"],
        **_FIT,
        "estimator": [HasMethods(["fit", "transform"])],
        "sample_rows": [Interval(numbers.Integral, 0, None, closed="left")],
    },
    "transform_source": {
        **_COMMON,
        "force": ["boolean"],
        "estimator": [HasMethods(["transform"]), HasMethods(["predict"])],
        "sample_rows": [Interval(numbers.Integral, 0, None, closed="left")],
        "method": [StrOptions({"transform", "predict"})],
        "column_names": "no_validation",
        "device": "no_validation",  # (a name or a torch.device: checked by TorchSearch's resolve_device)
    },
}


def driver_params(func):
    """Check ``func``'s arguments against :data:`CONSTRAINTS` on every call (nested estimators validate too), and
    run it under its ``n_jobs`` (:func:`~kernelsketch.utils.threads.thread_limit`: BLAS, OpenMP and numba's
    threads for the call; None leaves the process's limits as they are)."""
    import functools

    from ..utils.threads import thread_limit

    @functools.wraps(func)
    def limited(*args, **kwargs):
        with thread_limit(kwargs.get("n_jobs")):
            return func(*args, **kwargs)

    return validate_params(CONSTRAINTS[func.__name__], prefer_skip_nested_validation=False)(limited)
