"""glyphoxa-mcp: long-term memory for voice NPCs in tabletop RPG sessions."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("glyphoxa-mcp")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"
