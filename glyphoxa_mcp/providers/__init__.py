"""Embedding (and later LLM) providers behind small protocols; one module per vendor."""
