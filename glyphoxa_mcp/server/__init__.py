"""The MCP surface: tools, tiers, names and resources."""
