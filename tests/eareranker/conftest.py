"""One torch thread for this folder's tests (the shared ``one_torch_thread`` fixture of tests/conftest.py; 34 s of
CPU at 1 thread, past a 300 s timeout with the default threads on a loaded machine)."""

import pytest


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread(one_torch_thread):
    yield
