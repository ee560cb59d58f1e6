"""Data sources: downloads of public data sets and the generated languages."""
