"""fml rows."""
