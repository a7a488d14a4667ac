"""`glyphoxa-mcp serve` in a subprocess, reached by the MCP SDK's own stdio client."""

from __future__ import annotations

import sys

from mcp import StdioServerParameters
from mcp.client import Client

from glyphoxa_mcp.bench.dataset import CAMPAIGN_ID
from glyphoxa_mcp.domain.tiers import Tier

# Longer than any deadline the benchmark gives a server: no answer by then is a failure.
READ_TIMEOUT_S = 90


def serve_parameters(
    dsn: str, npc_id: str | None, tier: Tier, deadline_ms: int
) -> StdioServerParameters:
    """`serve` as a client configuration would start it: this Python, the offline embedder
    (the deadline aside). The DSN travels in the environment, not on a command line others
    can read."""
    args = ["-m", "glyphoxa_mcp", "serve", "--campaign", CAMPAIGN_ID, "--tier", tier.value]
    args += [f"--{tier.value.lower()}-deadline-ms", str(deadline_ms)]
    if npc_id is not None:
        args += ["--npc", npc_id]
    return StdioServerParameters(
        command=sys.executable,
        args=args,
        env={"GLYPHOXA_DSN": dsn, "GLYPHOXA_EMBEDDER": "local"},
    )


def stdio_client(dsn: str, npc_id: str | None, tier: Tier, deadline_ms: int) -> Client:
    """A client (to enter) of a new `serve` subprocess; a request with no answer within
    `READ_TIMEOUT_S` fails instead of hanging the run."""
    parameters = serve_parameters(dsn, npc_id, tier, deadline_ms)
    return Client(parameters, read_timeout_seconds=READ_TIMEOUT_S)
