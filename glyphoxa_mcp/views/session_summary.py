"""A past session's summary, title and entities, in a viewer's scope."""

from __future__ import annotations

from collections.abc import Awaitable

from glyphoxa_mcp.concurrency import concurrently
from glyphoxa_mcp.domain.knowledge import Knowledge
from glyphoxa_mcp.domain.models import EntityLabel, Session
from glyphoxa_mcp.domain.scenes import SceneKnown, known_scenes
from glyphoxa_mcp.domain.session_summaries import PART_SEPARATOR, SummaryPart
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.arguments import present, quoted
from glyphoxa_mcp.views.limits import MAX_SESSIONS_AGO
from glyphoxa_mcp.views.reading import WORD_GOING_AROUND, Reader, Reading
from glyphoxa_mcp.views.results import EntityRef, SceneKnowledge, SessionSummaryResult
from glyphoxa_mcp.views.scope import Scope

LISTED_IDS = 10


async def session_summary(
    reader: Reader, session_id: str | None, sessions_ago: int | None
) -> SessionSummaryResult:
    if session_id is not None and sessions_ago is not None:
        raise InvalidInputError("Give session_id or sessions_ago, not both.", field="sessions_ago")
    session_id = present(session_id, "session_id")
    if sessions_ago is not None and sessions_ago > MAX_SESSIONS_AGO:
        raise InvalidInputError(
            f"sessions_ago must be at most {MAX_SESSIONS_AGO}.", field="sessions_ago"
        )
    reading = await reader.reading()
    scope, memory = reading.scope, reading.memory
    npc_id = reading.npc_id

    async def witnessed() -> bool:
        """Whether an NPC reads this campaign as a witness (the DM reads it all). Changing
        the campaign's rule moves the knowledge counter (sql/032)."""
        if npc_id is None:
            return False

        async def rule() -> Knowledge:
            return (await memory.campaign()).knowledge

        kept = await memory.knowledge_parts.get(
            ("knowledge rule",), rule, reading.knowledge_version
        )
        return kept is Knowledge.WITNESSED

    async def involved_by_id() -> list[EntityLabel] | None:
        """The DM's entities of a session asked for by id, read beside the session itself:
        the DM may read every session. An NPC's wait until the session is known to be one
        it may read, so that one it may not is answered after the same statements as one
        that does not exist."""
        if npc_id is not None or session_id is None:
            return None
        return await memory.queries.session_entities(session_id, None)

    # Reads that do not wait on each other go side by side: a call's reads in sequence each
    # wait their turn in a busy server's event loop.
    session, by_witness, involved_already = await concurrently(
        lambda: _the_session(reading, session_id, sessions_ago), witnessed, involved_by_id
    )
    redactor = scope.redactor
    summary = redactor.redact(session.summary) if session.summary is not None else None
    scenes: list[SceneKnowledge] | None = None

    def involved_entities() -> Awaitable[list[EntityLabel]]:
        return memory.queries.session_entities(session.id, npc_id)

    if involved_already is not None:
        involved = involved_already
    elif by_witness:
        known, parts, involved = await concurrently(
            lambda: _known_scenes(memory, session.id, npc_id or ""),
            lambda: memory.summary_parts.parts_of(session.id),
            involved_entities,
        )
        if not all(k.witnessed and not k.missed for k in known):
            # Not wholly there: the session's summary would tell what it did not witness.
            # Its parts say what it may know: the scenes it was at and heard all of, the
            # gist of those it heard of (a DM's own summary has no parts: nothing of it is
            # shown; nor is the part of a scene where the DM kept a line from it).
            told = _told(known, parts, scope)
            summary = redactor.redact(told) if told else None
            scenes = [_scene_view(k, scope) for k in known if k.witnessed or k.heard]
    else:
        involved = await involved_entities()
    title = session.title
    if title is not None and redactor.mentions_hidden(title):
        title = None
    entities = [scope.by_id[e.id] for e in involved if e.id in scope.by_id]
    note = None
    if scenes is not None and scenes and all(s.known == "witnessed" for s in scenes):
        note = (
            "Not everything said at this session reached you: it shows the scenes you heard "
            "whole. memory.search_sessions finds what you heard said."
        )
    elif scenes is not None:
        note = (
            "You were not at every scene of this session: it shows the scenes you witnessed and "
            "those you heard of. memory.search_sessions finds what you heard said."
            if scenes
            else "Nothing of this session reached you: you were at none of its scenes, and no "
            "word of them came to you."
        )
    elif session.summary is None:
        note = (
            "This session has no summary yet; it is written when the session ends. "
            "memory.search_sessions finds what was said in it."
        )
    return SessionSummaryResult(
        session_id=session.id,
        title=title,
        started_at=session.started_at,
        ended_at=session.ended_at,
        summary=summary or None,
        summary_source=session.summary_source,
        entities=[EntityRef(id=e.id, name=e.name, type=e.type.value) for e in entities],
        scope=reading.label,
        scenes=scenes,
        note=note,
    )


async def _the_session(
    reading: Reading, session_id: str | None, sessions_ago: int | None
) -> Session:
    """The session asked for, by id or by how many finished sessions ago, when the viewer
    may read it."""
    withheld = await reading.withheld_sessions()
    if session_id is not None:
        return await known_session(
            reading.memory, session_id, withheld, npc=reading.npc_id is not None
        )
    try:
        return await reading.memory.sessions.finished(
            1 if sessions_ago is None else sessions_ago, skipping=withheld
        )
    except NotFoundError as exc:
        raise NotFoundError(f"sessions_ago goes back too far: {exc}") from None


async def _known_scenes(memory: CampaignMemory, session_id: str, npc_id: str) -> list[SceneKnown]:
    scenes, spoken = await concurrently(
        lambda: memory.scenes.of_session(session_id, word_of=npc_id),
        lambda: memory.log.spoken_by(session_id, npc_id),
    )
    return known_scenes(scenes, npc_id, spoken)


def _told(known: list[SceneKnown], parts: list[SummaryPart], scope: Scope) -> str:
    """What an NPC may read of a session's summary: the parts of the scenes it witnessed
    and heard every line of, and of those it heard of, their gist, said to be hearsay; none
    of a scene with a line the DM kept from it (the part and the gist were written from
    every line)."""
    by_start = {part.scene_started_at: part for part in parts}
    told = []
    for scene in known:
        part = by_start.get(scene.scene.started_at if scene.scene else None)
        if part is None or scene.missed:
            continue
        if scene.witnessed:
            told.append(part.text)
        elif scene.heard:
            teller = scope.by_id.get(scene.teller) if scene.teller else None
            source = f"{teller.name} told you" if teller else "Word going around"
            told.append(f"{source} (you were not there): {part.gist}")
    return PART_SEPARATOR.join(told)


def _scene_view(known: SceneKnown, scope: Scope) -> SceneKnowledge:
    scene = known.scene
    location = scope.by_id.get(scene.location_id) if scene and scene.location_id else None
    teller = scope.by_id.get(known.teller) if known.teller else None
    title = scene.title if scene else None
    if title is not None and scope.redactor.mentions_hidden(title):
        title = None
    return SceneKnowledge(
        started_at=scene.started_at if scene else None,
        title=title,
        location=location.name if location else None,
        known="witnessed" if known.witnessed else "heard of",
        heard_from=None if known.witnessed else (teller.name if teller else WORD_GOING_AROUND),
    )


async def known_session(
    memory: CampaignMemory,
    session_id: str,
    withheld: frozenset[str],
    field: str = "session_id",
    *,
    npc: bool,
) -> Session:
    """The session, when a viewer may read it (`withheld`: its `withheld_sessions()`;
    `npc`: the viewer is an NPC); otherwise the same error as for a session that does not
    exist, naming the argument (`field`) it came in, whose hint lists only sessions the
    viewer may read. The DM-only flags are also judged as read here: `withheld` is as of
    the call's counter, and a session made DM-only since is the DM's all the same."""
    session = await memory.sessions.readable(session_id, withheld, npc=npc)
    if session is not None:
        return session
    every = await memory.sessions.dm_only_by_id()
    known = [s for s, dm_only in every.items() if s not in withheld and not (npc and dm_only)]
    recent = known[-LISTED_IDS:]
    hint = (
        f"Known sessions (latest {len(recent)}): {', '.join(recent)}; or use sessions_ago."
        if recent
        else "This campaign has no sessions yet."
    )
    raise NotFoundError(f"No session {quoted(session_id)} ({field}). {hint}")
