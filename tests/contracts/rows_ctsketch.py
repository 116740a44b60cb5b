"""ctsketch rows."""
