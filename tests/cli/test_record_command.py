"""`record --session ID`: a live transcript from stdin, a transaction per line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glyphoxa_mcp.campaign.sample import bundled
from tests.cli.conftest import Cli

BRIDGE_LINE = json.dumps(
    {
        "utterance_id": "b1",
        "speaker_id": "lyra",
        "speaker_name": "Lyra",
        "text": "Dove wreck was seen at the docks",
        "timestamp": "2026-11-20T19:00:05+00:00",
    }
)
STREAM = "\n".join(
    [
        "Kael: We should ask tar kwell about the cargo",
        BRIDGE_LINE,
        "this line has no speaker",
        '{"speaker_id": 3, "text": "x"}',
        "",
        BRIDGE_LINE,  # a bridge resending after a reconnect
    ]
)


@pytest.mark.slow
def test_record_stores_each_line_as_it_comes_and_skips_bad_ones(
    tmp_path: Path, glyphoxa: Cli
) -> None:
    sample = tmp_path / "campaign.yaml"
    sample.write_text(bundled("campaign.yaml"))
    assert glyphoxa("campaign", "load", str(sample), "--campaign", "demo").returncode == 0

    ran = glyphoxa("record", "--session", "live", "--campaign", "demo", stdin=STREAM)
    assert ran.returncode == 1  # there were bad lines
    echoed = ran.stdout.splitlines()
    assert echoed[0].endswith("Kael: We should ask Tarquel about the cargo  [tar kwell -> Tarquel]")
    assert echoed[1].endswith("Lyra: Dovrek was seen at the docks  [Dove wreck -> Dovrek]")
    assert echoed[2].endswith("already stored") and len(echoed) == 3
    assert "stdin:3: expected a JSON utterance or 'Speaker: text'" in ran.stderr
    assert "stdin:4: Invalid input: speaker_id: Input should be a valid string" in ran.stderr
    assert "2 new utterances (1 already stored), 2 with names put back" in ran.stderr
    assert "Traceback" not in ran.stderr

    status = json.loads(glyphoxa("status", "--json").stdout)
    (demo,) = [c for c in status["campaigns"] if c["id"] == "demo"]
    # Searchable without `process`: one passage each (days apart, so two scenes).
    assert demo["entries"] == 2 and demo["chunks"] == 2

    none = glyphoxa("session", "facts", "live", "--campaign", "demo")
    assert "Session 'live' has no session facts." in none.stdout
    missing = glyphoxa("session", "facts", "nope", "--campaign", "demo")
    assert missing.returncode == 2 and "No session 'nope'" in missing.stderr


@pytest.mark.slow
def test_record_without_campaign_never_makes_one(glyphoxa: Cli) -> None:
    refused = glyphoxa("record", "--session", "live", stdin="Kael: hello\n")
    assert refused.returncode == 2 and "There is no campaign yet." in refused.stderr
    assert json.loads(glyphoxa("status", "--json").stdout)["campaigns"] == []

    named = glyphoxa("record", "--session", "live", "--campaign", "salt", stdin="Kael: hi\n")
    assert named.returncode == 0, named.stderr
    again = glyphoxa("record", "--session", "live", stdin="Kael: hello again\n")
    assert again.returncode == 0, again.stderr
    assert "Campaign 'salt', the only one in this database" in again.stderr
    assert "Recording session 'live' of campaign 'salt'" in again.stderr
    status = json.loads(glyphoxa("status", "--json").stdout)
    assert [(c["id"], c["entries"]) for c in status["campaigns"]] == [("salt", 2)]
