"""eareranker rows."""
