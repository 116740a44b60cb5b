"""rank_bounds rows."""
