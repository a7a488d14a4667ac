"""What a write reports back: a campaign file loaded, entities imported, a transcript
ingested and processed, a session ended, lines or a session kept to the DM, a line
forgotten, vectors made, a campaign forked or deleted, a session deleted. (pure)

The pipeline and the stores make these; the DM's desk (`desk/`) returns them to the
commands and pages that show them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from glyphoxa_mcp.domain.models import Entry, Session

# --- campaign files and imports ----------------------------------------------------------------

LoadKind = Literal["entity", "relationship", "fact"]
LoadAction = Literal["created", "updated", "unchanged"]


@dataclass(frozen=True)
class LoadChange:
    kind: LoadKind
    action: LoadAction
    label: str


@dataclass(frozen=True)
class LoadReport:
    campaign_id: str
    changes: tuple[LoadChange, ...]
    dry_run: bool

    def count(self, kind: LoadKind, action: LoadAction | None = None) -> int:
        return sum(1 for c in self.changes if c.kind == kind and action in (None, c.action))


@dataclass(frozen=True)
class ImportedEntity:
    name: str
    type: str
    action: LoadAction
    pending_id: int | None


@dataclass(frozen=True)
class ImportReport:
    campaign_id: str
    accepted: bool
    entities: tuple[ImportedEntity, ...]
    notes: tuple[str, ...]


# --- sessions ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class IngestReport:
    session_id: str
    read: int
    added: int
    scenes: int = 0


@dataclass(frozen=True)
class ProcessReport:
    session_id: str
    entries: int
    passages: int
    corrected: int
    embedded: int
    removed: int
    llm_failures: int = 0


@dataclass(frozen=True)
class ExtractionReport:
    entities_added: tuple[str, ...]
    entities_held: tuple[str, ...]
    relationships: int
    facts: int
    dropped: int
    mentioned: tuple[str, ...]


@dataclass(frozen=True)
class EndReport:
    session_id: str
    ended_at: datetime
    summary: str
    summary_source: Literal["llm", "extractive"]
    episode_id: str
    participants: tuple[str, ...]
    extraction: ExtractionReport | None = None
    mentioned: tuple[str, ...] = ()
    """Entities only named in the session (linked to its episode as mentioned, not taking
    part)."""
    llm_unreachable: str | None = None
    session_facts_cleared: tuple[str, ...] = ()


class HiddenLearning(BaseModel):
    """How many items of a session's learning were made DM-only (those already were are not
    counted)."""

    model_config = ConfigDict(frozen=True)

    episodes: int
    facts: int
    relationships: int


@dataclass(frozen=True)
class LinesMarked:
    lines: tuple[Entry, ...]
    summaries_rewritten: tuple[str, ...]
    """Sessions whose summary was written again from the lines every viewer may read."""
    waiting_for_llm: tuple[str, ...]
    """Of those, the sessions whose LLM summary `session end --retry-llm` should redo."""


@dataclass(frozen=True)
class SessionMarked:
    session: Session
    hidden: HiddenLearning | None


class LineForgotten(BaseModel):
    model_config = ConfigDict(frozen=True)

    campaign_id: str
    entry_id: int
    session_id: str
    passages_removed: int
    passages_added: int
    summary: Literal["rewritten", "kept", "none"]
    llm_pending: bool
    passages_pending: str | None = None


@dataclass(frozen=True)
class Embedded:
    """How many facts and relationships were given a vector."""

    facts: int = 0
    relationships: int = 0


# --- whole campaigns ---------------------------------------------------------------------------


class Fork(BaseModel):
    """A branch made: how many rows of each table it was given."""

    model_config = ConfigDict(frozen=True)

    campaign_id: str
    parent_id: str
    at_session: str | None
    sessions_left_out: tuple[str, ...]
    rows: dict[str, int]


BranchPolicy = Literal["refuse", "delete", "keep"]
"""What deleting a campaign does to its branches: refuses, deletes them, or keeps them."""


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True)


class CampaignSize(_Result):
    """What deleting a campaign would delete (for the question asked first)."""

    campaign_id: str
    sessions: int
    lines: int
    entities: int
    branches: tuple[str, ...]


class CampaignDeleted(_Result):
    campaign_id: str
    branches_deleted: tuple[str, ...]
    branches_kept: tuple[str, ...]
    sessions: int
    lines: int
    entities: int


class SessionDeleted(_Result):
    campaign_id: str
    session_id: str
    lines: int
    passages: int
    facts_deleted: int
    relationships_deleted: int
    facts_kept: int
    relationships_kept: int
    episode_deleted: bool
    proposals_deleted: int
