"""Every generated section of the results pages is what its renderer makes of the committed CSVs."""

import pytest

from .results_pages import SECTIONS, committed


@pytest.mark.parametrize(("page", "name"), sorted(SECTIONS))
def test_generated_section_matches_the_committed_results(page, name):
    assert committed(page, name) == SECTIONS[(page, name)](), (
        f"docs/results/{page} section {name} is stale: run python -m tests.results_pages"
    )
