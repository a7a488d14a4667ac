from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from glyphoxa_mcp.campaign.sample import bundled
from tests.cli.conftest import Cli
from tests.providers.fake_openai import chat, serve


def without_scenes(name: str) -> str:
    """A sample session's transcript without its scene markers: they name the sample's
    places and people, which the campaigns here do not have."""
    return "".join(
        line for line in bundled(name).splitlines(keepends=True) if '"scene"' not in line
    )


@pytest.mark.slow
def test_ingest_process_and_list_sessions(tmp_path: Path, glyphoxa: Cli) -> None:
    def cli(*args: str, expect: int = 0) -> str:
        result = glyphoxa(*args, "--campaign", "salt")
        assert result.returncode == expect, result.stderr
        return result.stdout if expect == 0 else result.stderr

    plain = tmp_path / "night-one.txt"
    plain.write_text("Brannoch: Welcome, friends!\nKael: Any news of the caravan?\n")
    first = json.loads(
        cli(
            "ingest",
            str(plain),
            "--session",
            "s1",
            "--title",
            "Night one",
            "--start",
            "2026-03-07T19:00:00Z",
            "--json",
        )
    )
    again = json.loads(cli("ingest", str(plain), "--session", "s1", "--json"))
    assert (first["added"], again["added"]) == (2, 0)
    jsonl = tmp_path / "s2.jsonl"
    jsonl.write_text(without_scenes("session-2.jsonl"))
    assert "8 new utterances" in cli("ingest", str(jsonl), "--session", "s2")
    processed = json.loads(cli("process", "s2", "--json"))
    # Nothing of the campaign is loaded here, so there are no names to put back.
    assert processed == {
        "session": "s2",
        "entries": 8,
        "corrected": 0,
        "passages": 6,
        "embedded": 6,
        "removed": 0,
    }
    rerun = json.loads(cli("process", "s2", "--json"))
    assert rerun == {**processed, "embedded": 0}  # again: nothing new
    sessions = json.loads(cli("session", "list", "--json"))
    assert [(s["id"], s["started_at"]) for s in sessions] == [
        ("s1", "2026-03-07T19:00:00Z"),
        ("s2", "2026-03-14T19:00:00Z"),
    ]
    status = json.loads(glyphoxa("status", "--json").stdout)
    assert status["campaigns"][0]["chunks"] == 6 and status["campaigns"][0]["entries"] == 10

    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"speaker_id": "a", "speaker_name": "A", "text": "x"}\n')
    assert "broken.jsonl:1: Invalid input: timestamp" in cli(
        "ingest", str(broken), "--session", "s3", expect=2
    )
    assert "No session 'nope'" in cli("process", "nope", expect=2)


def load_sample_session(tmp_path: Path, cli: Callable[..., str]) -> None:
    """The sample campaign, and its first session ingested as 's1' ("Rumours")."""
    session = tmp_path / "s1.jsonl"
    session.write_text(without_scenes("session-1.jsonl"))
    sample = tmp_path / "campaign.yaml"
    sample.write_text(bundled("campaign.yaml"))
    cli("campaign", "load", str(sample))
    cli("ingest", str(session), "--session", "s1", "--title", "Rumours")


@pytest.mark.slow
def test_ending_a_session_summarises_it_and_records_the_episode(
    tmp_path: Path, glyphoxa: Cli
) -> None:
    def cli(*args: str) -> str:
        result = glyphoxa(*args, "--campaign", "demo")
        assert result.returncode == 0, result.stderr
        return result.stdout

    load_sample_session(tmp_path, cli)
    ended = json.loads(cli("session", "end", "s1", "--json"))
    assert ended["ended_at"] == "2026-03-07T19:01:55+00:00"
    assert "I'll pay you forty silver" in ended["summary"]
    # Who spoke took part; a place only named was mentioned, not where it happened.
    assert {"brannoch", "berrit"} <= set(ended["participants"])
    assert "greywater-crossing" in ended["mentioned"]
    again = json.loads(cli("session", "end", "s1", "--json"))
    assert again["summary"] == ended["summary"]
    episode = json.loads(cli("entity", "show", "episode-s1", "--json"))
    kinds = {(r["relationship"]["rel_type"], r["other"]["id"]) for r in episode["relationships"]}
    assert ("PARTICIPATED_IN", "brannoch") in kinds
    assert ("MENTIONED_IN", "greywater-crossing") in kinds
    # No duplicates on a rerun.
    assert len(episode["relationships"]) == len(ended["participants"]) + len(ended["mentioned"])
    [listed] = json.loads(cli("session", "list", "--json"))
    assert listed["summary_source"] == "extractive"


@pytest.mark.slow
def test_with_a_base_url_session_end_uses_the_llm_and_no_llm_stays_offline(
    tmp_path: Path, glyphoxa: Cli
) -> None:
    def answer(body: dict) -> str:
        system = body["messages"][0]["content"]
        if "summarise" in system:
            return json.dumps(
                {"happened": "The party took the job at the Red Kettle.", "gist": "A job."}
            )
        if "adds to the" in system:
            return json.dumps({"entities": [], "relationships": [], "facts": []})
        return json.dumps({"corrected": "", "corrections": []})

    session = tmp_path / "s1.jsonl"
    session.write_text(without_scenes("session-1.jsonl"))
    with serve(chat(answer)) as fake:
        llm = {"GLYPHOXA_OPENAI_BASE_URL": fake.base_url, "GLYPHOXA_EMBEDDER": "local"}

        def cli(*args: str, env: dict[str, str]) -> dict:
            result = glyphoxa(*args, "--campaign", "c", env=env)
            assert result.returncode == 0, result.stderr
            return json.loads(result.stdout) if "--json" in args else {}

        cli("ingest", str(session), "--session", "s1", env={})
        offline = cli("session", "end", "s1", "--json", "--no-llm", env=llm)
        assert (offline["summary_source"], offline["extraction"]) == ("extractive", None)
        assert fake.requests == []
        ended = cli("session", "end", "s1", "--json", env=llm)
    assert ended["summary_source"] == "llm"
    assert ended["summary"] == "The party took the job at the Red Kettle."
    assert ended["extraction"]["facts"] == 0
    assert {r["model"] for r in fake.requests} == {"gpt-4o-mini"}


@pytest.mark.slow
def test_session_end_says_when_the_llm_is_down_and_retry_llm_finishes_the_job(
    tmp_path: Path, glyphoxa: Cli
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    local = {"GLYPHOXA_EMBEDDER": "local"}
    down = {"GLYPHOXA_OPENAI_BASE_URL": nowhere, "GLYPHOXA_LLM_MAX_RETRIES": "0", **local}
    session = tmp_path / "s1.jsonl"
    session.write_text(without_scenes("session-1.jsonl"))
    assert glyphoxa("ingest", str(session), "--session", "s1", "--campaign", "c").returncode == 0

    ended = glyphoxa("session", "end", "s1", "--campaign", "c", env=down)
    assert ended.returncode == 0, ended.stderr
    assert "The LLM could not be reached" in ended.stdout
    assert "glyphoxa-mcp session end s1 --retry-llm" in ended.stdout
    listing = glyphoxa("session", "list", "--campaign", "c").stdout
    assert "extractive (waiting for the LLM)" in listing

    offline = glyphoxa("session", "end", "--retry-llm", "--campaign", "c", "--no-llm")
    assert offline.returncode == 2 and "--retry-llm needs an LLM" in offline.stderr

    def answer(body: dict) -> str:
        if "summarise" in body["messages"][0]["content"]:
            return json.dumps({"happened": "The party took the job.", "gist": "A job."})
        if "adds to the" in body["messages"][0]["content"]:
            return json.dumps({"entities": [], "relationships": [], "facts": []})
        return json.dumps({"corrected": "", "corrections": []})

    with serve(chat(answer)) as fake:
        up = {"GLYPHOXA_OPENAI_BASE_URL": fake.base_url, **local}
        retried = glyphoxa("session", "end", "--retry-llm", "--campaign", "c", "--json", env=up)
        assert retried.returncode == 0, retried.stderr
        [report] = json.loads(retried.stdout)
        assert (report["session"], report["summary_source"]) == ("s1", "llm")
        nothing = glyphoxa("session", "end", "--retry-llm", "--campaign", "c", env=up)
    assert "No session is waiting for the LLM." in nothing.stdout


@pytest.mark.slow
def test_a_dm_keeps_a_line_and_a_session_to_themselves(tmp_path: Path, glyphoxa: Cli) -> None:
    def cli(*args: str, expect: int = 0) -> str:
        result = glyphoxa(*args, "--campaign", "demo")
        assert result.returncode == expect, result.stderr
        assert "Traceback" not in result.stderr
        return result.stdout if expect == 0 else result.stderr

    load_sample_session(tmp_path, cli)
    ended = json.loads(cli("session", "end", "s1", "--json"))
    assert "I'll pay you forty silver" in ended["summary"]
    [line] = json.loads(cli("session", "show", "s1", "--grep", "forty silver", "--json"))
    marked = json.loads(cli("secret", "mark", f"line:{line['id']}", "--json"))
    assert marked["summaries_rewritten"] == ["s1"]
    shown = cli("session", "show", "s1", "--grep", "forty silver")
    assert f"line:{line['id']}" in shown and "DM-only" in shown
    [listed] = json.loads(cli("session", "list", "--json"))
    assert "forty silver" not in listed["summary"]  # written again without the line
    episode = json.loads(cli("entity", "show", "episode-s1", "--json"))
    # A witnessed campaign's episode holds no summary; what the DM keeps is nowhere in it.
    assert "forty silver" not in json.dumps(episode)

    hidden = json.loads(cli("secret", "mark", "session:s1", "--json"))
    assert hidden == {
        "session": "s1",
        "dm_only": True,
        "facts_made_secret": 0,
        "relationships_made_secret": len(ended["participants"]) + len(ended["mentioned"]),
    }
    assert json.loads(cli("entity", "show", "episode-s1", "--json"))["entity"]["visibility"][
        "secret"
    ]
    assert "readable by NPCs" in cli("secret", "reveal", "session:s1")
    assert "shown to NPCs" in cli("secret", "reveal", f"line:{line['id']}")

    assert "No line line:999999" in cli("secret", "mark", "line:999999", expect=2)
    assert "No session 'nope'" in cli("secret", "mark", "session:nope", expect=2)
    assert "--known-by is for" in cli(
        "secret", "mark", "session:s1", "--known-by", "Brannoch", expect=2
    )


def test_an_empty_transcript_is_refused_and_makes_no_session(tmp_path: Path, glyphoxa: Cli) -> None:
    night = tmp_path / "night-one.txt"
    night.write_text("Kael: Any news of the caravan?\n")
    assert glyphoxa("ingest", str(night), "--session", "s1", "--campaign", "salt").returncode == 0
    for name, text in (("empty.txt", ""), ("blank.jsonl", "\n  \n\n")):
        file = tmp_path / name
        file.write_text(text)
        refused = glyphoxa("ingest", str(file), "--session", "s2", "--campaign", "salt")
        assert refused.returncode == 2
        assert refused.stderr == (
            f"glyphoxa-mcp: error: {file}: the transcript has no lines (the file is empty or "
            "blank); nothing was stored.\n"
        )
    listed = glyphoxa("session", "list", "--campaign", "salt", "--json")
    assert [s["id"] for s in json.loads(listed.stdout)] == ["s1"]
