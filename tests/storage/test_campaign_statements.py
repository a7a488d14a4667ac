"""Every statement the stores send names its campaign, so on Citus (docs/scaling.md) each one
goes to the one shard holding that campaign instead of to every node.

The stores' main operations are driven here on connections that record every statement they
send (asyncpg's query logger; the embedded server has no pg_stat_statements): the sample
campaign loaded, a campaign of sessions and facts seeded and processed, a session recorded
live and ended, every read of the View for the DM and for an NPC, tokens, curation. The
distinct statements are written to a file of this run (named on failure); each one that
reads or writes a campaign's table must filter that table on `campaign_id`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import asyncpg
import pytest
from asyncpg.connection import LoggedQuery

from glyphoxa_mcp.app import App
from glyphoxa_mcp.config import Settings
from glyphoxa_mcp.db.database import Database, init_connection, keep_session
from glyphoxa_mcp.domain.models import NewEntity, NewSession, Visibility
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.recording.recorder import Recorder
from glyphoxa_mcp.recording.utterances import SpokenUtterance
from glyphoxa_mcp.storage import access_tokens, campaigns, status
from glyphoxa_mcp.storage.access_tokens import AccessTokens
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.limits import clamp
from glyphoxa_mcp.views.view import View
from tests.conftest import seed_spoken_village
from tests.server.http_serving import load_demo

TEN = clamp(10, 50)
ONE_HOP = clamp(1, 3)


def normalised(statement: str) -> str:
    return " ".join(statement.split())


# Statements that go across campaigns by design, each with why. On Citus they fan out to
# every shard: fine for an operator's command, never on a tool's path.
ACROSS_CAMPAIGNS = {
    normalised(campaigns.SELECT_CAMPAIGNS): "`campaign list`: every campaign, by its operator",
    normalised(status.CAMPAIGN_COUNTS): "`status`: every campaign's counts, by its operator",
    normalised(access_tokens.SELECT_FOR_REQUEST): (
        "a bearer token by its id: the token names its campaign (403 on another's path, "
        "the desk's sign-in without a campaign typed in)"
    ),
}
# A table reference: FROM/JOIN/UPDATE/INTO/USING, a name, then an alias unless a keyword.
TABLE_REFERENCE = re.compile(
    r"\b(FROM|JOIN|UPDATE|INTO|USING)\s+(?:ONLY\s+)?([a-z_][a-z0-9_]*)"
    r"(?:\s+(?:AS\s+)?([a-z_][a-z0-9_]*))?",
    re.IGNORECASE,
)
NOT_ALIASES = {
    "where", "join", "left", "right", "inner", "outer", "cross", "full", "on", "set", "using",
    "order", "group", "limit", "offset", "returning", "values", "select", "natural", "lateral",
    "union", "except", "intersect", "window", "having", "for", "default", "with",
}  # fmt: skip


def unscoped(statement: str, campaign_tables: set[str]) -> list[str]:
    """The references to a campaign's table in `statement` that no `campaign_id` filters
    (for `campaigns`, its `id`); empty when every one is. A reference is filtered when its
    alias's `a.campaign_id` is compared anywhere, or a bare `campaign_id` between it and the
    next table reference (SQL refuses a bare name two tables in scope share); an INSERT when
    its column list has `campaign_id`. Good enough for our SQL, whose names are never quoted."""
    missing = []
    references = [
        m for m in TABLE_REFERENCE.finditer(statement) if m.group(2).lower() not in NOT_ALIASES
    ]
    ends = [m.start() for m in references[1:]] + [len(statement)] * bool(references)
    for match, end in zip(references, ends, strict=True):
        keyword, table, alias = match.group(1).upper(), match.group(2), match.group(3)
        if table not in campaign_tables:
            continue
        if alias and alias.lower() in NOT_ALIASES:
            alias = None
        column = "id" if table == "campaigns" else "campaign_id"
        scope = statement[match.end() : end]
        if keyword == "INTO":
            columns = statement[match.end() : statement.find(")", match.end())]
            filtered = re.search(rf"\(\s*(?:[a-z_]+\s*,\s*)*{column}\b", columns) is not None
        else:
            filtered = compared(column, r"(?<![.\w])", scope) or (
                alias is not None and compared(column, rf"\b{alias}\.", statement)
            )
        if not filtered:
            missing.append(f"{keyword} {table}" + (f" {alias}" if alias else ""))
    return missing


def compared(column: str, prefix: str, text: str) -> bool:
    """Whether `text` compares the column (`prefix` qualifying it) with something: equal to,
    in, any of; a campaign's `id` only with a parameter (`c.id` in a correlated subquery
    filters the subquery, not the campaigns read)."""
    if column == "id":
        pattern = rf"{prefix}id\s*=\s*(?:\$|ANY\s*\(\s*\$)"
    else:
        pattern = rf"{prefix}{column}\s*(?:=|IN\b)|=\s*(?:ANY\s*\(\s*)?{prefix}{column}\b"
    return re.search(pattern, text, re.IGNORECASE) is not None


class StatementLog:
    """Every statement sent on the connections it is added to, counted."""

    def __init__(self) -> None:
        self.sent: Counter[str] = Counter()

    def __call__(self, logged: LoggedQuery) -> None:
        self.sent[normalised(logged.query)] += 1

    def write(self, path: Path) -> None:
        path.write_text(
            "".join(f"-- sent {n} times\n{s};\n\n" for s, n in sorted(self.sent.items())),
            encoding="utf-8",
        )


@pytest.fixture
async def recorded(db384: Database) -> AsyncIterator[tuple[Database, StatementLog]]:
    """A handle on the test's database whose connections log every statement."""
    log = StatementLog()

    async def init(conn: asyncpg.Connection) -> None:
        await init_connection(conn)
        conn.add_query_logger(log)

    pool = await asyncpg.create_pool(
        db384.location.dsn, min_size=1, max_size=4, init=init, reset=keep_session
    )
    try:
        yield Database(pool, db384.location, db384.embedding_dim), log
    finally:
        await pool.close()


async def campaign_tables(db: Database) -> set[str]:
    rows = await db.pool.fetch(
        "SELECT DISTINCT table_name FROM information_schema.columns "
        "WHERE table_schema = 'public' AND column_name = 'campaign_id'"
    )
    return {row["table_name"] for row in rows} | {"campaigns"}


async def drive_the_stores(db: Database, embedder: LocalMiniLMEmbedder) -> None:
    """The stores' main operations, as the tools, the recorder and the CLI use them."""
    demo = await load_demo(db)
    await campaigns.Campaigns(db).ensure("ashfall", "Ashfall")
    village = CampaignMemory(db, "ashfall")
    await village.sessions.upsert(NewSession(id="s1", title="The Red Kettle"))
    await seed_spoken_village(village, embedder)

    app = App(Settings(), db, embedder, chat=None)
    start = datetime(2026, 11, 20, 19, tzinfo=UTC)
    async with anyio.create_task_group() as tasks:
        recorder = Recorder(app, tasks)
        await recorder.start("ashfall", "live", title="Market night", started_at=start)
        await recorder.append(
            "ashfall",
            "live",
            [
                SpokenUtterance(
                    utterance_id=f"u{i}",
                    speaker_id="kael",
                    speaker_name="Kael",
                    text=text,
                    timestamp=start + timedelta(seconds=i),
                )
                for i, text in enumerate(
                    ["Grimjaw, is the forge cold?", "Mira says the bridge is out.", "Rain."]
                )
            ],
        )
        await recorder.set_fact("ashfall", "live", "disguise", "The party are merchants.", None)
        await recorder.searchable("ashfall", "live")
        await recorder.clear_facts("ashfall", "live", "disguise")
        ending = await recorder.end("ashfall", "live")
        with anyio.fail_after(120):
            await ending.done.wait()
        assert ending.state.state == "ended"
        tasks.cancel_scope.cancel()

    for view in (View(village, None, embedder), View(village, "mira", embedder)):
        await view.scope()
        await view.query_entities(TEN, ONE_HOP, name="Grimjaw")
        await view.query_entities(TEN, ONE_HOP, related_to="grimjaw")
        await view.search_sessions("where does the Cult meet", TEN)
        await view.search_sessions("forge", TEN, session_id="live", speaker="Kael")
        await view.session_summary("s1")
        await view.session_summary(sessions_ago=1)
        await view.search_facts("bridge rebuilt after the flood", TEN)
        await view.search_facts("owes", TEN, entity="grimjaw")
        await view.hot_context("mira", "live")
        await view.prefetch("mira", "Have you seen Grimjaw at the forge?")
        await view.speech_terms()
    await View(demo, "ysolde", embedder).hot_context("ysolde")

    fact = next(f for f in await village.graph.current_facts() if "bridge" in f.text)
    await village.curation.review_queue(0.7)
    await village.curation.confirm("fact", fact.id)
    retconned = await village.curation.retcon(fact.id, "The bridge was never rebuilt.")
    await village.curation.history(retconned.id)
    await village.curation.set_visibility("fact", retconned.id, Visibility(secret=True))
    relationship = (await village.graph.relationships_of("grimjaw"))[0]
    await village.curation.confirm("relationship", relationship.id)

    proposed = await village.pending.propose(
        "csv", "row-1", NewEntity(type=EntityType.NPC, name="Oswin the Ferryman")
    )
    await village.pending.list()
    await village.pending.take(proposed)
    lines = await village.log.entries("live")
    await village.log.set_dm_only([lines[0].id], True)
    await village.sessions.set_dm_only("s1", True)
    await village.graph.delete_entity("vask")
    await campaigns.Campaigns(db).delete("demo")

    tokens = AccessTokens(db)
    _, token = await tokens.create(Viewer.npc("ashfall", "mira"))
    (checked,) = await tokens.for_request(token.id)
    await tokens.touch(checked[0])
    await tokens.list("ashfall")
    await campaigns.Campaigns(db).list()
    await status.database_status(db)


@pytest.mark.slow
async def test_every_statement_the_stores_send_filters_on_its_campaign(
    recorded: tuple[Database, StatementLog],
    offline_embedder: LocalMiniLMEmbedder,
    tmp_path: Path,
) -> None:
    db, log = recorded
    await drive_the_stores(db, offline_embedder)
    tables = await campaign_tables(db)
    sent = tmp_path / "statements.sql"
    log.write(sent)

    touching = [s for s in log.sent if _names(s, tables)]
    assert len(touching) > 40, f"too few statements recorded to judge; see {sent}"
    unfiltered = {
        statement: unscoped(statement, tables)
        for statement in log.sent
        if statement not in ACROSS_CAMPAIGNS and unscoped(statement, tables)
    }
    assert unfiltered == {}, f"every statement sent is in {sent}"
    for allowed in ACROSS_CAMPAIGNS:
        assert allowed in log.sent, f"no longer sent, so no longer allowed: {allowed}"
        assert unscoped(allowed, tables), f"names its campaign now, so no longer allowed: {allowed}"


def _names(statement: str, tables: set[str]) -> bool:
    return any(m.group(2) in tables for m in TABLE_REFERENCE.finditer(statement))


@pytest.mark.parametrize(
    ("statement", "missing"),
    [
        ("SELECT * FROM facts f WHERE f.campaign_id = $1 AND f.id = $2", []),
        ("SELECT * FROM facts WHERE id = $1", ["FROM facts"]),
        ("UPDATE facts SET embedding = $2 WHERE id = $1", ["UPDATE facts"]),
        (
            "SELECT * FROM relationships r JOIN entities e ON e.id = r.target_id "
            "WHERE r.campaign_id = $1",
            ["JOIN entities e"],
        ),
        ("INSERT INTO chunks (campaign_id, content) VALUES ($1, $2)", []),
        ("INSERT INTO chunks (content) VALUES ($1)", ["INTO chunks"]),
        ("DELETE FROM campaigns WHERE id = $1", []),
        (
            "SELECT c.id, (SELECT count(*) FROM chunks x WHERE x.campaign_id = c.id) "
            "FROM campaigns c",
            ["FROM campaigns c"],
        ),
        ("SELECT campaign_id, count(*) FROM chunks GROUP BY campaign_id", ["FROM chunks"]),
        ("SELECT * FROM chunks WHERE $1::text IS NULL OR campaign_id = $1", []),
        ("SELECT version FROM glyphoxa_migrations", []),
        ("SELECT 1", []),
    ],
)
def test_the_check_names_each_table_read_without_its_campaign(
    statement: str, missing: list[str]
) -> None:
    tables = {"facts", "relationships", "entities", "chunks", "campaigns"}
    assert unscoped(statement, tables) == missing
