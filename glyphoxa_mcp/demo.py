"""`glyphoxa-mcp demo`: the bundled sample campaign, served and queried by a real MCP client."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mcp.client import Client

from glyphoxa_mcp.campaign.loader import load_campaign
from glyphoxa_mcp.campaign.sample import bundled
from glyphoxa_mcp.campaign.yaml_source import parse_campaign_file
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.session_summaries import SummaryPart, render_summary
from glyphoxa_mcp.domain.tiers import Tier, tier_policy
from glyphoxa_mcp.domain.wording import counted
from glyphoxa_mcp.mcp_text import text_of
from glyphoxa_mcp.pipeline.ingest import ingest_entries
from glyphoxa_mcp.pipeline.process import process_session
from glyphoxa_mcp.pipeline.transcripts import read_jsonl
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.server.subscriptions import HotSubscriptions
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View

DEMO_CAMPAIGN = "demo"
Printer = Callable[[str], None]


async def prepare(db: Database, embedder: Embedder, say: Printer) -> CampaignMemory:
    """Load the sample campaign and its two sessions; loading again changes nothing."""
    memory = CampaignMemory(db, DEMO_CAMPAIGN)
    file = parse_campaign_file(bundled("campaign.yaml"), "campaign.yaml")
    report = await load_campaign(db, file, DEMO_CAMPAIGN, embedder=embedder)
    say(
        f"Loaded campaign 'The Salt Road': {counted(report.count('entity'), 'entity')}, "
        f"{counted(report.count('relationship'), 'relationship')}, "
        f"{counted(report.count('fact'), 'fact')} "
        f"({sum(c.action != 'unchanged' for c in report.changes)} changed)."
    )
    for session in json.loads(bundled("sessions.json"))["sessions"]:
        transcript = read_jsonl(bundled(session["transcript"]).splitlines(), session["transcript"])
        entries = transcript.entries
        await ingest_entries(
            db,
            DEMO_CAMPAIGN,
            session["id"],
            entries,
            title=session["title"],
            scenes=transcript.scenes,
        )
        processed = await process_session(memory, embedder, session["id"])
        await memory.sessions.end(session["id"], entries[-1].spoken_at)
        # The sample's summaries are the DM's, written per scene: an NPC that was not at a
        # scene reads at most its gist, when word of it reached them.
        scenes = await memory.scenes.of_session(session["id"])
        parts = [
            SummaryPart(scene_started_at=scene.started_at, text=part["summary"], gist=part["gist"])
            for scene, part in zip(scenes, session["scenes"], strict=True)
        ]
        await memory.summary_parts.replace(session["id"], parts)
        await memory.sessions.set_summary(session["id"], render_summary(parts), "dm")
        say(
            f"Session '{session['title']}': {counted(processed.entries, 'utterance')} in "
            f"{counted(processed.passages, 'passage')}, embedded offline; "
            f"{counted(processed.corrected, 'misheard name')} put back."
        )
    return memory


def _client(memory: CampaignMemory, embedder: Embedder, tier: Tier, npc: str | None) -> Client:
    state = ServerState(View(memory, npc, embedder), tier_policy(tier))
    return Client(build_server(state, subscriptions=HotSubscriptions(memory, npc)))


async def _call(client: Client, tool: str, say: Printer, **arguments: Any) -> dict[str, Any]:
    say(f"\n> {tool}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})")
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        say(f"  error: {text_of(result.content)}")
        return {}
    return result.structured_content or {}


async def tour(memory: CampaignMemory, embedder: Embedder, say: Printer) -> None:
    say("\n== Tools each tier lists ==")
    for tier in Tier:
        async with _client(memory, embedder, tier, None) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
        say(f"{tier.value:9} {', '.join(names)}")

    say("\n== One call of each tool (STANDARD tier, the DM's view) ==")
    async with _client(memory, embedder, Tier.STANDARD, None) as client:
        found = await _call(client, "memory.query_entities", say, name="berit")
        for entity in found.get("entities", []):
            say(f"  {entity['name']} ({entity['type']}, matched {entity['match']})")
            for rel in entity["relationships"]:
                marks = " [secret]" if rel["secret"] else ""
                say(f"    - {rel['sentence']}{marks}")
        passages = await _call(
            client, "memory.search_sessions", say, query="Where was the caravan last seen?", top_k=2
        )
        for hit in passages.get("results", []):
            say(f"  [{hit['session_title']}, found by {' and '.join(hit['matched_by'])}]")
            for line in hit["text"].splitlines():
                say(f"    {line}")
        summary = await _call(client, "memory.get_session_summary", say, sessions_ago=1)
        if summary:
            say(f"  {summary['title']} ({summary['ended_at'][:10]}): {summary['summary']}")
            say(f"  involved: {', '.join(e['name'] for e in summary['entities'])}")
        facts = await _call(client, "memory.search_facts", say, query="caravan crossing", top_k=3)
        for hit in facts.get("results", []):
            rumour = " (unconfirmed)" if hit["provenance"]["unconfirmed"] else ""
            say(f"  - {hit['text']}{rumour}")

    say("\n== Secrets stay with those who know them ==")
    for npc in ("ysolde", "berrit"):
        async with _client(memory, embedder, Tier.FAST, npc) as client:
            seen = await _call(client, "memory.query_entities", say, name="Salt Knives")
        names = [e["name"] for e in seen.get("entities", [])]
        say(f"  as {npc}: {names or 'nothing - the Salt Knives are a secret'}")

    say("\n== Who knows what: the Crossing, where only Captain Ysolde was ==")
    say(
        "  (The campaign is witnessed: an NPC reads the scenes it was present in; word of a\n"
        "  scene reaches those tied to a witness, as a rumour, never as its lines.)"
    )
    for npc, who in (
        ("ysolde", "was there"),
        ("brannoch", "knows Ysolde"),
        ("berrit", "was not there"),
    ):
        async with _client(memory, embedder, Tier.STANDARD, npc) as client:
            heard = await _call(
                client, "memory.search_sessions", say, query="wagon ruts salt caves", top_k=3
            )
            crossing = await _call(
                client, "memory.get_session_summary", say, session_id="session-2"
            )
        lines = [h for h in heard.get("results", []) if h.get("session_id") == "session-2"]
        say(f"  as {npc} ({who}): {len(lines)} passages of the Crossing found")
        say(f"    summary: {crossing.get('summary') or crossing.get('note')}")

    say("\n== Hot context for Brannoch (glyphoxa://npc/brannoch/hot) ==")
    async with _client(memory, embedder, Tier.FAST, None) as client:
        hot = await client.read_resource("glyphoxa://npc/brannoch/hot")
    context = json.loads(text_of(hot.contents))
    say(context["prompt"])
