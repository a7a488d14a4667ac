"""The events that put memory into a voice session, checked against the openai package's
own Realtime models and Gemini Live's documented message shape."""

from __future__ import annotations

from openai.types.realtime import ConversationItemCreateEvent, SessionUpdateEvent

from glyphoxa_mcp.bridge.voice_events import (
    gemini_context,
    realtime_context_item,
    realtime_instructions,
)

CONTEXT = "## Who you are: Grimjaw\nThe town's blacksmith."


def test_realtime_session_update_keeps_the_persona_and_adds_the_memory() -> None:
    event = SessionUpdateEvent.model_validate(
        realtime_instructions("You are Grimjaw. Speak gruffly.", CONTEXT)
    )
    assert event.session.type == "realtime"
    assert event.session.instructions == ("You are Grimjaw. Speak gruffly.\n\n# Memory\n" + CONTEXT)


def test_realtime_context_item_is_a_system_message() -> None:
    event = ConversationItemCreateEvent.model_validate(realtime_context_item(CONTEXT, "mem_1"))
    item = event.item
    assert (item.type, item.role, item.id) == ("message", "system", "mem_1")
    assert item.content[0].text == "# Memory\n" + CONTEXT


def test_gemini_client_content_adds_a_turn_without_asking_for_a_reply() -> None:
    message = gemini_context(CONTEXT)
    (turn,) = message["clientContent"]["turns"]
    assert turn == {"role": "user", "parts": [{"text": "# Memory\n" + CONTEXT}]}
    assert message["clientContent"]["turnComplete"] is False
