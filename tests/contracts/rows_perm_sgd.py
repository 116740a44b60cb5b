"""perm_sgd rows."""
