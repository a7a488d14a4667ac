"""Word pools the synthetic campaign is written from. (pure data)

Topics give transcripts, facts and queries a shared vocabulary, so that full-text search is
as selective as on a real campaign: a query shares words with the passages of its topic and
few others.
"""

from __future__ import annotations

NAME_STARTS = (
    "Al", "Bran", "Cor", "Dar", "El", "Fen", "Gar", "Hal", "Is", "Jor", "Kel", "Lor", "Mal",
    "Nor", "Or", "Per", "Quin", "Ros", "Sar", "Tor", "Ul", "Val", "Wen", "Yr", "Zan", "Bel",
    "Cael", "Dor", "Ebb", "Fal", "Gil", "Hes", "Ith", "Kor", "Lys", "Mor", "Ned", "Oss",
    "Ryn", "Syl",
)  # fmt: skip
NAME_MIDDLES = ("", "a", "e", "i", "o", "ae", "ia", "or", "an", "el", "u", "ar")
NAME_ENDS = (
    "dric", "wyn", "mar", "ric", "las", "dor", "nia", "thas", "ven", "mir", "gar", "wen",
    "rith", "dell", "sor", "bek", "lin", "dra", "mond", "vik", "ta", "ros", "wick", "na",
)  # fmt: skip
PLACE_SUFFIXES = (
    "mere", "ford", "hold", "wick", "haven", "moor", "gate", "fall", "crest", "vale",
    "reach", "hollow", "stead", "watch", "barrow",
)  # fmt: skip
ADJECTIVES = (
    "Red", "Grey", "Silent", "Broken", "Golden", "Salt", "Iron", "Hollow", "Crimson",
    "Drowned", "Gilded", "Black", "Pale", "Sunken", "Howling", "Last", "Copper", "Ashen",
)  # fmt: skip
VENUES = (
    "Kettle", "Anchor", "Lantern", "Gull", "Stag", "Barrel", "Wheel", "Crown", "Bell",
    "Tower", "Bridge", "Mill", "Chapel", "Market", "Docks", "Gaol", "Quarry", "Orchard",
)  # fmt: skip
FACTION_NOUNS = (
    "Knives", "Hands", "Lanterns", "Wardens", "Ravens", "Brothers", "Circle", "Guild",
    "Company", "Chorus", "Oath", "Tide", "Veil", "Covenant",
)  # fmt: skip
OBJECTS = (
    "Sword", "Ledger", "Amulet", "Key", "Chalice", "Map", "Ring", "Crown", "Lantern",
    "Dagger", "Horn", "Compass", "Tome", "Mask", "Shield", "Seal",
)  # fmt: skip
EVENT_NOUNS = (
    "Fire", "Flood", "Siege", "Duel", "Wedding", "Funeral", "Riot", "Feast", "Raid",
    "Trial", "Eclipse", "Storm", "Massacre", "Coronation",
)  # fmt: skip
QUEST_NOUNS = (
    "Search", "Debt", "Escort", "Hunt", "Rescue", "Secret", "Price", "Road", "Promise",
    "Bargain", "Return", "Vigil",
)  # fmt: skip
CONCEPT_NOUNS = (
    "Law", "Curse", "Blessing", "Prophecy", "Custom", "Heresy", "Tithe", "Pact", "Creed",
)  # fmt: skip
OCCUPATIONS = (
    "innkeeper", "blacksmith", "fisherman", "priestess", "merchant", "harbour master",
    "guard captain", "herbalist", "smuggler", "scribe", "miner", "ferryman", "baker",
    "mercenary", "alchemist", "stablehand", "tax collector", "bard", "weaver", "hunter",
)  # fmt: skip
PERSONALITIES = (
    "jovial", "stern", "nosy", "evasive", "anxious", "proud", "cryptic", "generous",
    "greedy", "loyal", "bitter", "curious", "tired", "reckless", "pious", "cunning",
)  # fmt: skip
SPEAKING_STYLES = (
    "booming voice", "short sentences", "sea sayings", "answers with questions",
    "whispers", "long stories", "formal titles", "swears a lot", "nervous laughter",
)  # fmt: skip
SKILLS = ("Perception", "Insight", "Stealth", "Persuasion", "Athletics", "Arcana", "History")
PLAYER_NAMES = ("Kael", "Lyra", "Sera", "Thorn", "Mira", "Dex")
PLAYER_CLASSES = ("ranger", "bard", "cleric", "rogue", "wizard", "fighter")

# Each topic's words; sub-topics use overlapping slices of them (see `topic_words`).
_TOPIC_TEXT = """
caravan: caravan wagon road iron teamster axle cargo tracks mule escort crossing toll
smuggling: smugglers contraband cove lantern tide crates rum customs night boat signal cellar
temple: temple altar priest relic prayer bells candles offering vestments choir sermon crypt
plague: plague fever sickness cure herbs quarantine corpses physician rats boils tonic ward
war: war army banners siege soldiers muster border garrison catapult retreat general levy
election: election council votes mayor bribes speech guildhall candidate ballot rivals debate seat
harvest: harvest wheat barley granary drought farmers scythe festival blight orchard cider fields
shipwreck: shipwreck hull reef salvage sailors mast drowned cargo lighthouse rigging storm wreckage
heist: heist vault lockpick guards blueprint diversion treasury keys rooftop alarm loot fence
dragon: dragon scales lair hoard fire wings claws egg ashes roar mountain slayer
cult: cult ritual robes chanting sacrifice idol initiates cellar sigil whispers moon blood
tournament: tournament joust champion lance herald prize arena squire favour melee banner wager
wedding: wedding bride groom vows dowry feast rings chapel dance toast veil guests
murder: murder corpse dagger witness alibi blood suspect poison motive inquest body clue
debt: debt loan interest ledger collector coins moneylender payment ruin contract silver bond
mine: mine shaft ore miners collapse tunnel pickaxe vein cart dark gas foreman
storm: storm thunder lightning flood winds rain shelter hail tempest roof waves gale
bandits: bandits ambush hideout outlaws ransom forest arrows raid camp chief loot trail
artifact: artifact runes ancient glow power vault scholar inscription curse shard relic ruin
feud: feud family grudge insult honour duel vengeance elders truce blood cousins pride
witch: witch hut cauldron hex familiar potion swamp bargain charm bones crone spell
undead: undead graveyard skeletons ghoul necromancer tomb bones rot lich coffin mist ghost
market: market stalls prices spices haggling merchants silk coins scales fair cloth wares
prison: prison cell jailer escape chains warden tunnel bars prisoner guards sentence pardon
fey: fey glade mushrooms trickster circle glamour bargain moonlight pixies names riddle court
library: library books scrolls archive librarian ink index forbidden map tome candle dust
wolves: wolves howling pack tracks forest hunters moon pelts shepherd sheep alpha werewolf
ship: ship captain crew voyage harbour anchor sails deck cabin passage port tide
noble: noble duke court heir estate servants ball scandal letters inheritance crest title
thieves: thieves guild pickpocket alley fence dues hideout master job snitch sewer mark
"""
TOPICS = {
    name: tuple(words.split())
    for name, _, words in (line.partition(": ") for line in _TOPIC_TEXT.strip().splitlines())
}

TOPIC_NAMES = tuple(TOPICS)
SUBTOPICS_PER_TOPIC = 6
WORDS_PER_SUBTOPIC = 5


def topic_words(topic: int, subtopic: int) -> tuple[str, ...]:
    """A sub-topic's words: an overlapping slice of its topic's words."""
    words = TOPICS[TOPIC_NAMES[topic]]
    start = subtopic * 2
    return tuple(words[(start + i) % len(words)] for i in range(WORDS_PER_SUBTOPIC))


# Utterance templates by who speaks. {w} is a topic word (each {w} a fresh one), {npc} someone
# in the scene, {place} the scene's location, {thing} an item, {group} a faction,
# {event} an event, {n} a number, {skill} a skill.
DM_LINES = (
    "You arrive at {place}. The {w} and the {w} are the first things you notice.",
    "{npc} looks up from the {w} and frowns.",
    "Roll {skill}. Something about the {w} near {place} is wrong.",
    "The {w} is quiet tonight; {npc} waits by the {w}.",
    "A messenger from {group} hands you a note about the {w}.",
    "Rain falls on {place} as {npc} tells you about the {w}.",
    "You find {thing} hidden under the {w}.",
    "Everyone in {place} is talking about the {w} since {event}.",
)  # fmt: skip
PLAYER_LINES = (
    "Did {npc} say anything about the {w}?",
    "I search the {w} near {place}.",
    "We promised {npc} we would find the {w}.",
    "Let's ask about the {w} and the {w} before we leave {place}.",
    "I don't trust {npc}; the {w} story doesn't add up.",
    "Can I use {thing} on the {w}?",
    "What do we know about {group} and the {w}?",
    "I roll {skill} to read {npc} while they talk about the {w}.",
    "Wasn't {npc} at {place} when the {w} happened?",
)  # fmt: skip
NPC_LINES = (
    "The {w} has not been the same since {event}.",
    "Talk to {npc} at {place}, friend; they know about the {w}.",
    "I'll pay you {n} silver to bring back the {w}.",
    "{group} wants the {w}, and I want no part of it.",
    "Keep your voice down about the {w} in {place}.",
    "I saw {npc} carrying {thing} towards the {w}.",
    "Nobody in {place} will speak of the {w}, not after {event}.",
    "You want the {w}? Then you deal with {group} first.",
    "My {w} for your {w}, and we never met.",
)  # fmt: skip
FACT_LINES = (
    "{subject} guards the {w} of {place}.",
    "{subject} owes {n} silver to {npc} over the {w}.",
    "{subject} was seen near {place} with the {w}.",
    "{subject} fears the {w} and the {w}.",
    "{subject} hid {thing} beneath the {w}.",
    "{subject} swore an oath to {group} about the {w}.",
    "{subject} lost the {w} during {event}.",
    "{subject} knows who took the {w} from {place}.",
)  # fmt: skip
SUMMARY_LINES = (
    "The party travelled to {place} and met {npc}.",
    "{npc} spoke of the {w} and the {w}.",
    "They agreed to recover {thing} for {npc}.",
    "{group} was blamed for the {w}.",
    "Talk turned to {event} and the {w}.",
    "The session ended at {place} with the {w} still unsolved.",
)  # fmt: skip
QUERY_LINES = (
    "what did {npc} say about the {w}",
    "the {w} and the {w}",
    "{w} {w} {place}",
    "who mentioned the {w} near {place}",
    "do you remember the {w}",
    "{npc} {w}",
    "where is the {w}",
)  # fmt: skip
