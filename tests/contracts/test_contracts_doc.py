"""docs/contracts.md is the rendered contract table (so the page cannot drift from the suite)."""

from contract_table import DOC, render, rows


def test_doc_is_the_rendered_table():
    # guards: a row added, flipped or removed without regenerating the page
    assert DOC.read_text() == render(), "docs/contracts.md is stale: run tests/contracts/contract_table.py --write"


def test_every_component_has_rows_and_na_rows_say_why():
    table = rows()
    from contract_table import COMPONENTS

    assert {r.component for r in table} == set(COMPONENTS)
    assert all(r.why for r in table if r.check is None)
