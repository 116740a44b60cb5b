"""fair_matroid rows."""
