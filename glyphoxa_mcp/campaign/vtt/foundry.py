"""Foundry VTT world exports: actors, items, scenes and journal entries. (pure)

Follows Foundry's document data: actors have `type` and a system-specific `system` block
(biography under system.details.biography.value in dnd5e and most systems) and embedded
`items`; scenes have a `navName`; journal entries have `pages` with `text.content` (v10+)
or a single `content` (v9).
"""

from __future__ import annotations

from typing import Any

from glyphoxa_mcp.campaign.vtt.common import (
    ExportReader,
    ImportResult,
    compact_attributes,
    dig,
    html_to_text,
    listed,
)
from glyphoxa_mcp.domain.vocabulary import EntityType

ACTOR_TYPES = {
    "character": EntityType.PLAYER,
    "npc": EntityType.NPC,
    "vehicle": EntityType.ITEM,
    "group": EntityType.FACTION,
}
CARRIED = {"weapon", "equipment", "consumable", "tool", "loot", "backpack", "container"}


def parse_foundry(text: str, source: str = "foundry world") -> ImportResult:
    export = ExportReader(text, source)
    for i, actor in export.documents("actors"):
        kind = ACTOR_TYPES.get(str(actor.get("type")), EntityType.NPC)
        owned = [
            i for i in listed(actor.get("items")) if isinstance(i, dict) and _text(i.get("name"))
        ]
        attributes = compact_attributes(
            {
                "biography": html_to_text(dig(actor, "system", "details", "biography", "value")),
                "race": _text(dig(actor, "system", "details", "race")),
                "creature_type": _text(dig(actor, "system", "details", "type", "value")),
                "alignment": _text(dig(actor, "system", "details", "alignment")),
                "class": ", ".join(i["name"] for i in owned if i.get("type") == "class"),
                "inventory": [i["name"] for i in owned if str(i.get("type")) in CARRIED],
            }
        )
        export.add("actors", i, actor, kind, attributes, "_id")
    for i, item in export.documents("items"):
        attributes = compact_attributes(
            {
                "item_type": item.get("type"),
                "description": html_to_text(dig(item, "system", "description", "value")),
            }
        )
        export.add("items", i, item, EntityType.ITEM, attributes, "_id")
    for i, scene in export.documents("scenes"):
        # the name a scene shows in the navigation bar, not its file name
        name_field = "navName" if scene.get("navName") else "name"
        attributes = compact_attributes({"description": html_to_text(scene.get("description"))})
        export.add("scenes", i, scene, EntityType.LOCATION, attributes, "_id", name_field)
    for i, entry in export.documents("journal"):
        pages = [p for p in listed(entry.get("pages")) if isinstance(p, dict)]
        texts = [html_to_text(dig(p, "text", "content")) for p in pages] or [
            html_to_text(entry.get("content"))
        ]
        attributes = compact_attributes({"lore_text": "\n\n".join(t for t in texts if t)})
        export.add("journal", i, entry, EntityType.CONCEPT, attributes, "_id")
    return export.finish()


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None
