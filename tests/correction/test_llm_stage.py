from __future__ import annotations

import json

import pytest

from glyphoxa_mcp.correction.llm_stage import (
    LLMCorrectionSettings,
    LLMNameCorrector,
    Span,
    uncertain_spans,
    verified,
)
from glyphoxa_mcp.correction.name_index import KnownName, NameIndex
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector
from glyphoxa_mcp.correction.spans import apply_corrections, phonetic_spans
from glyphoxa_mcp.domain.models import Word
from glyphoxa_mcp.errors import ProviderError
from glyphoxa_mcp.providers.chat import ChatModel, ChatSettings
from tests.providers.fake_openai import chat, garbage, rate_limited, serve

NAMES = [KnownName("Brannoch", "brannoch"), KnownName("Ysolde", "ysolde"), KnownName("Saltmere")]
SETTINGS = LLMCorrectionSettings()


def words(line: str, low: set[str]) -> list[Word]:
    return [Word(word=w, confidence=0.3 if w.strip(",.") in low else 0.95) for w in line.split()]


def test_low_confidence_words_outside_phonetic_fixes_are_uncertain():
    raw = "so bran knock met iz olda at the gate"
    fixed = phonetic_spans(PhoneticCorrector(NAMES).correct(raw))
    assert [raw[c.start : c.end] for c in fixed] == ["bran knock"]
    spans = uncertain_spans(raw, words(raw, {"knock", "iz", "olda", "the"}), fixed, SETTINGS)
    # "knock" was fixed already; "the" alone is no name.
    assert [raw[s.start : s.end] for s in spans] == ["iz olda"]


def test_without_confidences_entity_like_words_are_uncertain():
    raw = "Then Izolder waved at the guards. She smiled."
    spans = uncertain_spans(raw, None, (), SETTINGS)
    assert [raw[s.start : s.end] for s in spans] == ["Izolder"]


def test_verify_keeps_declared_changes_inside_spans_and_reverts_the_rest():
    text = "we met iz olda at the gate"
    spans = [Span(7, 14)]
    reply = {
        "corrected": "We met Ysolde at the Saltmere gate",
        "corrections": [{"heard": "iz olda", "entity": "Ysolde"}],
    }
    assert verified(text, reply, spans, {"Ysolde", "Saltmere"}) == [(7, 14, "Ysolde")]
    undeclared = {"corrected": "we met Ysolde at the gate", "corrections": []}
    assert verified(text, undeclared, spans, {"Ysolde"}) == []
    unknown_name = {
        "corrected": "we met Isolde at the gate",
        "corrections": [{"heard": "iz olda", "entity": "Isolde"}],
    }
    assert verified(text, unknown_name, spans, {"Ysolde"}) == []
    assert verified(text, {"text": "?"}, spans, {"Ysolde"}) == []
    assert verified(text, None, spans, {"Ysolde"}) == []


@pytest.mark.slow
async def test_the_llm_fixes_what_the_phonetic_stage_left_through_the_real_client():
    raw = "so bran knock met iz olda at the gate"
    index = NameIndex(NAMES)
    phonetic = phonetic_spans(PhoneticCorrector(index).correct(raw))

    def answer(body: dict) -> str:
        line = json.loads(body["messages"][1]["content"])["line"]
        assert line == "so Brannoch met iz olda at the gate"
        return json.dumps(
            {
                # The model also "improved" the start of the line: reverted.
                "corrected": "So Brannoch met Ysolde at the gate",
                "corrections": [{"heard": "iz olda", "entity": "Ysolde"}],
            }
        )

    with serve(rate_limited, chat(answer)) as fake:
        model = ChatModel(ChatSettings(base_url=fake.base_url, model="local-llm"))
        fixes = await LLMNameCorrector(model).correct(
            raw, words(raw, {"iz", "olda"}), phonetic, index
        )
    assert [(f.heard, f.entity, f.entity_id, f.stage) for f in fixes] == [
        ("iz olda", "Ysolde", "ysolde", "llm")
    ]
    assert apply_corrections(raw, [*phonetic, *fixes]) == "so Brannoch met Ysolde at the gate"
    request = fake.requests[-1]
    assert (request["model"], request["temperature"]) == ("local-llm", 0.1)
    assert request["response_format"] == {"type": "json_object"}
    sent = json.loads(request["messages"][1]["content"])
    assert sent["uncertain_spans"] == ["iz olda"]
    assert set(sent["names"]) == {"Brannoch", "Ysolde", "Saltmere"}
    assert len(fake.requests) == 2  # the 429 was retried


async def test_an_unparseable_reply_changes_nothing():
    raw = "we met iz olda"
    index = NameIndex(NAMES)
    for reply in (chat("I think it is Ysolde!"), chat("[1, 2]"), chat('{"corrected": 3}')):
        with serve(reply) as fake:
            corrector = LLMNameCorrector(ChatModel(ChatSettings(base_url=fake.base_url)))
            fixes = await corrector.correct(raw, words(raw, {"iz", "olda"}), (), index)
        assert fixes == ()


async def test_a_broken_response_is_a_provider_error():
    with serve(garbage) as fake:
        corrector = LLMNameCorrector(ChatModel(ChatSettings(base_url=fake.base_url)))
        with pytest.raises(ProviderError, match="failed"):
            await corrector.correct("we met iz olda", None, (), NameIndex(NAMES))


async def test_nothing_uncertain_asks_nothing():
    raw = "we met Brannoch"
    with serve(chat("{}")) as fake:
        model = ChatModel(ChatSettings(base_url=fake.base_url))
        fixes = await LLMNameCorrector(model).correct(raw, words(raw, set()), (), NameIndex(NAMES))
    assert (fixes, fake.requests) == ((), [])
