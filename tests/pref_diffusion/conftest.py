"""One torch thread for this folder's tests (the shared ``one_torch_thread`` fixture of tests/conftest.py): on a
shared 2-core machine extra threads only spin."""

import pytest


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread(one_torch_thread):
    yield
