"""The official MCP conformance suite against the HTTP server: the scenarios a memory server
is expected to pass. Runs the suite's own package through npx (Node.js 20+)."""

from __future__ import annotations

import shutil

import anyio
import pytest

from glyphoxa_mcp.db.database import Database
from tests.server.http_serving import load_demo, serving

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("npx") is None, reason="needs Node.js (npx)"),
]

SUITE = "@modelcontextprotocol/conformance@0.1.10"
# The scenarios of the suite that a server without prompts, sampling or media tools answers;
# logging-set-level and completion-complete were the two it failed before. Left out:
# resources-subscribe and resources-unsubscribe subscribe to `test://watched-resource`, a
# resource of the suite's own reference server, and this server refuses subscriptions to
# anything but its own URIs (tests/server/test_subscription_limits.py; subscribing to ours is
# tested in test_subscriptions.py).
SCENARIOS = [
    "server-initialize",
    "ping",
    "logging-set-level",
    "completion-complete",
    "tools-list",
    "tools-call-error",
    "resources-list",
    "server-sse-multiple-streams",
]


@pytest.fixture
def db(db256: Database) -> Database:
    return db256


async def test_the_conformance_scenarios_pass(db: Database) -> None:
    await load_demo(db)
    failed = {}
    async with serving(db, auth=False) as base:
        url = f"{base}/c/demo/dm/standard/mcp"
        for scenario in SCENARIOS:
            with anyio.fail_after(180):
                run = await anyio.run_process(
                    ["npx", "-y", SUITE, "server", "--url", url, "--scenario", scenario],
                    check=False,
                )
            output = run.stdout.decode(errors="replace")
            if run.returncode != 0 or " 0 failed" not in output:
                failed[scenario] = output[-800:]
    assert not failed, failed
