"""Static word-piece embeddings (word2vec, GloVe) trained on the same tokenised corpus as a BERT artifact."""
