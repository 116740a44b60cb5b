"""dbcare rows."""
