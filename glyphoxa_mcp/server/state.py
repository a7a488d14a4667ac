"""What every tool and resource of one MCP server shares: the viewer's read service and the
tier's limits. Built by the host, handed to the server's lifespan."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from glyphoxa_mcp.db.guard import UNAVAILABLE
from glyphoxa_mcp.errors import DatabaseUnavailableError, GlyphoxaError
from glyphoxa_mcp.server.tiers import TierPolicy
from glyphoxa_mcp.views.view import View


@dataclass(frozen=True)
class ServerState:
    view: View
    policy: TierPolicy


def state_of(ctx: Context[Any, Any]) -> ServerState:
    state = ctx.request_context.lifespan_context
    assert isinstance(state, ServerState), "the server's lifespan must yield a ServerState"
    return state


@contextlib.contextmanager
def tool_errors() -> Iterator[None]:
    """Our errors become tool errors: the model reads the message; no traceback is logged."""
    try:
        yield
    except DatabaseUnavailableError as exc:
        # One message for every way the database can be out of reach, so the tier gate
        # knows the call failed for that (see TierGate) and no driver text reaches the model.
        raise ToolError(UNAVAILABLE) from exc
    except GlyphoxaError as exc:
        raise ToolError(str(exc)) from exc
