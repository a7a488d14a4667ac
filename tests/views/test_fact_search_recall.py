"""search_facts finds the sample campaign's facts and relationships from questions that share
no words with them once they are embedded, where words alone find none.

The embedder is the product's offline default (WordLlama, 256 dimensions); the campaign is
loaded as an existing database has it (facts without vectors), searched, backfilled and
searched again through the same view.
"""

from __future__ import annotations

import logging

from glyphoxa_mcp.campaign.loader import load_campaign
from glyphoxa_mcp.campaign.sample import bundled
from glyphoxa_mcp.campaign.yaml_source import parse_campaign_file
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.pipeline.fact_embedding import embed_missing
from glyphoxa_mcp.providers.embeddings import offline_embedder
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.limits import clamp
from glyphoxa_mcp.views.view import View

log = logging.getLogger(__name__)
TOP_K = 5
# Each question asks for one fact of the sample campaign in other words: no word of it but
# stop words is in the fact, and it names no entity.
PARAPHRASES = {
    "Where were the wagons of metal goods spotted before they vanished?": (
        "The iron caravan was last seen at Greywater Crossing."
    ),
    "When can travellers take the boat across the river?": (
        "The ferry at Greywater Crossing only runs at low tide."
    ),
    "Who peddles dried seafood by the docks each morning?": (
        "Old Berrit sells salt-fish on the quay every dawn."
    ),
    "Where do the smugglers stash illegal goods?": (
        "The Salt Knives hide contraband in the cellar under the Red Kettle."
    ),
    "Which innkeeper is in debt to the city guards?": (
        "Brannoch owes the Town Watch two months of tax."
    ),
    "Who arranged a robbery of his wagons to claim a payout?": (
        "Tarquel paid the Salt Knives to lose his own caravan for the insurance."
    ),
    "Which woman talks with the ghosts of sailors lost at sea?": (
        "Maelis can hear the drowned speak at the spring tide."
    ),
    "What relic was taken from the shrine during the deluge?": (
        "The Tide Bell was stolen from the temple on the night of the Greywater Flood."
    ),
    "What do the account books reveal about vessels departing during the festival?": (
        "Wendrith's ledger shows no ship left the harbour on the Night of Lights."
    ),
}


# The same for relationships, shown as sentences ("Ilvenna is a child of Brannoch.").
LINK_PARAPHRASES = {
    "Who is the innkeeper's daughter?": "Ilvenna is a child of Brannoch.",
    "Which traders stand with the guards?": "Merchants' Guild is allied with Town Watch.",
    "Where does the priestess live?": "Maelis is at Temple of the Tide.",
    "Which lamp does the fishmonger keep?": "Old Berrit owns Lantern of Osk.",
    "Which sisterhood does the seer belong to?": "Maelis is a member of Tide Sisters.",
    "Who is the rich trader's hired hand?": "Dovrek is employed by Tarquel.",
}


async def recall_at(view: View, questions: dict[str, str], k: int) -> float:
    """The share of questions whose fact or relationship is among the top `k` results."""
    found = 0
    for question, wanted in questions.items():
        result = await view.search_facts(question, clamp(k, k))
        found += wanted in [hit.text for hit in result.results]
    return found / len(questions)


async def recalls(view: View) -> dict[str, float]:
    return {
        "facts@1": await recall_at(view, PARAPHRASES, 1),
        "facts@5": await recall_at(view, PARAPHRASES, TOP_K),
        "relationships@5": await recall_at(view, LINK_PARAPHRASES, TOP_K),
    }


async def test_embedded_facts_are_found_by_questions_in_other_words(db256: Database) -> None:
    file = parse_campaign_file(bundled("campaign.yaml"), "campaign.yaml")
    await load_campaign(db256, file, "demo")  # as a database from before facts had vectors
    memory = CampaignMemory(db256, "demo")
    assert {f.text for f in await memory.graph.current_facts()} == set(PARAPHRASES.values())
    embedder = offline_embedder(db256.embedding_dim)
    dm = await View.open(memory, None, embedder)

    by_words = await recalls(dm)
    assert (await embed_missing(db256, embedder)).facts == len(PARAPHRASES)
    by_meaning = await recalls(dm)

    log.info("search_facts recall: words alone %s, with vectors %s", by_words, by_meaning)
    assert by_words == {"facts@1": 0.0, "facts@5": 0.0, "relationships@5": 0.0}
    # Nine facts, so five of them are in any top five: the first place tells more.
    assert by_meaning["facts@1"] >= 0.4
    assert by_meaning["facts@5"] >= 0.66
    assert by_meaning["relationships@5"] >= 0.5


async def test_a_secret_relationship_is_found_by_meaning_only_by_those_who_know_it(
    db256: Database,
) -> None:
    embedder = offline_embedder(db256.embedding_dim)
    file = parse_campaign_file(bundled("campaign.yaml"), "campaign.yaml")
    await load_campaign(db256, file, "demo", embedder=embedder)
    memory = CampaignMemory(db256, "demo")
    # Names no one (so only the meaning half finds relationships), and asks for more than
    # there are: each viewer gets every relationship it may read.
    question = "Who belongs to which crew?"
    secret = "Old Berrit is a member of Salt Knives."

    async def found_by(npc_id: str | None) -> list[str]:
        view = await View.open(memory, npc_id, embedder)
        return [hit.text for hit in (await view.search_facts(question, clamp(50, 50))).results]

    assert secret in await found_by(None)  # the DM
    assert secret in await found_by("berrit")
    for npc in ("brannoch", "captain-ysolde", "maelis"):
        texts = await found_by(npc)
        assert "Tarquel is a member of Merchants' Guild." in texts  # found by meaning
        assert secret not in texts
        assert not any("Salt Knives" in text for text in texts)
