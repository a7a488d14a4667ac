"""The campaign file: entities, relationships and facts as a DM writes them. (pure)

References use names, aliases or ids; visibility is `known_by: [NPC names]` and `secret`.
A relationship type is a built-in one or one the file declares under `relationship_types`.
A file read from text (yaml_source.py) knows where each of its values stands, so every
problem found later, such as a name that matches no entity, is reported at its place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from glyphoxa_mcp.campaign.problems import Path, Problem, field_name
from glyphoxa_mcp.domain.models import Confidence, Key, Name
from glyphoxa_mcp.domain.vocabulary import EntityType


class Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Visible(Strict):
    known_by: tuple[str, ...] = Field(default=(), description="Names or ids of the NPCs who know.")
    secret: bool = False


class EntityEntry(Visible):
    name: Name
    type: EntityType
    id: Key | None = None
    aliases: tuple[Name, ...] = ()
    attributes: dict[str, Any] = Field(default_factory=dict)


class RelationshipEntry(Visible):
    source: str
    type: Annotated[str, Field(min_length=1, max_length=64)]
    target: str
    confidence: Confidence = 1.0
    attributes: dict[str, Any] = Field(default_factory=dict)


class FactEntry(Visible):
    text: Annotated[str, Field(min_length=1, max_length=5000)]
    subject: str | None = None
    story_day: float | None = None
    story_label: str | None = None
    confidence: Confidence = 1.0


class CampaignInfo(Strict):
    id: Key
    name: Name


ENTRY_LISTS: dict[str, type[Strict]] = {
    "entities": EntityEntry,
    "relationships": RelationshipEntry,
    "facts": FactEntry,
}


@dataclass(frozen=True)
class Origin:
    """Where a file came from and where its values stand.

    `locate` gives the 1-based line and column of the value at a path of the file as
    written. When some entries broke a rule they are left out of the file and their problems
    kept here: `kept` maps each list to the positions its remaining entries had, `left_out`
    holds the left-out entries (list, position, the fields that kept the rules) so their
    references are checked all the same, and `unchecked_names` holds the names, ids and
    aliases the left-out entities gave, so a reference to one of them is not reported a
    second time as unknown.
    """

    source: str
    locate: Callable[[Path], tuple[int, int] | None] = lambda _: None
    problems: tuple[Problem, ...] = ()
    kept: dict[str, tuple[int, ...]] = field(default_factory=dict)
    left_out: tuple[tuple[str, int, dict[str, Any]], ...] = ()
    unchecked_names: frozenset[str] = frozenset()


class CampaignFile(Strict):
    campaign: CampaignInfo | None = None
    relationship_types: tuple[Annotated[str, Field(min_length=1, max_length=64)], ...] = Field(
        default=(), description="Relationship types of this campaign beside the built-in ones."
    )
    entities: tuple[EntityEntry, ...] = ()
    relationships: tuple[RelationshipEntry, ...] = ()
    facts: tuple[FactEntry, ...] = ()
    _origin: Origin = PrivateAttr(default_factory=lambda: Origin("campaign file"))

    def with_origin(self, origin: Origin) -> CampaignFile:
        self._origin = origin
        return self

    @property
    def source(self) -> str:
        return self._origin.source

    @property
    def read_problems(self) -> tuple[Problem, ...]:
        """The problems of the entries left out when the file was read."""
        return self._origin.problems

    @property
    def left_out(self) -> tuple[tuple[str, int, dict[str, Any]], ...]:
        return self._origin.left_out

    def is_unchecked(self, compact_name: str) -> bool:
        return compact_name in self._origin.unchecked_names

    def written_path(self, path: Path) -> Path:
        """The path as the file has it: an entry's position before any were left out."""
        kept = self._origin.kept.get(str(path[0])) if len(path) > 1 else None
        if kept is None or not isinstance(path[1], int):
            return path
        return (path[0], kept[path[1]], *path[2:])

    def problem(self, path: Path, rule: str, *, as_written: bool = False) -> Problem:
        """A problem with the value at `path`: positions as in this file's lists, or with
        `as_written` as in the text."""
        written = path if as_written else self.written_path(path)
        place = self._origin.locate(written)
        line, column = place if place else (None, None)
        return Problem(self.source, line, column, field_name(written), rule)
