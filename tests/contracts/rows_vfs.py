"""vfs rows."""
