"""Fine-tuning and evaluation across languages: in-language, zero-shot, controls."""
