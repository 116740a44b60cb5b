import pytest


@pytest.fixture(scope="session")
def small_solver():
    from neurips25.inverse3d import BrinkmanSpectralNS

    return BrinkmanSpectralNS(grid=(32, 16, 16), steps=100)
