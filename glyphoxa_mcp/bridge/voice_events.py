"""The client events that put memory into a speech-to-speech session. (pure)

OpenAI Realtime: the NPC's context as the session's instructions (`session.update`, which
replaces them: pass the persona they start with) or as a system message in the conversation
(`conversation.item.create`). Gemini Live: a `clientContent` turn that does not ask the
model to answer.
"""

from __future__ import annotations

from typing import Any

MEMORY_HEADING = "# Memory"


def with_memory(instructions: str, context: str) -> str:
    """The persona's instructions followed by the memory block."""
    base = instructions.rstrip()
    return f"{base}\n\n{MEMORY_HEADING}\n{context}" if base else f"{MEMORY_HEADING}\n{context}"


def realtime_instructions(instructions: str, context: str) -> dict[str, Any]:
    """`session.update` setting the instructions to the persona plus the memory block."""
    return {
        "type": "session.update",
        "session": {"type": "realtime", "instructions": with_memory(instructions, context)},
    }


def realtime_context_item(context: str, item_id: str | None = None) -> dict[str, Any]:
    """`conversation.item.create` of a system message holding the memory block (give an
    `item_id` to delete or replace it later)."""
    item: dict[str, Any] = {
        "type": "message",
        "role": "system",
        "content": [{"type": "input_text", "text": f"{MEMORY_HEADING}\n{context}"}],
    }
    if item_id is not None:
        item["id"] = item_id
    return {"type": "conversation.item.create", "item": item}


def gemini_context(context: str) -> dict[str, Any]:
    """A Gemini Live `clientContent` message adding the memory block without a reply."""
    return {
        "clientContent": {
            "turns": [{"role": "user", "parts": [{"text": f"{MEMORY_HEADING}\n{context}"}]}],
            "turnComplete": False,
        }
    }
