"""Analyses that read any stage: word retrieval, contextual and static embeddings, regressions."""
