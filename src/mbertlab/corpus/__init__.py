"""Corpora: per-language text built from sources, with controlled manipulations."""
