"""Retrieval logic shared by the tools and resources (pure: no database, no providers)."""
