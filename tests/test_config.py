import threading

import pytest

import kernelsketch
from kernelsketch.utils import get_chunk_n_rows
from kernelsketch.utils.progress import progress, progress_enabled


def test_config_context_restores_and_is_thread_local():
    base = kernelsketch.get_config()["working_memory"]
    seen = {}

    def other_thread():
        seen["other"] = kernelsketch.get_config()["working_memory"]

    with kernelsketch.config_context(working_memory=3):
        assert kernelsketch.get_config()["working_memory"] == 3
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
        with kernelsketch.config_context(working_memory=5):
            assert get_chunk_n_rows(2**20, 100) == 5
        assert get_chunk_n_rows(2**20, 100) == 3
    assert kernelsketch.get_config()["working_memory"] == base
    assert seen["other"] == base


def test_bad_working_memory():
    with pytest.raises(ValueError, match="working_memory must be a finite number of MiB > 0"):
        kernelsketch.set_config(working_memory=0)
    with pytest.raises(TypeError, match="number of MiB"):
        kernelsketch.set_config(working_memory="1GB")
    with pytest.raises(MemoryError, match="cannot hold one row"):
        get_chunk_n_rows(10 * 2**20, 5, working_memory=1)


def test_progress_switch():
    with kernelsketch.config_context(show_progress=False):
        assert not progress_enabled()
        items = [1, 2, 3]
        assert progress(items) is items
    assert progress_enabled(True)
    assert list(progress(range(3), enabled=True)) == [0, 1, 2]


def test_lazy_exports():
    for name in ("KernelPCA", "GramOperator", "estimate_bandwidth"):
        assert getattr(kernelsketch, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = kernelsketch.Nope
