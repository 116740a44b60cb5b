"""Every (component, contract) row of the table, one parametrised test each (see contract_table.py)."""

import contract_fixtures
import pytest
from contract_table import rows


def _param(r):
    marks = []
    if r.xfail is not None:
        marks.append(pytest.mark.xfail(strict=True, reason=f"issue #{r.xfail}: {r.reason}" if r.reason
                                       else f"issue #{r.xfail}"))
    if r.device == "cuda":
        marks.append(pytest.mark.skipif(not contract_fixtures.cuda_available(),
                                        reason="CUDA row: runs only where a CUDA device exists"))
    return pytest.param(r, id=r.id, marks=marks)


ROWS = [r for r in rows() if r.check is not None]


@pytest.mark.parametrize("r", [_param(r) for r in ROWS])
def test_contract(r, tmp_path):
    r.check(tmp_path)
