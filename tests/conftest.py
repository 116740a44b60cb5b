"""Shared test set-up: quiet progress, a non-interactive matplotlib backend, few threads."""

import os

os.environ.setdefault("NEURIPS25_QUIET", "1")
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
