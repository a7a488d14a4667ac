"""What a caller is told when a call or a read fails, decided here and only here: each failure
becomes one typed outcome of errors.py, whose message is the sentence the caller reads.

- the database out of reach (a lost or refused connection, the guard seeing it down):
  `MemoryUnavailableError`, never the driver's text;
- a deadline the guard enforced (db/guard.py's `DeadlineExceeded` and its kinds):
  `CallDeadlineError`, saying as far as the guard knows why it passed;
- our own errors as they were raised (a bad argument, something not found, busy, ...);
- anything else, a bug: `InternalError`.

Each surface renders the outcome in its own shape, from the type and never from the text:
a tool's error (server/state.py), the tier gate's answer and metric (server/tier_gate.py), a
resource's error (server/resources.py), the HTTP door's 503 (server/hosting.py), the
recorder's error (server/recorder_server.py).
"""

from __future__ import annotations

from glyphoxa_mcp.domain.tiers import TierPolicy
from glyphoxa_mcp.errors import (
    CallDeadlineError,
    CheckOutstanding,
    DatabaseUnavailableError,
    DeadlineExceeded,
    GlyphoxaError,
    InternalError,
    MemoryBusy,
    MemoryUnavailableError,
    with_retry_advice,
)

# What a caller hears while the database is down.
UNAVAILABLE = MemoryUnavailableError().message
# A resource read cancelled at its tier's deadline (in whatever way the guard saw it pass).
READ_PAST_DEADLINE = (
    "The read did not finish within this tier's deadline and was cancelled. Retry once; if "
    "it is cancelled again, read it from a deeper tier."
)


def outcome(exc: Exception, *, past_deadline: CallDeadlineError | None = None) -> GlyphoxaError:
    """The typed outcome of `exc`. A deadline passed where the caller set one gives
    `past_deadline`; where it set none (`past_deadline` None), it is a bug like any other."""
    if isinstance(exc, MemoryUnavailableError):
        return exc
    if isinstance(exc, DatabaseUnavailableError):
        # Lost or refused connections read alike, without driver text.
        return MemoryUnavailableError()
    if isinstance(exc, GlyphoxaError):
        return exc
    if isinstance(exc, DeadlineExceeded) and past_deadline is not None:
        return past_deadline
    return InternalError()


def is_bug(exc: Exception, error: GlyphoxaError) -> bool:
    """Whether `error`, the outcome of `exc`, stands for a bug (neither one of our errors nor
    a deadline where the caller set one): the caller logs `exc` with its traceback."""
    return isinstance(error, InternalError) and error is not exc


def told(error: GlyphoxaError) -> str:
    """The sentence a caller reads for an outcome: its message, with whether and when to
    retry when it does not say so itself."""
    return with_retry_advice(error)


def past_tier_deadline(exc: DeadlineExceeded, tool: str, policy: TierPolicy) -> CallDeadlineError:
    """A tool call cancelled at its tier's deadline, saying why as far as the guard knows:
    its own check of the database was still out, every connection was taken, or the call
    was too big for the tier."""
    tier, deadline_ms = policy.tier.value, policy.deadline_ms
    if isinstance(exc, CheckOutstanding):
        return CallDeadlineError(
            f"{tool} was cancelled at the {tier} tier's deadline of {deadline_ms} ms before the "
            "database answered a check of its own. Retry in a moment: if the database is "
            "down, the next call is told so at once."
        )
    if isinstance(exc, MemoryBusy):
        return CallDeadlineError(
            f"{tool} was cancelled at the {tier} tier's deadline of {deadline_ms} ms with every "
            "database connection in use. Retry in a moment."
        )
    return CallDeadlineError(
        f"{tool} did not finish within the {tier} tier's deadline of {deadline_ms} ms and was "
        "cancelled. Retry once; if it is cancelled again, ask for fewer results or use a "
        "deeper tier."
    )
