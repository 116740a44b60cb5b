"""prsformer rows."""
