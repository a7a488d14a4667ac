"""The sample campaign after three more sessions that talk about its secrets, and what each
viewer must never read of them.

The Salt Knives (a faction known only to Old Berrit and Dovrek) are named in every way the
table says things: in a session title, in the singular, possessive, hyphenated, run
together, misheard, and in lines an extractive summary quotes. One line states a secret fact
without naming anything hidden ("Tarquel paid the smugglers…"): the DM marks it DM-only, as
a whole session of the DM's preparation notes is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from glyphoxa_mcp.demo import prepare
from glyphoxa_mcp.domain.models import NewEntity, NewEntry, NewRelationship, NewSession
from glyphoxa_mcp.domain.scenes import Scene
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.pipeline.finish import end_session
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.storage.memory import CampaignMemory

CAMPAIGN = "demo"


@dataclass(frozen=True)
class Line:
    speaker: str
    text: str
    dm_only: bool = False


PLAYERS = {
    "Kael": "p-kael",
    "Lyra": "p-lyra",
    "Sera": "p-sera",
    "DM": "dm",
    "Salt_Knives Boss": "knife-boss",
}
SPELLED = [
    "The Salt_Knives run the night market on the quay now.",
    "*Salt* *Knives* is painted on the harbour crates again.",
    "S.a.l.t K.n.i.v.e.s is chalked on the harbour wall.",
    "S a l t  K n i v e s, the harbour boys spell it out.",
    "The S\u0430lt \u041anives pay the harbour watch.",
    "The \uff33\uff41\uff4c\uff54 \uff2b\uff4e\uff49\uff56\uff45\uff53 own the harbour fog.",
    "Salt\u200bKnives whisper in the harbour fog.",
    "The salt\u00adknives take a tithe at the harbour.",
    "The Sa\u0301lt Kni\u0300ves meet at the harbour at dusk.",
    "The salt-knives-gang met at the harbour.",
    "SaltKnivesGang tags are on every harbour post.",
    "The anti-salt-knives league meets at the harbour.",
    "SALT-KNIVES-DEN is under the harbour, I swear it.",
    "The Salt\u2014Knives and the Salt\u2010Knives, same harbour gang.",
    "The Salt\u2026Knives, the Salt/Knives, call them what you like at the harbour.",
]
HARMLESS = "Pass the salt, the knives at the harbour inn are dull."
# A relationship type the DM writes between two people everyone knows: it names the secret.
HIDDEN_TYPE = "SMUGGLES_FOR_SALT_KNIVES"
# What the DM makes after play: a place named for the secret, open to everyone by its own
# visibility, and still hidden from whoever may not know the Salt Knives.
DM_ENTITY = NewEntity(type=EntityType.LOCATION, name="Salt-Knives-Cellar")
NPCS = {
    "Brannoch": "brannoch",
    "Ilvenna": "ilvenna",
    "Wendrith": "wendrith",
    "Captain Ysolde": "ysolde",
    "Maelis": "maelis",
}

SESSIONS: dict[str, tuple[str, datetime, bool, list[Line]]] = {
    "session-3": (
        "The Salt Knives' Cellar",
        datetime(2026, 3, 21, 19, tzinfo=UTC),
        False,
        [
            Line("DM", "You follow Ilvenna down the steps beneath the Red Kettle."),
            Line("Ilvenna", "Father keeps the brandy down here. Mind the third step."),
            Line("Kael", "Crates stamped with a dagger. He is a Salt Knife, I'd bet my bow on it."),
            Line("Lyra", "The salt-knives run this harbour, everyone whispers it."),
            Line("Sera", "SaltKnives. It is carved on every crate down here."),
            Line("Brannoch", "I know nothing of the Salt Knives' business in my cellar, friend."),
            Line("Kael", "Berrit's one of the Salt Nives, isn't he?"),
            Line("Lyra", "The Sault Knives pay the watch to look away."),
            Line(
                "DM",
                "Tarquel paid the smugglers to lose his own caravan for the insurance.",
                dm_only=True,
            ),
            Line("Sera", "The stew upstairs smells of tar and pepper tonight."),
            Line("Ilvenna", "Father says the iron caravan will turn up by the spring tide."),
        ],
    ),
    "session-4": (
        "Quiet Night at the Harbour",
        datetime(2026, 3, 28, 19, tzinfo=UTC),
        False,
        [
            Line("DM", "Fog lies on Saltmere Harbour. Wendrith counts barrels on the quay."),
            Line(
                "Wendrith", "No ship left this harbour on the Night of Lights, my ledger says so."
            ),
            Line("Kael", "Dovrek was out on the water that night with a lantern.", dm_only=True),
            Line("Lyra", "Salt Knives, Salt Knives, that is all the fishermen sing about."),
            Line("Sera", "Wendrith, who pays for the fog lanterns?"),
            Line("Wendrith", "The Merchants' Guild, as ever. Tarquel signed the ledger himself."),
            Line("Kael", "Let's ask Captain Ysolde about the crates in the cellar."),
        ],
    ),
    # Every spelling a red team tried (issue 27): symbols inside the name, formatting
    # around it, invisible and look-alike letters, letter by letter, compounds, a name split
    # between two lines, and a speaker label naming it; one ordinary line that shares its
    # words stays readable to everyone.
    "session-6": (
        "Gossip on the Quay",
        datetime(2026, 4, 4, 19, tzinfo=UTC),
        False,
        [
            Line("DM", "Gulls scream over the quay while the harbour wakes."),
            *(Line(("Lyra", "Kael", "Sera")[i % 3], text) for i, text in enumerate(SPELLED)),
            Line("Lyra", "The smugglers at the harbour have a name, they call them the Salt"),
            Line("Lyra", "Knives, remember that when the tide turns."),
            Line("Salt_Knives Boss", "Keep your mouth shut about the fog lanterns."),
            Line("Sera", HARMLESS),
        ],
    ),
    "salt-knives-den": (
        "Down in the Den",
        datetime(2026, 3, 30, 19, tzinfo=UTC),
        False,
        [Line("Kael", "We wait in the dark by the tar barrels until midnight.")],
    ),
    # Who knows what (issue 30): a plan made at the Temple of the Tide where only Maelis was
    # (she belongs to no group anyone else is in, and nobody else lives there, so word of it
    # reaches no one), said in words that name nothing secret; and a line the DM keeps to
    # themselves inside that witnessed scene.
    "session-7": (
        "Vigil at the Temple",
        datetime(2026, 4, 11, 19, tzinfo=UTC),
        False,
        [
            Line("Kael", "At moonrise we climb the sea wall and cut the bell rope."),
            Line("Maelis", "Then the drowned bell stays silent and the tide comes in unwatched."),
            Line("Lyra", "Insurance money buys a lot of silence, remember.", dm_only=True),
        ],
    ),
    "session-5": (
        "Session zero notes",
        datetime(2026, 3, 10, 18, tzinfo=UTC),
        True,
        [
            Line("DM", "Prep: Tarquel staged the theft with the mercenaries of Dovrek."),
            Line("DM", "Prep: the wagons sit in the Old Salt Caves; Berrit lies about lanterns."),
        ],
    ),
}


# Who is present in each session's one scene: the whole cast for the sessions that test
# secrecy (so that only the DM's secrets keep anything from an NPC there), Maelis alone at
# the temple.
PRESENT = {"session-7": ("maelis",)}
EVERYONE = ("brannoch", "ysolde", "berrit", "maelis", "tarquel", "dovrek", "wendrith", "ilvenna")
LOCATION = {"session-7": "temple-of-the-tide"}


async def build(memory: CampaignMemory, embedder: Embedder) -> CampaignMemory:
    """The sample campaign (sessions 1 and 2) and sessions 3 to 7, ended offline."""
    demo = await prepare(memory.db, embedder, lambda _: None)
    for session_id, (title, start, dm_only, lines) in SESSIONS.items():
        await demo.sessions.upsert(NewSession(id=session_id, title=title, started_at=start))
        await demo.scenes.record(
            [
                Scene(
                    session_id=session_id,
                    started_at=start,
                    present=PRESENT.get(session_id, EVERYONE),
                    location_id=LOCATION.get(session_id),
                )
            ]
        )
        ids = await demo.log.append_many(
            session_id,
            [
                NewEntry(
                    speaker_id=NPCS.get(line.speaker) or PLAYERS[line.speaker],
                    speaker_name=line.speaker,
                    npc_id=NPCS.get(line.speaker),
                    text=line.text,
                    spoken_at=start + timedelta(seconds=20 * index),
                )
                for index, line in enumerate(lines)
            ],
        )
        # The DM marks what was said before the session ends, as during play.
        marked = [entry_id for entry_id, line in zip(ids, lines, strict=True) if line.dm_only]
        if marked:
            await demo.log.set_dm_only(marked, True)
        if dm_only:
            await demo.sessions.set_dm_only(session_id, True)
        await end_session(memory.db, CAMPAIGN, session_id, embedder)
    await demo.graph.upsert_entity(DM_ENTITY)
    await demo.graph.upsert_relationship(
        NewRelationship(source_id="wendrith", target_id="tarquel", rel_type=HIDDEN_TYPE)
    )
    return demo


@dataclass(frozen=True)
class Secret:
    """Something some viewers may not read: its name in the report, the viewers who may,
    and what in a reply shows it."""

    name: str
    known_by: frozenset[str]
    pattern: re.Pattern[str]


def _pattern(*alternatives: str) -> re.Pattern[str]:
    return re.compile("|".join(alternatives), re.IGNORECASE)


SECRETS = (
    Secret(
        "the Salt Knives, in any form",
        frozenset({"berrit", "dovrek"}),
        _pattern(
            r"salt[\s\-_'\u2019]*(kni(fe|ves|fes)|ni(ves|fes|eves))",
            r"sault[\s\-]*knives",
        ),
    ),
    Secret(
        "Tarquel's insurance scheme (the DM's secret fact, and the DM-only line)",
        frozenset(),
        _pattern(r"insurance", r"lose his own caravan", r"paid the smugglers"),
    ),
    Secret(
        "the contraband under the Red Kettle (Old Berrit's secret fact)",
        frozenset({"berrit"}),
        _pattern(r"contraband"),
    ),
    Secret(
        "Old Berrit's membership (a relationship only he knows)",
        frozenset({"berrit"}),
        _pattern(r"Berrit is a member of Salt Knives"),
    ),
    Secret(
        "Dovrek on the water the Night of Lights (his secret, and a DM-only line)",
        frozenset({"dovrek"}),
        _pattern(r"Dovrek took part in The Night of Lights", r"Dovrek was out on the water"),
    ),
    Secret(
        "the Salt Knives in every other spelling, a split name, a speaker, a session id",
        frozenset({"berrit", "dovrek"}),
        _pattern(
            *(re.escape(text) for text in SPELLED),
            r"call them the Salt",
            r"Knives, remember that",
            r"Salt_Knives Boss",
            r"Keep your mouth shut",
            r"salt-knives-den",
            r"tar barrels until midnight",
            r"Salt-Knives-Cellar",
        ),
    ),
    Secret(
        "the plan made at the temple, where only Maelis was (whatever it names)",
        frozenset({"maelis"}),
        _pattern(r"cut the bell rope", r"climb the sea wall", r"drowned bell stays silent"),
    ),
    Secret(
        "the DM's preparation session (DM-only)",
        frozenset(),
        _pattern(r"session-5", r"Session zero", r"staged the theft", r"Prep:"),
    ),
)


def hidden_from(viewer: str | None) -> list[Secret]:
    """The secrets `viewer` (an NPC id; None: the DM) may not read."""
    if viewer is None:
        return []
    return [secret for secret in SECRETS if viewer not in secret.known_by]
