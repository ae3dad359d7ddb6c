"""#52 item 6: the drivers' parameters are checked once, on entry, against declared constraints."""

import inspect

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

import kernelsketch as ks
from kernelsketch.cli.main import main
from kernelsketch.out_of_core.params import CONSTRAINTS

#: parameters that are not values to check: the data, where the output goes, the reader's options
_FREE = {"data", "output", "read_options"}
DRIVERS = {name: getattr(ks, name) for name in CONSTRAINTS}


@pytest.mark.parametrize("name", sorted(DRIVERS))
def test_every_parameter_of_a_driver_has_a_constraint(name):
    params = set(inspect.signature(DRIVERS[name]).parameters) - _FREE
    assert params == set(CONSTRAINTS[name]), f"{name}: give every new parameter a constraint in params.py"


@pytest.mark.parametrize(
    "call",
    [
        lambda p: ks.cluster_file(p, 3, lloyd_passes=-1),
        lambda p: ks.cluster_file(p, 3, standardize="yes"),
        lambda p: ks.cluster_file(p, 3, embedding="pca"),
        lambda p: ks.cluster_file(p, 3, tol=-1.0),
        lambda p: ks.fit_source(ks.KernelJL(), p, fit_rows=1),
        lambda p: ks.fit_source(object(), p),
        lambda p: ks.embed_file(p, None, ks.KernelJL(), landmark_target=1.5),
        lambda p: ks.transform_source(ks.KernelJL(), p, method="score"),
        lambda p: ks.transform_source(ks.KernelJL(), p, block_rows=0),
    ],
)
def test_a_bad_value_is_refused_by_name_before_the_data_is_opened(tmp_path, call):
    missing = tmp_path / "no-such-file.npy"  # never opened: the check comes first
    with pytest.raises(InvalidParameterError, match=r"parameter of (cluster_file|fit_source|embed_file|transform_)"):
        call(missing)


def test_the_cli_reports_a_refused_value_under_its_flag_as_a_usage_error(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.random.default_rng(0).normal(size=(200, 2)))
    code = main(["cluster", str(tmp_path / "x.npy"), "-k", "3", "--lloyd-passes", "-1", "-o", str(tmp_path / "l.npy")])
    assert code == 2
    err = capsys.readouterr().err
    assert "'--lloyd-passes' must be an int in the range [0, inf)" in err and "cluster_file" not in err
