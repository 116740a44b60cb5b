"""behavior_injection rows."""
