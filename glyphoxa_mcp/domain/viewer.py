"""Whose view of a campaign a request reads. (pure)"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from glyphoxa_mcp.domain.vocabulary import KEY_PATTERN


class ViewerKind(StrEnum):
    NPC = "npc"
    DM = "dm"
    RECORDER = "recorder"


class Viewer(BaseModel):
    """Whose view of a campaign a request reads: one NPC's, the DM's, or a recorder's."""

    model_config = ConfigDict(frozen=True)

    campaign: str = Field(pattern=KEY_PATTERN)
    kind: ViewerKind
    npc_id: str | None = Field(default=None, pattern=KEY_PATTERN)

    @model_validator(mode="after")
    def _npc_names_its_npc(self) -> Viewer:
        if (self.kind is ViewerKind.NPC) != (self.npc_id is not None):
            raise ValueError("an NPC viewer names its NPC, and no other viewer does")
        return self

    @classmethod
    def dm(cls, campaign: str) -> Viewer:
        return cls(campaign=campaign, kind=ViewerKind.DM)

    @classmethod
    def npc(cls, campaign: str, npc_id: str) -> Viewer:
        return cls(campaign=campaign, kind=ViewerKind.NPC, npc_id=npc_id)

    @classmethod
    def recorder(cls, campaign: str) -> Viewer:
        return cls(campaign=campaign, kind=ViewerKind.RECORDER)

    def describe(self) -> str:
        if self.kind is ViewerKind.NPC:
            return f"NPC {self.npc_id!r} of campaign {self.campaign!r}"
        return f"the {self.kind.value.upper()} of campaign {self.campaign!r}"
