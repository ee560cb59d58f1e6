"""Dependency parsing: MST decoding into well-formed trees, and UAS/LAS as the CoNLL 2018 scorer counts."""
