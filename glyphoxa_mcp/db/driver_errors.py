"""Translate driver errors into our error tree, at the storage boundary only."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import asyncpg

from glyphoxa_mcp.errors import (
    ConflictError,
    DatabaseError,
    DatabaseUnavailableError,
    GlyphoxaError,
    InvalidInputError,
    MigrationError,
    NotFoundError,
)

# What a violated constraint means to the person who sent the data.
_CONSTRAINT_HINTS = {
    "campaign_id_fkey": "the campaign does not exist; create it first",
    "session_id_fkey": "the session does not exist in this campaign; create it first",
    "source_id_fkey": "the source entity does not exist in this campaign",
    "target_id_fkey": "the target entity does not exist in this campaign",
    "subject_id_fkey": "the subject entity does not exist in this campaign",
    "superseded_by_fkey": "the replacing fact does not exist",
    "npc_id_fkey": "the NPC does not exist in this campaign",
}


def _hint(exc: asyncpg.PostgresError) -> str:
    constraint = getattr(exc, "constraint_name", None) or ""
    for suffix, hint in _CONSTRAINT_HINTS.items():
        if constraint.endswith(suffix):
            return hint
    return "something it refers to does not exist"


def _code(exc: BaseException) -> str:
    """The SQLSTATE, for the operator's logs and bug reports: the driver's own text stays in
    the cause, never in a message a caller reads (it quotes values, SQL and parameters)."""
    sqlstate = getattr(exc, "sqlstate", None)
    return f" (SQLSTATE {sqlstate})" if sqlstate else ""


def translate(exc: BaseException, action: str) -> GlyphoxaError:
    """Map a driver error raised while doing `action` to the error a caller can act on."""
    if isinstance(exc, asyncpg.ForeignKeyViolationError):
        return NotFoundError(f"Cannot {action}: {_hint(exc)}.")
    if isinstance(exc, asyncpg.UniqueViolationError):
        what = getattr(exc, "constraint_name", None)
        return ConflictError(
            f"Cannot {action}: it already exists" + (f" ({what})." if what else ".")
        )
    if isinstance(exc, asyncpg.CheckViolationError | asyncpg.NotNullViolationError):
        column = getattr(exc, "column_name", None)
        return InvalidInputError(
            f"Cannot {action}: a value breaks the rule {exc.constraint_name or column!r}.",
            field=column,
        )
    if isinstance(exc, asyncpg.ProgramLimitExceededError):
        return InvalidInputError(f"Cannot {action}: a value is too large{_code(exc)}.")
    if isinstance(exc, asyncpg.DataError) or (
        # The driver's own encoding errors (a wrong Python type for a parameter).
        isinstance(exc, asyncpg.InterfaceError) and isinstance(exc, ValueError)
    ):
        return InvalidInputError(
            f"Cannot {action}: a value is malformed or out of range{_code(exc)}."
        )
    if isinstance(exc, asyncpg.ReadOnlySQLTransactionError):
        return DatabaseError(f"Cannot {action}: the database is read-only here.")
    if isinstance(exc, asyncpg.UndefinedTableError | asyncpg.UndefinedFunctionError):
        return MigrationError(
            f"Cannot {action}: the database schema is missing or old{_code(exc)}. "
            "Run `glyphoxa-mcp migrate`."
        )
    if isinstance(exc, asyncpg.QueryCanceledError):
        return DatabaseError(f"Cannot {action}: the query was cancelled (timeout).")
    if isinstance(
        exc, asyncpg.InvalidAuthorizationSpecificationError | asyncpg.InvalidCatalogNameError
    ):
        return DatabaseUnavailableError(
            f"Cannot {action}: the database refused the user, password or database name"
            f"{_code(exc)}. Check --dsn / GLYPHOXA_DSN."
        )
    if isinstance(
        exc,
        asyncpg.PostgresConnectionError
        | asyncpg.CannotConnectNowError
        | asyncpg.TooManyConnectionsError
        | OSError,
    ):
        errno = exc.errno if isinstance(exc, OSError) else None
        reason = f" ({os.strerror(errno).lower()})" if errno else _code(exc)
        return DatabaseUnavailableError(
            f"Cannot {action}: the database is unreachable{reason}. Check --dsn / GLYPHOXA_DSN, "
            "or unset it to use the embedded server."
        )
    return DatabaseError(f"Cannot {action}: the database refused it{_code(exc)}.")


@contextlib.contextmanager
def driver_errors(action: str) -> Iterator[None]:
    """Raise our error, with the driver's as its cause, for anything the driver raises."""
    try:
        yield
    except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
        raise translate(exc, action) from exc
