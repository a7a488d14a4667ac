"""Name indexes patched entity by entity (issue 17) answer as indexes built from nothing over
the same entities: the recall name index, the mention pattern, the correction index, the
hidden forms; across a rebuild in a thread too."""

from __future__ import annotations

import random

import pytest

from glyphoxa_mcp.correction import name_index as correction_index
from glyphoxa_mcp.correction.known_names import CorrectorCache, corrects_like, names_of
from glyphoxa_mcp.correction.name_index import NameIndex as CorrectionIndex
from glyphoxa_mcp.domain.models import Entity, Visibility
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.recall import names as recall_names
from glyphoxa_mcp.recall.mentions import NamePattern
from glyphoxa_mcp.recall.names import NameIndex
from glyphoxa_mcp.recall.redaction import HiddenForms

SYLLABLES = ["bran", "noch", "vask", "or", "iel", "grim", "jaw", "dov", "rek", "salt", "kni"]
QUERIES = ["Brannoch", "vask", "grimjw", "Dovrek Salt", "or iel", "the salt", "Salt Knives"]


def name(rng: random.Random) -> str:
    words = [
        "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3))).title()
        for _ in range(rng.randint(1, 3))
    ]
    return " ".join(words)


def entity(number: int, rng: random.Random) -> Entity:
    return Entity(
        id=f"e{number:03d}",
        type=EntityType.NPC,
        name=name(rng),
        aliases=tuple(name(rng) for _ in range(rng.randint(0, 2))),
        attributes={},
        visibility=Visibility(),
    )


def edits(
    rng: random.Random, steps: int
) -> list[tuple[dict[str, Entity], dict[str, Entity | None]]]:
    """(entities after, what changed) for each step of random renames, adds and deletes."""
    current = {e.id: e for e in (entity(n, rng) for n in range(30))}
    steps_made = [(dict(current), {})]
    for step in range(steps):
        changed: dict[str, Entity | None] = {}
        for _ in range(rng.randint(1, 3)):
            entity_id = rng.choice([*current, f"e{100 + step:03d}"])
            if entity_id in current and rng.random() < 0.2:
                del current[entity_id]
                changed[entity_id] = None
            else:
                current[entity_id] = entity(int(entity_id[1:]), rng)
                changed[entity_id] = current[entity_id]
        steps_made.append((dict(current), changed))
    return steps_made


def in_order(entities: dict[str, Entity]) -> list[Entity]:
    return [entities[i] for i in sorted(entities)]


@pytest.mark.parametrize("rebuild_at", [1, 10_000])
def test_the_recall_index_patched_matches_a_fresh_one(
    monkeypatch: pytest.MonkeyPatch, rebuild_at: int
) -> None:
    monkeypatch.setattr(recall_names, "REBUILD_AT", rebuild_at)
    (first, _), *rest = edits(random.Random(1), 25)
    index = NameIndex(in_order(first))
    for entities, changed in rest:
        index = index.with_changes(changed)
        if index._rebuild is not None:
            index._rebuild.wait()
        fresh = NameIndex(in_order(entities))
        for query in QUERIES + [e.name for e in entities.values()]:
            assert index.match(query, limit=3) == fresh.match(query, limit=3)


def test_the_mention_pattern_patched_finds_what_a_fresh_one_finds() -> None:
    (first, _), *rest = edits(random.Random(2), 25)
    pattern, before = NamePattern.of_entities(in_order(first)), first
    for entities, changed in rest:
        pattern = pattern.with_changes(
            [before[i] for i in changed if i in before], [e for e in changed.values() if e]
        )
        fresh = NamePattern.of_entities(in_order(entities))
        assert pattern.owners == fresh.owners
        assert pattern._spans == fresh._spans
        before = entities


@pytest.mark.parametrize("rebuild_at", [1, 10_000])
@pytest.mark.slow
def test_the_correction_index_patched_answers_as_a_fresh_one(
    monkeypatch: pytest.MonkeyPatch, rebuild_at: int
) -> None:
    monkeypatch.setattr(correction_index, "REBUILD_AT", rebuild_at)
    (first, _), *rest = edits(random.Random(3), 25)
    index = CorrectionIndex(names_of(in_order(first)))
    for entities, changed in rest:
        now = [e for e in changed.values() if e is not None]
        index = index.with_changes(changed.keys(), names_of(sorted(now, key=lambda e: e.id)))
        if index._rebuild is not None:
            index._rebuild.wait()
        fresh = CorrectionIndex(names_of(in_order(entities)))
        assert index.names == fresh.names
        assert (index.max_parts, index.has_article, len(index)) == (
            fresh.max_parts,
            fresh.has_article,
            len(fresh),
        )
        for query in QUERIES + [e.name for e in entities.values()]:
            key = "".join(ch for ch in query.casefold() if ch.isalnum())
            assert index.similar(key, 0.5) == fresh.similar(key, 0.5)
            assert index.exact(key) == fresh.exact(key)


def test_hidden_forms_changed_are_the_forms_of_the_names_now() -> None:
    rng = random.Random(4)
    names = [name(rng) for _ in range(20)]
    forms = HiddenForms.of(names)
    for _ in range(30):
        gone = rng.sample(names, 2)
        came = [name(rng) for _ in range(2)]
        for spelling in gone:
            names.remove(spelling)
        names += came
        forms = forms.changed(gone, came)
        fresh = HiddenForms.of(names)
        assert (forms.words_of, forms.longest) == (fresh.words_of, fresh.longest)


@pytest.mark.slow
def test_a_patched_corrector_reuses_a_correction_only_when_it_would_make_the_same() -> None:
    cache = CorrectorCache()
    rng = random.Random(5)
    (first, _), *rest = edits(rng, 15)
    before_list = in_order(first)
    cache.for_entities(before_list)  # prepared, as a campaign's names are
    texts = [f"{name(rng).lower()} met {name(rng)} by the {name(rng)}" for _ in range(40)]
    texts += [e.name.lower() for e in first.values()]
    reused = 0
    for entities, changed in rest:
        now_list = in_order(entities)
        after = cache.derived(before_list, now_list, changed)
        assert after is not None
        for text in texts:
            parent = corrects_like(after, text)
            if parent is not None:
                reused += 1
                assert parent.correct(text) == after.correct(text)
        before_list = now_list
    assert reused > len(texts)  # most texts do not name what changed
