"""Connect a speech-to-speech session to a memory tier over SSE, and optionally to the
campaign's recorder.

A voice bridge (OpenAI Realtime, Gemini Live) receives the model's tool calls as events;
MemoryBridge turns each into an MCP tools/call and the result into the event that answers
it. Tool names arrive in the underscore spelling these APIs require; the server accepts it.
It also reads the NPC's hot context (and pre-fetched context for what a player is saying)
as one block to inject into the model's session, and records the session as it is spoken.

    base = "http://127.0.0.1:8765/c/demo"
    async with MemoryBridge.over_sse(
        f"{base}/npc/ysolde/fast/sse", token=ysolde_token,
        recorder_url=f"{base}/record/sse", recorder_token=recorder_token,
    ) as bridge:
        await realtime.send(realtime_instructions(PERSONA, await bridge.context("ysolde")))
        for reply in await bridge.answer_realtime(event):
            await realtime.send(reply)
        await bridge.record("s7", {"speaker_id": "p1", "speaker_name": "Kael", ...})
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote, urlencode

from anyio.abc import TaskGroup
from mcp.client import Client
from mcp.client.sse import sse_client
from mcp.types import TextResourceContents

from glyphoxa_mcp.bridge.throttle import INTERVAL_S, Throttle
from glyphoxa_mcp.domain.tool_names import ToolName, canonical
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.mcp_text import text_of
from glyphoxa_mcp.server.resource_uris import hot_uri
from glyphoxa_mcp.views.prefetch import MAX_UTTERANCE


def _headers(headers: Mapping[str, str] | None, token: str | None) -> dict[str, str]:
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    return sent


class MemoryBridge:
    def __init__(self, client: Client, recorder: Client | None = None) -> None:
        self.client = client
        self.recorder = recorder
        self._listed: dict[ToolName, str] | None = None
        # Per session, who is present and where, as scenes were last set through this bridge.
        self._present: dict[str, list[str]] = {}
        self._location: dict[str, str] = {}

    @classmethod
    @asynccontextmanager
    async def over_sse(
        cls,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        token: str | None = None,
        recorder_url: str | None = None,
        recorder_token: str | None = None,
    ) -> AsyncIterator[MemoryBridge]:
        """A bridge to the endpoint at `url`; `token` is the viewer's bearer token
        (`glyphoxa-mcp token create`). With `recorder_url` (`/c/{campaign}/record/sse`) and
        a recorder token, the bridge can also record the session."""
        async with contextlib.AsyncExitStack() as stack:
            client = await stack.enter_async_context(
                Client(sse_client(url, headers=_headers(headers, token)), mode="legacy")
            )
            recorder = None
            if recorder_url is not None:
                recorder = await stack.enter_async_context(
                    Client(
                        sse_client(recorder_url, headers=_headers(headers, recorder_token)),
                        mode="legacy",
                    )
                )
            yield cls(client, recorder)

    # --- memory in the model's session ------------------------------------------------------

    async def context(
        self, npc_id: str, partial: str | None = None, session_id: str | None = None
    ) -> str:
        """One block for the NPC's prompt: its hot context (who it is, where, what was just
        said, this session's facts) and, for a partial utterance, what it is about to need
        (the entities named, the past it reaches for)."""
        blocks = [str((await self._resource(hot_uri(npc_id, session_id)))["prompt"])]
        if partial and partial.strip():
            query = urlencode({"utterance": partial[:MAX_UTTERANCE]}, quote_via=quote)
            fetched = await self._resource(
                f"glyphoxa://npc/{quote(npc_id, safe='')}/prefetch?{query}"
            )
            if fetched.get("prompt"):
                blocks.append(f"## What this is about\n{fetched['prompt']}")
        return "\n\n".join(blocks)

    def prefetcher(
        self,
        npc_id: str,
        on_context: Callable[[str], Awaitable[None]],
        tasks: TaskGroup,
        *,
        session_id: str | None = None,
        interval_s: float = INTERVAL_S,
    ) -> Throttle:
        """Feed it partial transcripts (`.heard(text)`) as speech-to-text sends them; at
        most once per `interval_s` it fetches the combined context for the newest one and
        hands it to `on_context` (to send with `realtime_context_item` or
        `gemini_context`)."""
        return Throttle(
            lambda partial: self.context(npc_id, partial, session_id),
            on_context,
            tasks,
            interval_s,
        )

    async def _resource(self, uri: str) -> dict[str, Any]:
        read = await self.client.read_resource(uri)
        text = "".join(c.text for c in read.contents if isinstance(c, TextResourceContents))
        try:
            data = json.loads(text)
        except ValueError:
            raise InvalidInputError(f"{uri}: {text[:300] or 'no answer'}") from None
        if not isinstance(data, dict):
            raise InvalidInputError(f"{uri}: not a JSON object")
        return data

    # --- recording ----------------------------------------------------------------------------

    async def start_session(
        self,
        session_id: str,
        title: str | None = None,
        *,
        present: Sequence[str] | None = None,
        location: str | None = None,
    ) -> dict[str, Any]:
        """Open the session; with `present` (NPC ids, names or aliases) and `location`, its
        opening scene too."""
        arguments: dict[str, Any] = {"session_id": session_id}
        if title is not None:
            arguments["title"] = title
        if present is not None:
            arguments["present"] = list(present)
            self._present[session_id] = list(dict.fromkeys(present))
        if location is not None:
            arguments["location"] = location
            self._location[session_id] = location
        return await self._record_call("session.start", arguments)

    async def set_scene(
        self,
        session_id: str,
        present: Sequence[str],
        *,
        location: str | None = None,
        title: str | None = None,
    ) -> dict[str, Any]:
        """A new scene from now: the NPCs present (the players always are) and where (None:
        where the last scene set through this bridge was)."""
        self._present[session_id] = list(dict.fromkeys(present))
        if location is not None:
            self._location[session_id] = location
        arguments: dict[str, Any] = {"session_id": session_id, "present": list(present)}
        if self._location.get(session_id) is not None:
            arguments["location"] = self._location[session_id]
        if title is not None:
            arguments["title"] = title
        return await self._record_call("scene.set", arguments)

    async def npc_joined(self, session_id: str, npc: str) -> dict[str, Any]:
        """An NPC joined the table's voice session: a new scene with it present."""
        present = self._present.get(session_id, [])
        return await self.set_scene(session_id, [*present, npc] if npc not in present else present)

    async def npc_left(self, session_id: str, npc: str) -> dict[str, Any]:
        """An NPC left the table's voice session: a new scene without it."""
        present = self._present.get(session_id, [])
        return await self.set_scene(session_id, [p for p in present if p != npc])

    async def record(self, session_id: str, *utterances: Mapping[str, Any]) -> dict[str, Any]:
        """Append utterances ({speaker_id, speaker_name, text, timestamp, utterance_id?,
        npc_id?, ...}); the answer is each one's utterance_id and whether this call stored it
        (new), nothing of what was stored."""
        return await self._record_call(
            "transcript.append",
            {"session_id": session_id, "utterances": [dict(u) for u in utterances]},
        )

    async def end_session(self, session_id: str, *, wait: bool = False) -> dict[str, Any]:
        """End the session in the background; the answer is {session_id, state} only (state
        ending, ended, or failed: call again to retry), nothing of what ending found."""
        return await self._record_call("session.end", {"session_id": session_id, "wait": wait})

    async def _record_call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.recorder is None:
            raise InvalidInputError(
                "This bridge has no recorder: open it with recorder_url and recorder_token."
            )
        result = await self.recorder.call_tool(name, arguments)
        text = text_of(result.content)
        if result.is_error:
            raise InvalidInputError(f"{name}: {text or 'failed'}")
        return dict(result.structured_content or {})

    # --- tool calls -----------------------------------------------------------------------------

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
