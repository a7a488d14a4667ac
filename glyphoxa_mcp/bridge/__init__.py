"""Glue for speech-to-speech bridges (OpenAI Realtime, Gemini Live): tool calls answered by
the memory, the hot context injected into the model's session, partial transcripts turned
into pre-fetched context, and the session recorded as it is spoken."""

from glyphoxa_mcp.bridge.memory_bridge import MemoryBridge

__all__ = ["MemoryBridge"]
