"""Roll20 campaign exports: characters and handouts. (pure)

Characters controlled by a player are players, the rest NPCs; their sheet attributes are
taken where the common sheets agree on a name. GM notes are left out on purpose: as
attributes every NPC would see them; the report says how many were skipped.
"""

from __future__ import annotations

from typing import Any

from glyphoxa_mcp.campaign.vtt.common import (
    ExportReader,
    ImportResult,
    compact_attributes,
    html_to_text,
)
from glyphoxa_mcp.domain.vocabulary import EntityType

SHEET_ATTRIBUTES = ("class", "race", "level", "alignment", "background", "npc_type", "size")


def parse_roll20(text: str, source: str = "roll20 campaign") -> ImportResult:
    export = ExportReader(text, source)
    gm_notes = 0
    for i, character in export.documents("characters"):
        controlled = str(character.get("controlledby") or "").strip()
        kind = EntityType.PLAYER if controlled and controlled != "all" else EntityType.NPC
        sheet = _sheet(character.get("attribs", []))
        attributes = compact_attributes(
            {
                "biography": html_to_text(character.get("bio")),
                **{k: sheet.get(k) for k in SHEET_ATTRIBUTES},
            }
        )
        gm_notes += bool(html_to_text(character.get("gmnotes")))
        export.add("characters", i, character, kind, attributes, "id")
    for i, handout in export.documents("handouts"):
        attributes = compact_attributes({"lore_text": html_to_text(handout.get("notes"))})
        gm_notes += bool(html_to_text(handout.get("gmnotes")))
        export.add("handouts", i, handout, EntityType.CONCEPT, attributes, "id")
    if gm_notes:
        export.result.notes.append(
            f"{gm_notes} GM notes were not imported: add what NPCs may know as facts "
            "(fact add ... --secret --known-by ...)."
        )
    return export.finish()


def _sheet(attribs: Any) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for attribute in attribs if isinstance(attribs, list) else []:
        if isinstance(attribute, dict) and attribute.get("name") in SHEET_ATTRIBUTES:
            current = attribute.get("current")
            if current not in (None, ""):
                values[attribute["name"]] = current
    return values
