"""sliced_wasserstein rows."""
