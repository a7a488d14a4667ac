from __future__ import annotations

from glyphoxa_mcp.bench.name_correction import misheard, most_named, utterances
from glyphoxa_mcp.correction.phonetic import PhoneticCorrector
from tests.bench.test_dataset import tiny


def test_a_name_is_misheard_as_lower_case_ordinary_words() -> None:
    assert misheard("Bransdric") == "bran sdric"
    assert misheard("Red Kettle") == "red kettle"
    assert misheard("Ka'vesh") == "kavesh"
    assert misheard("Ulm") == "ulm"


def test_half_the_lines_that_name_someone_mishear_the_name_and_correction_restores_most() -> None:
    dataset = tiny()
    lines = utterances(dataset, count=400)
    assert lines == utterances(dataset, count=400)  # reproducible
    original = [e.text for e in dataset.entries[:400]]
    changed = [(heard, said) for heard, said in zip(lines, original, strict=True) if heard != said]
    assert 0.2 * len(lines) < len(changed) < 0.6 * len(lines)
    corrector = PhoneticCorrector(most_named(dataset, 5000))
    restored = sum(corrector.correct(heard).corrected == said for heard, said in changed)
    untouched = sum(corrector.correct(said).corrected == said for _, said in changed)
    # What the benchmark times is real work: most mishearings are put back, and lines
    # already right stay as they are.
    assert restored >= 0.6 * len(changed), (restored, len(changed))
    assert untouched == len(changed)


def test_the_small_campaign_is_the_most_named_entities() -> None:
    dataset = tiny()
    names = most_named(dataset, 5)
    assert len({n.entity_id for n in names}) == 5
