"""chemcot rows."""
