"""`token create|list|revoke`: a token per viewer, shown once, listed without its secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glyphoxa_mcp.access import split_token
from glyphoxa_mcp.campaign.sample import bundled
from tests.cli.conftest import Cli


@pytest.mark.slow
def test_tokens_for_an_npc_the_dm_and_a_recorder(tmp_path: Path, glyphoxa: Cli) -> None:
    sample = tmp_path / "campaign.yaml"
    sample.write_text(bundled("campaign.yaml"))
    assert glyphoxa("campaign", "load", str(sample), "--campaign", "demo").returncode == 0

    def create(*args: str) -> dict[str, str]:
        made = glyphoxa("token", "create", "--campaign", "demo", *args, "--json")
        assert made.returncode == 0, made.stderr
        return dict(json.loads(made.stdout))

    npc = create("--npc", "ysolde", "--tier", "fast", "--label", "Ysolde's bridge")
    dm = create("--dm")
    recorder = create("--recorder")
    assert all(split_token(t["token"]) for t in (npc, dm, recorder))
    shown = glyphoxa("token", "create", "--campaign", "demo", "--recorder")
    assert split_token(shown.stdout.strip())
    assert "at /c/demo/record/mcp" in shown.stderr

    listed = json.loads(glyphoxa("token", "list", "--json").stdout)
    kinds = {row["id"]: (row["viewer"], row["npc"], row["max_tier"]) for row in listed}
    assert kinds[npc["id"]] == ("npc", "ysolde", "FAST")
    assert kinds[dm["id"]] == ("dm", None, None)
    assert kinds[recorder["id"]] == ("recorder", None, None)
    assert npc["token"] not in json.dumps(listed)  # never the secret again

    revoked = glyphoxa("token", "revoke", recorder["id"])
    assert revoked.returncode == 0, revoked.stderr
    states = {
        row["id"]: row["state"] for row in json.loads(glyphoxa("token", "list", "--json").stdout)
    }
    assert (states[recorder["id"]], states[dm["id"]]) == ("revoked", "active")

    for args, expected in [
        (("--recorder", "--tier", "deep"), "--tier: a recorder token has no tier"),
        (("--npc", "nobody"), "No entity 'nobody'"),
        (("--dm", "--recorder"), "not allowed with argument"),
    ]:
        refused = glyphoxa("token", "create", "--campaign", "demo", *args)
        assert refused.returncode == 2 and expected in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr
