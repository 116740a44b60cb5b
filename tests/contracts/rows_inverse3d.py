"""inverse3d rows."""
