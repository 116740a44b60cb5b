"""rspool rows."""
