"""The recorder endpoint's MCP server: tools for the program that hears the table (a voice
bridge), never listed to an NPC or the DM.

    session.start          open a session (or give it a title or an earlier start)
    transcript.append      store utterances as they are spoken, names put back
    session.end            end it as `glyphoxa-mcp session end` does, in the background
    session_facts.set      a fact of this session only, for every NPC or one
    session_facts.clear    remove one, or all of them
    scene.set              a scene starts: where, and the NPCs present

Calls under the underscore spelling work too; the listing uses the server's style.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import AwareDatetime, BaseModel, Field

from glyphoxa_mcp import __version__
from glyphoxa_mcp.domain.models import MAX_NAME_CHARS, SessionFact
from glyphoxa_mcp.domain.scenes import MAX_PRESENT, SceneMarker
from glyphoxa_mcp.domain.tool_names import (
    NameStyle,
    RecorderToolName,
    advertised,
    canonical_recorder,
)
from glyphoxa_mcp.domain.vocabulary import KEY_PATTERN
from glyphoxa_mcp.errors import MemoryUnavailableError
from glyphoxa_mcp.recording.recorder import EndState, Recorder
from glyphoxa_mcp.recording.utterances import (
    MAX_UTTERANCES_PER_CALL,
    SpokenUtterance,
)
from glyphoxa_mcp.server.argument_gate import ArgumentGate
from glyphoxa_mcp.server.client_logging import ClientLogging
from glyphoxa_mcp.server.outcomes import is_bug, outcome, told
from glyphoxa_mcp.server.tier_gate import relisted
from glyphoxa_mcp.server.tool_arguments import checked_tool, strict_arguments
from glyphoxa_mcp.server.wire import as_wire

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Records a tabletop RPG session while it is played: start the session, append each "
    "utterance as speech-to-text hears it, set facts that hold for this session only, and "
    "end it when the table stops."
)
SessionId = Annotated[
    str, Field(description="The session's id (letters, digits, - _ . :).", pattern=KEY_PATTERN)
]
FactKey = Annotated[
    str, Field(description="Names the fact: setting it again replaces it.", pattern=KEY_PATTERN)
]


@dataclass(frozen=True)
class RecorderState:
    recorder: Recorder
    campaign: str
    client_logging: ClientLogging


@contextlib.contextmanager
def recorder_errors(tool: RecorderToolName) -> Iterator[None]:
    """Every failure of a recorder's call becomes one sentence saying what happened and
    whether and when to call again, never the SDK's bare "Error executing tool": a write not
    confirmed by its deadline says what to resend (its own message); a database out of reach
    says to try again; the caller's mistakes say what to fix; anything else is logged for the
    DM and answered as the server's own failure."""
    try:
        yield
    except Exception as exc:
        error = outcome(exc)
        if is_bug(exc, error):
            log.exception("%s failed", tool.value)
            raise ToolError(internal_failure(tool.value)) from exc
        if isinstance(error, MemoryUnavailableError):
            raise ToolError(f"{error.message} Nothing was stored by this call.") from exc
        raise ToolError(told(error)) from exc


def internal_failure(tool: str) -> str:
    return (
        f"{tool} failed inside the server (its log says why, for the DM); call it again once "
        "in a moment (a resend is safe), and if it fails again, retrying will not help."
    )


async def plain_errors(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """A tool's error as its own sentence: the SDK's "Error executing tool NAME: " goes, and
    a crash the SDK answered with that prefix alone says what `internal_failure` says."""
    result = await call_next(ctx)
    if ctx.method != "tools/call" or not isinstance(ctx.params, dict):
        return result
    wire = as_wire(result)
    if not isinstance(wire, dict) or not wire.get("isError"):
        return result
    name = str(ctx.params.get("name", ""))
    prefix = f"Error executing tool {name}"
    content = []
    for block in wire.get("content") or []:
        text = block.get("text") if isinstance(block, dict) else None
        if isinstance(text, str) and text.startswith(prefix):
            rest = text[len(prefix) :].removeprefix(":").strip()
            block = {**block, "text": rest or internal_failure(name)}
        content.append(block)
    return {**wire, "content": content}


def _state(ctx: Context[Any, Any]) -> RecorderState:
    state = ctx.request_context.lifespan_context
    assert isinstance(state, RecorderState), "the recorder's lifespan must yield its state"
    return state


class StartedSession(BaseModel):
    """That the session is open, and nothing of what it holds: a recorder reads nothing, and
    an existing session may be the DM's own."""

    session_id: str
    new: bool = Field(description="False: the session existed already.")


class AcknowledgedUtterance(BaseModel):
    """That an utterance is stored, by the id it was sent with, and nothing of how it was
    stored: its corrected text would tell which names the campaign holds, secret ones too
    (a recorder reads nothing)."""

    utterance_id: str | None
    new: bool = Field(description="True: stored by this call; false: stored before.")


class AppendResult(BaseModel):
    session_id: str
    new: int = Field(description="How many of the utterances were not stored before.")
    utterances: list[AcknowledgedUtterance]


class ClearedFacts(BaseModel):
    """That the clearing was done, and nothing of what there was to clear: a recorder reads
    nothing, and a session's facts may be the DM's."""

    session_id: str
    key: str | None = Field(description="The fact cleared, as asked; null: every fact.")
    cleared: Literal[True] = Field(
        default=True, description="True: none is left (clearing one not there is done too)."
    )


Present = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]],
    Field(
        description="The NPCs present, by id, name or alias (the players always are).",
        max_length=MAX_PRESENT,
    ),
]
Location = Annotated[
    str | None,
    Field(description="Where, by id, name or alias of a location.", max_length=MAX_NAME_CHARS),
]


async def session_start(
    ctx: Context[Any, Any],
    session_id: SessionId,
    title: Annotated[str | None, Field(description="The session's title.", max_length=200)] = None,
    started_at: Annotated[
        AwareDatetime | None,
        Field(description="When it began (ISO 8601 with offset); now when left out."),
    ] = None,
    present: Present | None = None,
    location: Location = None,
) -> StartedSession:
    state = _state(ctx)
    with recorder_errors(RecorderToolName.SESSION_START):
        new = await state.recorder.start(
            state.campaign, session_id, title=title, started_at=started_at
        )
        if present is not None or location is not None:
            opening = SceneMarker(present=tuple(present or ()), location=location)
            await state.recorder.set_scene(state.campaign, session_id, opening, started_at)
    return StartedSession(session_id=session_id, new=new)


class SceneSet(BaseModel):
    """That the scene is set, and when it starts: nothing of what the names matched."""

    session_id: str
    started_at: AwareDatetime


async def scene_set(
    ctx: Context[Any, Any],
    session_id: SessionId,
    present: Present,
    location: Location = None,
    title: Annotated[
        str | None, Field(description="A title for the scene.", min_length=1, max_length=200)
    ] = None,
    at: Annotated[
        AwareDatetime | None,
        Field(description="When it starts (ISO 8601 with offset); now when left out."),
    ] = None,
) -> SceneSet:
    state = _state(ctx)
    marker = SceneMarker(present=tuple(present), location=location, title=title)
    with recorder_errors(RecorderToolName.SCENE_SET):
        scene = await state.recorder.set_scene(state.campaign, session_id, marker, at)
    return SceneSet(session_id=session_id, started_at=scene.started_at)


async def transcript_append(
    ctx: Context[Any, Any],
    session_id: SessionId,
    utterances: Annotated[
        list[SpokenUtterance],
        Field(
            description="One or more utterances, in the order they were spoken.",
            min_length=1,
            max_length=MAX_UTTERANCES_PER_CALL,
        ),
    ],
) -> AppendResult:
    state = _state(ctx)
    with recorder_errors(RecorderToolName.TRANSCRIPT_APPEND):
        recorded = await state.recorder.append(state.campaign, session_id, utterances)
    return AppendResult(
        session_id=session_id,
        new=sum(r.new for r in recorded),
        utterances=[
            AcknowledgedUtterance(utterance_id=r.utterance_id, new=r.new) for r in recorded
        ],
    )


async def session_end(
    ctx: Context[Any, Any],
    session_id: SessionId,
    wait: Annotated[
        bool,
        Field(description="Answer when the session has ended, not at once (can take minutes)."),
    ] = False,
) -> EndState:
    state = _state(ctx)
    session = ctx.request_context.session

    async def tell(ended: EndState) -> None:
        # Nothing of what ending found (who took part, the summary's source, why it failed):
        # a recorder reads nothing; the server's log has it for the DM.
        if ended.state == "ended":
            message = f"Session {ended.session_id!r} has ended."
        else:
            message = (
                f"Ending session {ended.session_id!r} failed (the server's log says why); "
                "call session.end again to retry."
            )
        await state.client_logging.send(
            session, "info" if ended.state == "ended" else "error", message
        )

    with recorder_errors(RecorderToolName.SESSION_END):
        ending = await state.recorder.end(state.campaign, session_id, on_done=tell)
    if wait:
        await ending.done.wait()
    return ending.state


async def session_facts_set(
    ctx: Context[Any, Any],
    session_id: SessionId,
    key: FactKey,
    text: Annotated[
        str, Field(description="The fact, one sentence.", min_length=1, max_length=2000)
    ],
    npc_id: Annotated[
        str | None,
        Field(
            description="Only this NPC is shown it; leave out for every NPC.", pattern=KEY_PATTERN
        ),
    ] = None,
) -> SessionFact:
    state = _state(ctx)
    with recorder_errors(RecorderToolName.SESSION_FACTS_SET):
        return await state.recorder.set_fact(state.campaign, session_id, key, text, npc_id)


async def session_facts_clear(
    ctx: Context[Any, Any],
    session_id: SessionId,
    key: Annotated[
        str | None,
        Field(description="The fact to remove; leave out to remove all.", pattern=KEY_PATTERN),
    ] = None,
) -> ClearedFacts:
    state = _state(ctx)
    with recorder_errors(RecorderToolName.SESSION_FACTS_CLEAR):
        await state.recorder.clear_facts(state.campaign, session_id, key)
    return ClearedFacts(session_id=session_id, key=key)


TOOLS = (
    (RecorderToolName.SESSION_START, session_start, "Start a session"),
    (RecorderToolName.TRANSCRIPT_APPEND, transcript_append, "Append utterances"),
    (RecorderToolName.SESSION_END, session_end, "End a session"),
    (RecorderToolName.SESSION_FACTS_SET, session_facts_set, "Set a session fact"),
    (RecorderToolName.SESSION_FACTS_CLEAR, session_facts_clear, "Clear session facts"),
    (RecorderToolName.SCENE_SET, scene_set, "Set the scene"),
)
DESCRIPTIONS = {
    RecorderToolName.TRANSCRIPT_APPEND: "Store utterances as speech-to-text hears them, all "
    "or none. Misheard campaign names are put back; each utterance comes back as its "
    "utterance_id and whether this call stored it (new), nothing of what was stored; one "
    "sent before (same utterance_id, or same time, speaker and words) stores nothing. NPCs see a "
    "line in their hot context at once and find it by search within seconds.",
    RecorderToolName.SESSION_END: "End the session: index, summarise and remember it as an "
    "episode (as `glyphoxa-mcp session end`), in the background; its session facts are "
    "cleared. Answers how far it got (ending, ended, failed) and nothing of what it found; "
    "call again while it runs to see, or pass wait=true. Call again after failed to retry.",
    RecorderToolName.SESSION_FACTS_SET: "A fact that holds for this session only (a "
    "disguise, a truce): shown under 'This session' in the hot context of every NPC, or of "
    "npc_id alone, until the session ends.",
    RecorderToolName.SESSION_FACTS_CLEAR: "Remove a session fact by key, or all of them. "
    "Answers that it is done and nothing of what there was (one not there is cleared too).",
    RecorderToolName.SCENE_SET: "A scene starts (now, or at `at`): the NPCs present and, if "
    "known, where. The lines spoken from then on belong to it, until the next scene. Call it "
    "as NPCs join or leave the table's voice session; setting a scene at the same time again "
    "replaces it. Answers when it starts, nothing of what the names matched.",
    RecorderToolName.SESSION_START: "Open a session before appending to it. Again: gives it "
    "a title or an earlier start; nothing else changes. With present (and location), its "
    "opening scene is set too, as scene.set would. Answers whether it is new, nothing of "
    "what it holds.",
}


class RecorderNames:
    """Lists the tools in the server's name style and accepts calls under either spelling."""

    def __init__(self, style: NameStyle) -> None:
        self.style = style

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method == "tools/call" and isinstance(ctx.params, dict):
            tool = canonical_recorder(str(ctx.params.get("name", "")))
            if tool is not None:
                ctx = dataclasses.replace(ctx, params={**ctx.params, "name": tool.value})
            return await call_next(ctx)
        result = await call_next(ctx)
        if ctx.method != "tools/list":
            return result

        def shown(name: str) -> str:
            tool = canonical_recorder(name)
            return advertised(tool, self.style) if tool is not None else name

        return relisted(result, shown)


WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
# Each tool's arguments with unknown names refused, checked before the SDK reads them.
RECORDER_ARGUMENTS = {name.value: strict_arguments(function) for name, function, _ in TOOLS}


def build_recorder_server(
    recorder: Recorder, campaign: str, style: NameStyle = NameStyle.DOTTED
) -> MCPServer:
    client_logging = ClientLogging()
    state = RecorderState(recorder, campaign, client_logging)

    @contextlib.asynccontextmanager
    async def lifespan(_server: MCPServer) -> AsyncIterator[RecorderState]:
        yield state

    server = MCPServer(
        "glyphoxa-recorder",
        title=f"Glyphoxa recorder ({campaign})",
        instructions=INSTRUCTIONS,
        version=__version__,
        lifespan=lifespan,
        middleware=[RecorderNames(style), plain_errors, ArgumentGate(RECORDER_ARGUMENTS)],
        tools=[
            checked_tool(
                function,
                RECORDER_ARGUMENTS[name.value],
                name.value,
                title=title,
                description=DESCRIPTIONS[name],
                annotations=WRITES,
            )
            for name, function, title in TOOLS
        ],
    )
    client_logging.attach(server)
    return server
