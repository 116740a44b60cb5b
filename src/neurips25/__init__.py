"""neurips25: reference implementations of NeurIPS 2025 methods, each with a reproduction.

Importing this package imports nothing heavy (no torch, no method module): the methods live in
subpackages (``neurips25.dbcare``, ``neurips25.rspool``, ...) and are imported on demand.
"""

__version__ = "0.1.0"
