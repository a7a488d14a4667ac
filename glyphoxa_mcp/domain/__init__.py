"""The models and vocabulary every floor shares: entities, relationships, facts, sessions, the
viewer, tiers, tool names, episodes and the rumour rule. (pure)

Imports nothing of glyphoxa_mcp but `errors`; every other floor may import it (the import
contract in pyproject.toml, checked by tests/test_layers.py).
"""
