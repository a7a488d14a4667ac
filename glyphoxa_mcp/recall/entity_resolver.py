"""Which entity a DM means: an id, a name or an alias. (pure)

An ambiguous name is an error that lists the candidates and asks for the id; an unknown one
suggests near misses.
"""

from __future__ import annotations

from collections.abc import Sequence

from glyphoxa_mcp.domain.models import Entity
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.recall.names import compact, match_names


class EntityResolver:
    def __init__(self, entities: Sequence[Entity]) -> None:
        self.entities = list(entities)
        self._by_id = {e.id: e for e in self.entities}
        self._by_key: dict[str, dict[str, Entity]] = {}
        for entity in self.entities:
            for spelling in (entity.name, *entity.aliases, entity.id):
                self._by_key.setdefault(compact(spelling), {})[entity.id] = entity

    def resolve(self, reference: str, where: str = "entity") -> Entity:
        if reference in self._by_id:
            return self._by_id[reference]
        found = list(self._by_key.get(compact(reference), {}).values())
        if len(found) == 1:
            return found[0]
        if found:
            listed = "; ".join(f"{e.name} ({e.type.value}, id {e.id})" for e in found)
            raise InvalidInputError(
                f"{where}: {reference!r} could be {listed}. Use the id.", field=where
            )
        near = [m.entity.name for m in match_names(reference, self.entities, limit=3)]
        hint = f" Did you mean {', '.join(near)}?" if near else ""
        raise InvalidInputError(f"{where}: no entity named {reference!r}.{hint}", field=where)
