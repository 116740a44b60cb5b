"""One torch thread for this folder's tests (restored after each): on a loaded 2-core machine torch's default
of one thread per core spins against the other jobs (the folder ran past a 300 s timeout that way; 34 s of CPU
at 1 thread)."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
