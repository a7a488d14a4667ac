"""`eval summaries`: the offline summary and the baselines scored against reference
summaries, and the per-session summaries written with --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glyphoxa_mcp.evaluation.summaries import (
    BASELINES,
    OURS,
    cases,
    evaluate,
    extract,
    names_held,
    reference_names,
)
from glyphoxa_mcp.pipeline.summary import sentences_of
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from tests.cli.runner import run_in_process


def conversation(sample: str, first: str, second: str) -> dict[str, object]:
    turns = [
        (first, "Hey! How have you been lately?"),
        (second, "Good, thanks! I finally adopted a dog named Biscuit from the shelter."),
        (first, "I started a pottery class in Portland and I made a blue vase."),
        (second, "That sounds lovely, what a great way to relax!"),
        (first, "I decided to enter the vase in the county fair next month."),
        (second, "I will help you carry it to the fair, I promise."),
    ]
    return {
        "sample_id": sample,
        "conversation": {
            "speaker_a": first,
            "speaker_b": second,
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": who, "dia_id": f"D1:{i}", "text": text}
                for i, (who, text) in enumerate(turns, 1)
            ],
        },
        "session_summary": {
            "session_1_summary": f"{first} and {second} talked on 8 May 2023. {second} adopted "
            f"a dog named Biscuit. {first} made a blue vase in a pottery class in Portland and "
            f"decided to enter it in the county fair; {second} promised to help carry it."
        },
        "qa": [],
    }


def write(tmp_path: Path) -> Path:
    path = tmp_path / "summaries.json"
    data = [conversation("conv-a", "Caroline", "Melanie"), conversation("conv-b", "Jon", "Gina")]
    path.write_text(json.dumps(data))
    return path


def test_a_references_names_are_its_capitalised_words_past_a_sentences_start() -> None:
    reference = "Caroline met Melanie in Portland. They saw the Blue Lagoon, and I left."
    assert reference_names(reference) == ["melanie", "portland", "blue", "lagoon"]
    assert names_held(reference, "melanie went to portland") == 0.5


def test_a_baseline_picks_whole_sentences_with_their_speaker_cut_to_the_length(
    tmp_path: Path,
) -> None:
    (case, _) = cases(write(tmp_path).read_text(), "summaries.json")
    sentences = sentences_of(case.lines)
    lead = extract(sentences, "lead", 12)
    assert lead == "Caroline: How have you been lately? Melanie: I finally adopted a dog"
    for method in BASELINES:
        assert len(extract(sentences, method, 12).split()) == 12


@pytest.mark.slow
async def test_every_session_is_scored_for_us_and_each_baseline_per_conversation(
    tmp_path: Path, offline_embedder: LocalMiniLMEmbedder
) -> None:
    report = await evaluate(write(tmp_path).read_text(), "summaries.json", offline_embedder)
    assert report.sessions == 2
    assert [m.method for m in report.overall] == [OURS, *BASELINES]
    assert [c.conversation for c in report.conversations] == ["conv-a", "conv-b"]
    ours = report.overall[0]
    assert 0 < ours.rougeL <= 1 and ours.names > max(m.names for m in report.overall[1:])
    assert {(s.method, s.metric) for s in report.spread} >= {(OURS, "rougeL"), (OURS, "names")}
    assert report.summaries[0]["summary"].startswith("On 8 May 2023, Caroline and Melanie spoke.")


def test_the_command_prints_the_scores_and_writes_every_summary(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = run_in_process("eval", "summaries", str(write(tmp_path)), "--json", str(out))
    assert result.returncode == 0, result.stderr
    assert "ROUGE-L" in result.stdout and "lexrank" in result.stdout
    assert "Spread across conversations" in result.stdout
    written = json.loads(out.read_text())
    assert [(s["conversation"], s["session"]) for s in written["sessions"]] == [
        ("conv-a", 1),
        ("conv-b", 1),
    ]
    assert written["scores"]["sessions"] == 2


def test_a_file_without_reference_summaries_is_refused_naming_it(tmp_path: Path) -> None:
    data = conversation("conv-a", "Caroline", "Melanie")
    del data["session_summary"]
    path = tmp_path / "bare.json"
    path.write_text(json.dumps([data]))
    result = run_in_process("eval", "summaries", str(path))
    assert result.returncode == 2
    assert "conv-a" in result.stderr and "session_summary" in result.stderr
