"""`glyphoxa-mcp vocabulary`: the sample campaign's names for a speech-to-text service."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

from glyphoxa_mcp.campaign.sample import bundled
from tests.cli.conftest import Cli


@pytest.mark.slow
def test_the_names_in_each_format_and_in_an_npcs_scope(tmp_path: Path, glyphoxa: Cli) -> None:
    campaign = tmp_path / "campaign.yaml"
    campaign.write_text(bundled("campaign.yaml"))
    assert glyphoxa("campaign", "load", str(campaign), "--campaign", "demo").returncode == 0
    plain = glyphoxa("vocabulary", "--campaign", "demo").stdout.splitlines()
    assert plain[0] != "" and "Salt Knives" in plain and "Ysolde" in " ".join(plain)
    assert len(plain) == len({term.casefold() for term in plain})  # each once
    as_ysolde = json.loads(
        glyphoxa("vocabulary", "--campaign", "demo", "--npc", "ysolde", "--format", "json").stdout
    )
    assert "Salt Knives" not in as_ysolde["terms"] and as_ysolde["campaign"] == "demo"
    deepgram = parse_qsl(
        glyphoxa("vocabulary", "--campaign", "demo", "--format", "deepgram").stdout.strip()
    )
    assert deepgram and {key for key, _ in deepgram} == {"keyterm"}
    assembly = json.loads(
        glyphoxa("vocabulary", "--campaign", "demo", "--format", "assemblyai").stdout
    )
    assert assembly["boost_param"] == "high" and "Salt Knives" in assembly["word_boost"]
    unknown = glyphoxa("vocabulary", "--campaign", "demo", "--npc", "ysold")
    assert unknown.returncode == 2 and "Did you mean ysolde" in unknown.stderr
