"""The LLM's summary, a scene at a time, through the real `openai` client against a local
OpenAI-compatible server."""

from __future__ import annotations

import json
from typing import Any

from glyphoxa_mcp.pipeline.llm_summary import llm_summary
from glyphoxa_mcp.providers.chat import ChatModel, ChatSettings
from tests.pipeline.test_summary import DOCKS_AT, NAMES, SCENES, START, entries
from tests.providers.fake_openai import chat, serve


def scene_reply(body: dict[str, Any]) -> str:
    asked = json.loads(body["messages"][1]["content"])
    place = asked["scene"]["location"]
    return json.dumps(
        {
            "where_and_who": f"At {place}, the party met.",
            "happened": f"They talked at {place}.",
            "decided": ["They would go to Mirewatch."] if place == "the Docks" else [],
            "promised": [],
            "revealed": [],
            "gist": f"The party was at {place}.",
        }
    )


async def test_each_scene_is_asked_for_with_its_place_and_becomes_a_part() -> None:
    with serve(chat(scene_reply)) as fake:
        model = ChatModel(ChatSettings(base_url=fake.base_url, model="m"))
        parts = await llm_summary(model, "Session 1", entries(), SCENES, NAMES)
    assert parts is not None
    assert [p.scene_started_at for p in parts] == [START, DOCKS_AT]
    assert parts[1].text.splitlines() == [
        "At the Docks, the party met.",
        "They talked at the Docks.",
        "Decided:",
        "- They would go to Mirewatch.",
    ]
    assert parts[0].gist == "The party was at Red Kettle."
    asked = [json.loads(r["messages"][1]["content"]) for r in fake.requests]
    assert asked[1]["scene"] == {
        "location": "the Docks",
        "present": ["Osric"],
        "title": "The ferryman",
    }
    assert "Osric: I know who took the caravan" in asked[1]["transcript"]
    assert "Osric" not in asked[0]["transcript"]


async def test_a_scene_without_its_gist_makes_the_caller_fall_back() -> None:
    reply = json.dumps({"where_and_who": "", "happened": "They talked.", "gist": " "})
    with serve(chat(reply)) as fake:
        model = ChatModel(ChatSettings(base_url=fake.base_url, model="m"))
        assert await llm_summary(model, "Session 1", entries(), SCENES, NAMES) is None
