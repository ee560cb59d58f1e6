"""mbertlab: a laboratory for studying why multilingual encoders transfer across languages.

Importing the package must stay cheap: no torch, no transformers here.
"""
from __future__ import annotations

__version__ = "0.1.0"
