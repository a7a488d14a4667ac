"""Connect a speech-to-speech session to a memory tier over SSE.

A voice bridge (OpenAI Realtime, Gemini Live) receives the model's tool calls as events;
MemoryBridge turns each into an MCP tools/call and the result into the event that answers
it. Tool names arrive in the underscore spelling these APIs require; the server accepts it.

    url = "http://127.0.0.1:8765/c/demo/npc/ysolde/fast/sse"
    async with MemoryBridge.over_sse(url, token=os.environ["YSOLDE_TOKEN"]) as bridge:
        for reply in await bridge.answer_realtime(event):
            await realtime.send(reply)
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from mcp.client import Client
from mcp.client.sse import sse_client

from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.mcp_text import text_of
from glyphoxa_mcp.server.tool_names import ToolName, canonical


class MemoryBridge:
    def __init__(self, client: Client) -> None:
        self.client = client
        self._listed: dict[ToolName, str] | None = None

    @classmethod
    @asynccontextmanager
    async def over_sse(
        cls, url: str, headers: Mapping[str, str] | None = None, *, token: str | None = None
    ) -> AsyncIterator[MemoryBridge]:
        """A bridge to the endpoint at `url`; `token` is the viewer's bearer token
        (`glyphoxa-mcp token create`)."""
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        async with Client(sse_client(url, headers=sent), mode="legacy") as client:
            yield cls(client)

    async def listed_name(self, name: str) -> str:
        """`name` as the server lists it: a voice API sends underscore names, a server may
        list the dotted ones (calling a name it does not list makes the client warn)."""
        if self._listed is None:
            listing = await self.client.list_tools()
            self._listed = {}
            for listed in listing.tools:
                found = canonical(listed.name)
                if found is not None:
                    self._listed[found] = listed.name
        asked = canonical(name)
        return self._listed.get(asked, name) if asked is not None else name

    async def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The tool's answer as a JSON object: its structured result, or {"error": ...}."""
        result = await self.client.call_tool(await self.listed_name(name), dict(arguments))
        text = text_of(result.content)
        if result.is_error:
            return {"error": text or f"{name} failed"}
        if result.structured_content is not None:
            return dict(result.structured_content)
        return {"result": text}

    async def answer_realtime(self, event: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The events that answer a Realtime function call.

        Takes `response.function_call_arguments.done`, or `response.output_item.done` whose
        item is a `function_call`. Returns the `function_call_output` item to create and the
        `response.create` that lets the model speak with it.
        """
        call = event.get("item", event)
        if call.get("type") not in (None, "function_call") and "item" in event:
            raise InvalidInputError(f"Not a function call: item type {call.get('type')!r}.")
        try:
            call_id, name = call["call_id"], call["name"]
        except KeyError as exc:
            raise InvalidInputError(f"The Realtime event has no {exc.args[0]!r}.") from None
        try:
            arguments = json.loads(call.get("arguments") or "{}")
            if not isinstance(arguments, dict):
                raise ValueError("not an object")
        except ValueError as exc:
            output: dict[str, Any] = {"error": f"The arguments are not a JSON object ({exc})."}
        else:
            output = await self.call(name, arguments)
        return [
            {
                "type": "conversation.item.create",
                "item": {
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": json.dumps(output),
                },
            },
            {"type": "response.create"},
        ]

    async def answer_gemini(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """The `toolResponse` client message answering a Gemini Live `toolCall`."""
        try:
            calls = message["toolCall"]["functionCalls"]
        except (KeyError, TypeError):
            raise InvalidInputError("The Gemini message has no toolCall.functionCalls.") from None
        responses = []
        for call in calls:
            arguments = call.get("args") or {}
            if not isinstance(arguments, dict):
                response: dict[str, Any] = {"error": "The args are not a JSON object."}
            else:
                response = await self.call(call["name"], arguments)
            responses.append({"id": call.get("id"), "name": call["name"], "response": response})
        return {"toolResponse": {"functionResponses": responses}}
