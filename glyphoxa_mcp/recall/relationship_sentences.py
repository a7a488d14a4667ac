"""Relationships written as sentences a model can read aloud or reason over. (pure)"""

from __future__ import annotations

from glyphoxa_mcp.domain.models import RelatedEntity

_TEMPLATES = {
    "KNOWS": "{source} knows {target}",
    "LOCATED_AT": "{source} is at {target}",
    "OWNS": "{source} owns {target}",
    "MEMBER_OF": "{source} is a member of {target}",
    "ALLIED_WITH": "{source} is allied with {target}",
    "HOSTILE_TO": "{source} is hostile to {target}",
    "PARTICIPATED_IN": "{source} took part in {target}",
    "QUEST_GIVER": "{source} gives the quest {target}",
    "CHILD_OF": "{source} is a child of {target}",
    "EMPLOYED_BY": "{source} is employed by {target}",
    "MENTIONED_IN": "{source} was mentioned in {target}",
}


def type_words(rel_type: str) -> str:
    """A relationship type as its sentence says it: "OWES_MONEY_TO" -> "owes money to"."""
    return rel_type.lower().replace("_", " ")


def relationship_sentence(source: str, rel_type: str, target: str) -> str:
    """ "Grimjaw", "MEMBER_OF", "Smiths Guild" -> "Grimjaw is a member of Smiths Guild."."""
    template = _TEMPLATES.get(rel_type)
    if template is None:
        template = "{source} " + type_words(rel_type) + " {target}"
    return template.format(source=source, target=target) + "."


def seen_from(name: str, related: RelatedEntity) -> str:
    """The sentence of a relationship as seen from the entity called `name`."""
    rel, other = related.relationship, related.other
    if related.direction == "outgoing":
        return relationship_sentence(name, rel.rel_type, other.name)
    return relationship_sentence(other.name, rel.rel_type, name)
