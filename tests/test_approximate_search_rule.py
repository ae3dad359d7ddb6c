"""The rule that chose the default search (benchmarks/approximate_search.py), on made-up results."""

from benchmarks.approximate_search import decide, render
from benchmarks.spectral_recipe import CONFIRMATION, TUNING


def _results(approx_of, exact=0.8):
    out = {}
    for s in (*TUNING, *CONFIRMATION):
        out[s] = {
            "exact": [exact, exact, exact],
            "approximate": approx_of(s),
            "n": 100,
            "d": 4,
            "k": 2,
            "recall": 0.99,
            "t_exact": 1.0,
            "t_approx": 0.5,
        }
    return out


def test_equal_aris_pass_and_the_confirmation_half_cannot_fail_it():
    ok, _ = decide(_results(lambda s: [0.1] * 3 if s in CONFIRMATION else [0.8] * 3))
    assert ok  # the confirmation half is reported, never used to choose


def test_one_tuning_set_far_below_fails_it_by_name():
    bad = TUNING[0]
    ok, reasons = decide(_results(lambda s: [0.7] * 3 if s == bad else [0.81] * 3))
    assert not ok and any(r.startswith(f"{bad}:") for r in reasons)


def test_a_lower_tuning_mean_fails_it_even_within_each_sets_margin():
    ok, reasons = decide(_results(lambda s: [0.793] * 3))  # 0.007 lower everywhere: within each set's 0.01
    assert not ok and "tuning mean ARI" in reasons[0]


def test_the_page_states_the_verdict():
    text = render(_results(lambda s: [0.8] * 3), None, [0, 1, 2], ["--seeds", "3"], (0, ()))
    assert "**Verdict: the rule passes**" in text and 'search="auto"' in text
    text = render(_results(lambda s: [0.5] * 3), None, [0, 1, 2], ["--seeds", "3"], (0, ()))
    assert "the exact search stays the default" in text
