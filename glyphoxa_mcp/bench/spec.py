"""What dataset to generate: sizes and seed, validated once. (pure)"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, ConfigDict, Field, model_validator

# Bumped whenever generation changes, so a database loaded by an older version is not
# mistaken for the dataset this version would make.
GENERATOR_VERSION = 5

# The reference campaign of the issue: a long-running campaign after 200 sessions.
REFERENCE_SESSIONS = 200
REFERENCE_ENTRIES = 200_000
REFERENCE_ENTITIES = 10_000
REFERENCE_RELATIONSHIPS = 40_000
REFERENCE_FACTS = 20_000

# Enough entities for every type, the party, and NPCs to speak in every session.
MIN_ENTITIES = 30
MIN_ENTRIES_PER_SESSION = 10


class DatasetSpec(BaseModel):
    """Sizes of the synthetic campaign. Chunks are not a size: they are cut from the
    transcript the way `process` cuts them (about one per five utterances)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int = Field(default=1, ge=0)
    sessions: int = Field(default=REFERENCE_SESSIONS, ge=1, le=10_000)
    entries: int = Field(default=REFERENCE_ENTRIES, ge=MIN_ENTRIES_PER_SESSION, le=20_000_000)
    entities: int = Field(default=REFERENCE_ENTITIES, ge=MIN_ENTITIES, le=1_000_000)
    relationships: int = Field(default=REFERENCE_RELATIONSHIPS, ge=0, le=10_000_000)
    facts: int = Field(default=REFERENCE_FACTS, ge=0, le=10_000_000)

    @model_validator(mode="after")
    def _fits(self) -> DatasetSpec:
        if self.entries < self.sessions * MIN_ENTRIES_PER_SESSION:
            raise ValueError(
                f"{self.entries} entries are too few for {self.sessions} sessions; give at "
                f"least {MIN_ENTRIES_PER_SESSION} per session"
            )
        # Beyond about a quarter of all ordered pairs, unique random links get hard to find.
        if self.relationships > self.entities * (self.entities - 1) // 4:
            raise ValueError(
                f"{self.relationships} relationships are too many for {self.entities} entities"
            )
        return self

    @classmethod
    def at_scale(cls, scale: float, **overrides: int | None) -> DatasetSpec:
        """The reference sizes times `scale`; explicit counts in `overrides` win."""
        if not 0 < scale <= 100:
            raise ValueError(f"scale must be above 0 and at most 100; got {scale}")
        sizes = {
            "sessions": max(1, round(REFERENCE_SESSIONS * scale)),
            "entries": round(REFERENCE_ENTRIES * scale),
            "entities": max(MIN_ENTITIES, round(REFERENCE_ENTITIES * scale)),
            "relationships": round(REFERENCE_RELATIONSHIPS * scale),
            "facts": round(REFERENCE_FACTS * scale),
        }
        sizes["entries"] = max(sizes["entries"], sizes["sessions"] * MIN_ENTRIES_PER_SESSION)
        sizes.update({key: value for key, value in overrides.items() if value is not None})
        return cls(**sizes)

    @property
    def fingerprint(self) -> str:
        """Identifies the dataset this spec generates (with this generator version)."""
        material = f"v{GENERATOR_VERSION}:{self.model_dump_json()}"
        return hashlib.sha256(material.encode()).hexdigest()[:16]
