"""A write within its deadline, and the truth about it when the deadline passes.

A write (a recorder's append, a session fact) either answers within its deadline or is
answered `UnconfirmedWriteError`: not stored, or, when its commit had been sent and was not
confirmed, maybe stored. While the guard knows the database is down, a write is answered at
once. A write that lost its connection is tried once more if the database answers again.

What the writer is told to send again is the caller's to name (`resend`): only it knows the
items (utterances by their id, a fact by its key).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import anyio

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.errors import (
    ConflictError,
    DatabaseError,
    DatabaseUnavailableError,
    InvalidInputError,
    MigrationError,
    NotFoundError,
    UnconfirmedWriteError,
)

T = TypeVar("T")

# While the guard knows the database is down, a write first looks whether it is back for at
# most this long (or half its deadline).
RECHECK_S = 0.5
# A writer told the database is not answering waits this long before sending again (the
# guard probes with backoff from 1 s).
RETRY_WHEN_DOWN_MS = 2000
# A writer told the writes were busy or slow sends again after this long.
RETRY_WHEN_BUSY_MS = 500


@dataclass
class WriteProgress:
    """How far a write got: `commit_sent` once its commit may have reached the database (set
    just before the transaction ends, so a write cut off at that moment says it may have been
    stored rather than that it was not)."""

    commit_sent: bool = False


def unconfirmed(
    reason: str, *, maybe_stored: bool, retry_after_ms: int, resend: str
) -> UnconfirmedWriteError:
    """The error for a writer: what happened (`reason`), whether it may have been stored, and
    `resend`, naming what to send again and why that is safe ("utterances u7, u8 (their
    utterance_id makes a resend safe)")."""
    when = f"in {retry_after_ms / 1000:g} s"
    if maybe_stored:
        message = (
            f"Maybe stored: its commit was sent but {reason}, so it may have been stored; "
            f"resend {resend} {when} (what was stored already is acknowledged, never stored "
            "twice)."
        )
    else:
        message = f"Not stored: {reason}; resend {resend} {when}."
    return UnconfirmedWriteError(message, maybe_stored=maybe_stored, retry_after_ms=retry_after_ms)


# The caller's own mistakes: sending it again as it is would fail the same way.
NOT_RETRYABLE = (InvalidInputError, NotFoundError, ConflictError, MigrationError)


async def write_within(
    db: Database,
    deadline_s: float,
    write: Callable[[WriteProgress], Awaitable[T]],
    *,
    resend: str,
) -> T:
    """`write` (on `db`, the write lane) within `deadline_s`, or `UnconfirmedWriteError`
    saying why, whether it may have been stored and to send `resend` again. The caller's own
    mistakes (`NOT_RETRYABLE`) are raised as they are; anything else escaping `write` is
    raised as it is too, unless the deadline had passed (a driver cut off mid-statement
    raises odd things)."""
    guard = db.guard
    progress = WriteProgress()
    deadline_ms = round(deadline_s * 1000)
    if not guard.available and not await guard.confirm(min(deadline_s / 2, RECHECK_S)):
        raise unconfirmed(
            "the campaign database is not answering",
            maybe_stored=False,
            retry_after_ms=RETRY_WHEN_DOWN_MS,
            resend=resend,
        )
    began = time.monotonic()
    lost: BaseException | None = None
    with anyio.move_on_after(deadline_s) as scope:
        for attempt in range(2):
            try:
                return await write(progress)
            except NOT_RETRYABLE:
                raise
            except DatabaseUnavailableError as exc:
                lost = exc
            except DatabaseError as exc:
                if scope.cancel_called:
                    break
                sqlstate = getattr(exc.__cause__, "sqlstate", None)
                code = f" (SQLSTATE {sqlstate})" if sqlstate else ""
                raise unconfirmed(
                    f"the database refused the write{code}",
                    maybe_stored=progress.commit_sent,
                    retry_after_ms=RETRY_WHEN_BUSY_MS,
                    resend=resend,
                ) from exc
            except Exception:
                if scope.cancel_called:
                    break
                raise
            # The connection was lost: once more on a fresh one, if the database answers.
            guard.report()
            left = deadline_s - (time.monotonic() - began)
            if attempt == 1 or left <= 0 or not await guard.confirm(min(left, RECHECK_S)):
                break
    if lost is not None and not scope.cancel_called:
        raise unconfirmed(
            "the connection to the campaign database was lost",
            maybe_stored=progress.commit_sent,
            retry_after_ms=RETRY_WHEN_DOWN_MS,
            resend=resend,
        ) from lost
    guard.report()  # look now whether the database still answers
    if not guard.available:
        reason = "the campaign database is not answering"
    elif db.saturated():
        reason = f"every write connection stayed busy past the write deadline of {deadline_ms} ms"
    else:
        reason = f"the write did not finish within its deadline of {deadline_ms} ms"
    retry = RETRY_WHEN_BUSY_MS if guard.available else RETRY_WHEN_DOWN_MS
    raise unconfirmed(
        reason, maybe_stored=progress.commit_sent, retry_after_ms=retry, resend=resend
    ) from lost
