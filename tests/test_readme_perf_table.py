"""docs/performance.md's table of targets is the one rendered from the committed benchmark results (#28, #54)."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:  # benchmarks/ lives at the repository root, outside src/
    sys.path.insert(0, ROOT)

from benchmarks import readme_table  # noqa: E402


def test_readme_performance_table_is_rendered_from_the_committed_results():
    assert readme_table.current() == readme_table.render(), (
        "docs/performance.md's table of targets is out of date: run python -m benchmarks.readme_table"
    )


def test_rows_come_from_every_results_file_and_cells_keep_escaped_pipes():
    block = readme_table.render()
    for name in ("cluster-spectral-2M.md", "rss.md", "float32.md", "streaming.md", "csv.md", "startup.md"):
        assert f"]({readme_table.LINK}{name})" in block
    assert readme_table._cells(r"| a \|x\| b | c |") == [r"a \|x\| b", "c"]
    # a case measured on its own is not repeated from latest.md's older run
    assert block.count("streaming: FrequentDirections (blocks) vs IncrementalPCA") == 1
