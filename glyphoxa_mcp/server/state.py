"""What every tool and resource of one MCP server shares: the viewer's read service, the
tier's limits and the process's admission control. Built by the host, handed to the
server's lifespan; and how a tool's failure reaches the tier gate as a typed outcome."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from glyphoxa_mcp.domain.tiers import TierPolicy
from glyphoxa_mcp.errors import DatabaseUnavailableError, GlyphoxaError
from glyphoxa_mcp.server.admission import Admission
from glyphoxa_mcp.server.outcomes import is_bug, outcome, told
from glyphoxa_mcp.views.view import View

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServerState:
    view: View
    policy: TierPolicy
    # Shared by every server of a process (they share the database); None: one of its own.
    admission: Admission | None = None


def state_of(ctx: Context[Any, Any]) -> ServerState:
    state = ctx.request_context.lifespan_context
    assert isinstance(state, ServerState), "the server's lifespan must yield a ServerState"
    return state


@dataclass
class Failure:
    """What a tool call failed with, told to the tier gate around it: the SDK hands the gate
    only the error's text."""

    error: GlyphoxaError | None = None

    @property
    def lost(self) -> bool:
        """The call lost its database connection (or could not get one)."""
        return isinstance(self.error, DatabaseUnavailableError)


# Set by the tier gate around each call; a tool run outside one reports to nobody.
FAILURE: ContextVar[Failure | None] = ContextVar("glyphoxa_failure", default=None)


@contextlib.contextmanager
def tool_errors() -> Iterator[None]:
    """Our errors become tool errors: the model reads the message (which says whether and
    when to retry), the tier gate the typed outcome (server/outcomes.py); no traceback is
    logged. Anything else is a bug: logged with its traceback, answered as an internal
    error, never as the SDK's bare "Error executing tool"."""
    failure = FAILURE.get()
    try:
        yield
    except Exception as exc:
        # A lost or refused connection is told as unavailable; the tier gate (with the
        # guard) tells whether the database is down or the call is tried once more.
        error = outcome(exc)
        if is_bug(exc, error):
            log.exception("a tool failed unexpectedly")
        if failure is not None:
            failure.error = error
        raise ToolError(told(error)) from exc
