"""A scope patched after entity edits (issue 17) is the scope built from nothing: same known
entities as shown, same hidden ids, a redactor that hides the same texts, and name index,
pattern and corrector that find the same names. Edits are drawn at random (seeded): renames,
secrets, reveals, aliases, deletes, names holding hidden names, episodes renamed."""

from __future__ import annotations

import random

import pytest

from glyphoxa_mcp.correction.known_names import SHARED_CORRECTORS, names_of
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector
from glyphoxa_mcp.domain import entity_names
from glyphoxa_mcp.domain.entity_names import EntityNames, visible_to
from glyphoxa_mcp.domain.episodes import episode_id, episode_name
from glyphoxa_mcp.domain.models import Entity, NewEntity, Visibility
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.recall.mentions import NamePattern
from glyphoxa_mcp.recall.names import NameIndex
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views import scope as scope_module
from glyphoxa_mcp.views.scope import Scope, built_scope, scope_of

VIEWER = "mira"
WORDS = [
    "Salt", "Knives", "Vask", "Oriel", "Brannoch", "Kettle", "Ash", "Grimjaw", "Dovrek",
    "Tide", "Cellar", "Hollow", "Ember", "Lantern", "Quill", "Marrow",
]  # fmt: skip
PROBES = [
    "The Sault Knives met in the cellar.",
    "Grimjw and Vasc spoke of the Red Kettle.",
    "Brannock's lantern burned in Ember Hollow.",
    "Nothing here at all.",
    "a salt knife, the ashes, Oriel Vask's quill",
    "Dove wreck by the tide",
]


def two_words(rng: random.Random) -> str:
    return f"{rng.choice(WORDS)} {rng.choice(WORDS)}"


async def seed(memory: CampaignMemory, rng: random.Random) -> None:
    await memory.graph.upsert_entity(NewEntity(id=VIEWER, type=EntityType.NPC, name="Mira"))
    for number in range(40):
        secret = number % 5 == 0
        await memory.graph.upsert_entity(
            NewEntity(
                id=f"e{number}",
                type=rng.choice([EntityType.NPC, EntityType.LOCATION, EntityType.FACTION]),
                name=two_words(rng) if number % 3 else rng.choice(WORDS),
                aliases=(rng.choice(WORDS),) if number % 4 == 0 else (),
                visibility=Visibility(secret=secret, known_by=(VIEWER,) if number == 10 else ()),
            )
        )
    for number in range(3):
        session = f"s{number}"
        await memory.graph.upsert_entity(
            NewEntity(
                id=episode_id(session),
                type=EntityType.EVENT,
                name=episode_name(two_words(rng), session),
                attributes={"session_id": session, "date": f"2026-03-2{number}"},
            )
        )


async def edit(memory: CampaignMemory, rng: random.Random, step: int) -> None:
    """One random edit of the kinds a DM or an extraction makes."""
    entities = await memory.queries.entity_names()
    others = [e for e in entities if e.id != VIEWER]
    entity = rng.choice(others)
    kind = rng.choice(
        ["rename", "secret", "reveal", "alias", "delete", "holding", "episode", "touch"]
    )
    new = NewEntity(
        id=entity.id,
        type=entity.type,
        name=entity.name,
        aliases=entity.aliases,
        attributes=(await memory.graph.get_entity(entity.id)).attributes,
        visibility=entity.visibility,
    )
    if kind == "rename":
        new = new.model_copy(update={"name": two_words(rng)})
    elif kind == "secret":
        secret = not entity.visibility.secret
        new = new.model_copy(update={"visibility": Visibility(secret=secret)})
    elif kind == "reveal":
        new = new.model_copy(update={"visibility": Visibility(secret=True, known_by=(VIEWER,))})
    elif kind == "alias":
        new = new.model_copy(update={"aliases": (*entity.aliases, two_words(rng))})
    elif kind == "delete":
        await memory.graph.delete_entity(entity.id)
        return
    elif kind == "holding":
        hidden = [e for e in others if not visible_to(e, VIEWER)]
        inner = rng.choice(hidden).name if hidden else rng.choice(WORDS)
        new = NewEntity(
            id=f"new{step}", type=EntityType.LOCATION, name=f"{inner}'s {rng.choice(WORDS)}"
        )
    elif kind == "episode":
        episodes = [e for e in others if e.id.startswith("episode-")]
        if episodes:
            episode = await memory.graph.get_entity(rng.choice(episodes).id)
            new = NewEntity(
                id=episode.id,
                type=episode.type,
                name=episode_name(two_words(rng), episode.attributes["session_id"]),
                attributes=episode.attributes,
            )
    await memory.graph.upsert_entity(new)


async def from_nothing(memory: CampaignMemory, npc_id: str | None) -> Scope:
    """The scope built from a fresh read, with a corrector prepared anew."""
    version = await memory.entity_cache.version()
    names = EntityNames.read(version, await memory.queries.entity_names())
    corrector = PhoneticCorrector(names_of(names.entities)) if npc_id else None
    return built_scope(names, npc_id, corrector)


def assert_same(patched: Scope, fresh: Scope) -> None:
    assert patched.known == fresh.known
    assert patched.hidden_ids == fresh.hidden_ids
    assert patched.redactor.forms.words_of == fresh.redactor.forms.words_of
    assert patched.redactor.hidden_ids == fresh.redactor.hidden_ids
    assert patched.by_type == fresh.by_type
    for text in PROBES + [e.name for e in fresh.known]:
        assert patched.redactor.mentions_hidden(text) == fresh.redactor.mentions_hidden(text)
    pattern = NamePattern.of_entities(fresh.known)
    index = NameIndex(fresh.known)
    known_corrector = PhoneticCorrector(names_of(fresh.known))
    patched_corrector = SHARED_CORRECTORS.for_entities(patched.known)
    for text in PROBES + [w.lower() for w in WORDS]:
        assert patched.mentions.owners_in(text) == pattern.owners_in(text)
        assert patched.names.match(text) == index.match(text)
        assert patched_corrector.correct(text) == known_corrector.correct(text)


@pytest.mark.parametrize("seed_value", [1])
@pytest.mark.slow
async def test_a_scope_patched_edit_by_edit_is_the_scope_built_from_nothing(
    memory: CampaignMemory, monkeypatch: pytest.MonkeyPatch, seed_value: int
) -> None:
    rng = random.Random(seed_value)
    await seed(memory, rng)
    for viewer in (VIEWER, None):
        scope = await scope_of(memory, viewer)
        _ = scope.names, scope.mentions, scope.by_type
        SHARED_CORRECTORS.for_entities(scope.known)
    builds = []
    monkeypatch.setattr(scope_module, "built_scope", lambda *a: builds.append(a))
    for step in range(40):
        await edit(memory, rng, step)
        for viewer in (VIEWER, None):
            patched = await scope_of(memory, viewer)
            assert_same(patched, await from_nothing(memory, viewer))
    assert not builds, "every edit was patched in, none built from nothing"


async def test_visibility_decided_in_python_agrees_with_sql(memory: CampaignMemory) -> None:
    await seed(memory, random.Random(3))
    entities: list[Entity] = await memory.queries.entity_names()
    for npc in (VIEWER, "e3", "nobody"):
        visible = set(await memory.queries.visible_entity_ids(npc))
        assert {e.id for e in entities if visible_to(e, npc)} == visible


async def test_a_scope_older_than_the_snapshot_remembers_is_patched_from_the_log(
    memory: CampaignMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(4)
    await seed(memory, rng)
    scope = await scope_of(memory, VIEWER)
    monkeypatch.setattr(entity_names, "HISTORY_STEPS", 2)
    builds = []
    monkeypatch.setattr(scope_module, "built_scope", lambda *a: builds.append(a))
    for step in range(6):
        await edit(memory, rng, step)
        await memory.entity_names()  # the campaign's names move on; the viewer's scope not
    patched = await scope_of(memory, VIEWER)
    assert patched is not scope and not builds
    assert_same(patched, await from_nothing(memory, VIEWER))
