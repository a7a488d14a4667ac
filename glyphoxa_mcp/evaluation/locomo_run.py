"""Running LoCoMo through the product: the real pipeline in, the real search tool out.

Each conversation becomes its own campaign (sessions with their dates, turns as entries,
speakers as speakers), is ingested and processed like any transcript, and every question is
asked through `memory.search_sessions` on an in-memory MCP client, so what is measured is
what a model calling the tool gets.
"""

from __future__ import annotations

import atexit
import contextlib
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path

import anyio
from mcp.client import Client
from pydantic import BaseModel, Field

from glyphoxa_mcp.app import App, open_app
from glyphoxa_mcp.config import DatabaseSettings, Settings
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.embedded import start_embedded_server
from glyphoxa_mcp.domain.tiers import Tier, tier_policy
from glyphoxa_mcp.domain.tool_names import ToolName
from glyphoxa_mcp.errors import ConfigurationError, GlyphoxaError
from glyphoxa_mcp.evaluation.generalisation import (
    ConversationRow,
    Fold,
    ScoredOutcome,
    Spread,
    leave_one_out,
    per_conversation,
    spread,
)
from glyphoxa_mcp.evaluation.locomo import Conversation, session_entries
from glyphoxa_mcp.evaluation.recall import (
    KS,
    RecallRow,
    ScoredQuestion,
    score_question,
    summarise,
    turns_in_order,
)
from glyphoxa_mcp.mcp_text import text_of
from glyphoxa_mcp.pipeline.ingest import ingest_entries
from glyphoxa_mcp.pipeline.process import process_session
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.recall.search_tuning import SHIPPED_TUNING, SessionSearchTuning
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.results import SearchSessionsResult
from glyphoxa_mcp.views.view import View

# STANDARD returns up to 20 passages, and 20 passages hold at least 20 distinct turns (the tool
# never returns a passage whose turns were all returned before), enough for recall@20.
TOP_K = max(KS)
# Recall should not depend on how busy the machine is: the tier's rules, not its deadline.
DEADLINE_MS = 120_000
SHIPPED = "shipped"

Say = Callable[[str], None]


class QuestionOutcome(ScoredOutcome):
    question: str
    evidence: list[str]


class LocomoReport(BaseModel):
    dataset: str
    conversations: int
    turns: int
    passages: int
    questions: int
    unscored: int
    tier: str
    top_k: int
    embedder: str
    load_seconds: float
    search_seconds: float
    rows: list[RecallRow]
    conversation_rows: list[ConversationRow]
    spread: Spread
    settings: dict[str, SessionSearchTuning]
    folds: list[Fold]
    outcomes: list[QuestionOutcome] = Field(description="The shipped setting's, one a question.")


@contextlib.asynccontextmanager
async def scratch_app(settings: Settings) -> AsyncIterator[App]:
    """The application over the database at the settings' DSN, or over a new embedded one in
    a temporary directory, deleted at exit, so that an evaluation never touches the user's
    memory (the settings' data directory is not used)."""
    database = settings.database
    if database.dsn is None:
        data_dir = Path(tempfile.mkdtemp(prefix="glyphoxa-eval-"))
        # Registered before pgserver's handler, so it runs after the server has stopped.
        atexit.register(shutil.rmtree, data_dir, True)
        await anyio.to_thread.run_sync(lambda: start_embedded_server(data_dir, delete_on_exit=True))
        database = DatabaseSettings.build(data_dir=data_dir, embedding_dim=database.embedding_dim)
    async with open_app(
        settings.model_copy(update={"database": database}), max_connections=2
    ) as app:
        yield app


async def load_conversation(
    db: Database, conversation: Conversation, embedder: Embedder
) -> tuple[CampaignMemory, dict[int, str], int]:
    """Ingest and process a conversation as a new campaign; returns its memory, the dia_id of
    each stored entry and the number of passages."""
    campaigns = Campaigns(db)
    if any(c.id == conversation.campaign_id for c in await campaigns.list()):
        raise ConfigurationError(
            f"Campaign {conversation.campaign_id!r} already exists in this database; evaluate "
            "into an empty one (leave out --dsn for a temporary database)."
        )
    await campaigns.ensure(conversation.campaign_id, f"LoCoMo {conversation.sample_id}")
    memory = CampaignMemory(db, conversation.campaign_id)
    turn_of: dict[int, str] = {}
    passages = 0
    for session in conversation.sessions:
        await ingest_entries(
            db,
            conversation.campaign_id,
            session.id,
            session_entries(session),
            title=session.date_time,
        )
        stored = await memory.log.entries(session.id)
        turn_of.update(
            {entry.id: turn.dia_id for entry, turn in zip(stored, session.turns, strict=True)}
        )
        passages += (await process_session(memory, embedder, session.id)).passages
    return memory, turn_of, passages


async def ask(client: Client, question: str) -> SearchSessionsResult:
    result = await client.call_tool(
        ToolName.SEARCH_SESSIONS.value, {"query": question, "top_k": TOP_K}
    )
    if result.is_error:
        text = text_of(result.content) or "no message"
        raise GlyphoxaError(f"memory.search_sessions failed on {question!r}: {text}")
    return SearchSessionsResult.model_validate(result.structured_content)


async def evaluate(
    db: Database,
    conversations: Sequence[Conversation],
    embedder: Embedder,
    dataset: str,
    say: Say | None = None,
    settings: Mapping[str, SessionSearchTuning] | None = None,
) -> LocomoReport:
    """Recall of every question under each setting (the shipped one if none are given,
    and always beside them), with a leave-one-conversation-out fold per conversation when
    several are compared."""
    settings = {SHIPPED: SHIPPED_TUNING, **(settings or {})}
    by_setting: dict[str, list[QuestionOutcome]] = {name: [] for name in settings}
    turns = passages = unscored = 0
    load_seconds = search_seconds = 0.0
    policy = tier_policy(Tier.STANDARD, DEADLINE_MS)
    for conversation in conversations:
        started = time.perf_counter()
        memory, turn_of, cut = await load_conversation(db, conversation, embedder)
        load_seconds += time.perf_counter() - started
        turns, passages = turns + len(turn_of), passages + cut
        if say is not None:
            say(f"{conversation.sample_id}: {len(turn_of)} turns in {cut} passages; asking")
        known = conversation.turn_ids
        answerable = [q for q in conversation.questions if set(q.evidence) & known]
        unscored += len(conversation.questions) - len(answerable)
        for name, tuning in settings.items():
            view = View(memory, None, embedder, search_tuning=tuning)
            started = time.perf_counter()
            async with Client(build_server(ServerState(view, policy))) as client:
                for question in answerable:
                    evidence = [turn for turn in question.evidence if turn in known]
                    found = await ask(client, question.question)
                    returned = turns_in_order(
                        [turn_of[entry_id] for entry_id in hit.entry_ids] for hit in found.results
                    )
                    scored = score_question(question.category, evidence, returned)
                    by_setting[name].append(
                        QuestionOutcome(
                            conversation=conversation.sample_id,
                            question=question.question,
                            category=question.category,
                            evidence=evidence,
                            ranks=list(scored.ranks),
                        )
                    )
            if name == SHIPPED:
                search_seconds += time.perf_counter() - started
    outcomes = by_setting[SHIPPED]
    conversation_rows = per_conversation(outcomes)
    return LocomoReport(
        dataset=dataset,
        conversations=len(conversations),
        turns=turns,
        passages=passages,
        questions=len(outcomes),
        unscored=unscored,
        tier=policy.tier.value,
        top_k=TOP_K,
        embedder=embedder.model,
        load_seconds=round(load_seconds, 2),
        search_seconds=round(search_seconds, 2),
        rows=summarise([ScoredQuestion(o.category, tuple(o.ranks)) for o in outcomes]),
        conversation_rows=conversation_rows,
        spread=spread(conversation_rows),
        settings=settings,
        folds=leave_one_out(by_setting, SHIPPED)
        if len(settings) > 1 and len(conversation_rows) > 1
        else [],
        outcomes=outcomes,
    )
