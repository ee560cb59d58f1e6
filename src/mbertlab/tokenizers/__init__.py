"""Tokenizers (word, WordPiece, character, SentencePiece unigram) and token shards."""
