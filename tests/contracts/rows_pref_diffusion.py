"""pref_diffusion rows."""
