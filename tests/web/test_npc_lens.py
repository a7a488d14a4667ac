"""The NPC lens's pure parts: the hot context's prompt cut at its headings, and what the
answer of `memory.get_session_summary` says an NPC knows of a session."""

from __future__ import annotations

from datetime import UTC, datetime

from glyphoxa_mcp.domain.knowledge import Knowledge
from glyphoxa_mcp.domain.models import Session
from glyphoxa_mcp.views.results import SceneKnowledge, SessionSummaryResult
from glyphoxa_mcp.web.npc_lens import PromptSection, prompt_sections, session_known

SESSION = Session(
    campaign_id="c",
    id="s-1",
    title="The Crossing",
    started_at=None,
    ended_at=None,
    summary=None,
    summary_source=None,
)
AT = datetime(2026, 3, 14, 19, tzinfo=UTC)


def answered(scenes: list[SceneKnowledge] | None) -> SessionSummaryResult:
    return SessionSummaryResult(
        session_id="s-1",
        title=None,
        started_at=None,
        ended_at=None,
        summary=None,
        summary_source=None,
        entities=[],
        scope="npc:n",
        scenes=scenes,
    )


def scene(known: str, heard_from: str | None = None) -> SceneKnowledge:
    return SceneKnowledge(
        started_at=AT,
        title="The ferry",
        location=None,
        known=known,  # type: ignore[arg-type]
        heard_from=heard_from,
    )


def test_the_prompt_is_cut_at_its_headings() -> None:
    prompt = "## Who you are: Berrit\nBerrit\nfisherman\n\n## What was just said\n(nothing yet)"

    assert prompt_sections(prompt) == [
        PromptSection("Who you are: Berrit", "Berrit\nfisherman"),
        PromptSection("What was just said", "(nothing yet)"),
    ]
    assert prompt_sections("a refusal") == [PromptSection("", "a refusal")]
    assert prompt_sections("") == []


def test_a_whole_answer_is_all_of_it_witnessed_or_shared() -> None:
    witnessed = session_known(SESSION, answered(None), Knowledge.WITNESSED)
    shared = session_known(SESSION, answered(None), Knowledge.SHARED)

    assert (witnessed.known, witnessed.why) == ("all of it", "it was at every scene")
    assert (shared.known, shared.why) == (
        "all of it",
        "the campaign is shared: every NPC reads every line",
    )


def test_scenes_witnessed_heard_of_or_none() -> None:
    some = session_known(
        SESSION, answered([scene("witnessed"), scene("heard of", "Ysolde")]), Knowledge.WITNESSED
    )
    heard = session_known(
        SESSION,
        answered([scene("heard of", "Ysolde"), scene("heard of", "word going around")]),
        Knowledge.WITNESSED,
    )
    nothing = session_known(SESSION, answered([]), Knowledge.WITNESSED)
    withheld = session_known(SESSION, None, Knowledge.SHARED)

    assert (some.known, some.why, len(some.scenes)) == ("some scenes", "it was at 1 of them", 2)
    assert (heard.known, heard.why) == ("heard of", "from Ysolde and word going around")
    assert (nothing.known, nothing.scenes) == ("nothing", ())
    assert (withheld.known, withheld.why) == ("nothing", "the session is kept to the DM")
