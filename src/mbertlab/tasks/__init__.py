"""Downstream tasks: each module holds features, head, decoding and metric for one task."""
