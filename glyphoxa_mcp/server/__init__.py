"""The MCP surface: tools, resources, the gates in front of them, subscriptions, the recorder
endpoint and HTTP hosting. (Tiers and tool names are domain vocabulary: `domain/`.)"""
