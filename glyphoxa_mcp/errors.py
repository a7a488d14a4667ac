"""The one error tree. Each class's docstring is its default, actionable message."""

from __future__ import annotations


class GlyphoxaError(Exception):
    """Something went wrong in glyphoxa-mcp."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or (self.__doc__ or "").strip())

    @property
    def message(self) -> str:
        return str(self)


class ConfigurationError(GlyphoxaError):
    """The configuration is invalid; run `glyphoxa-mcp --help` for the options."""


class InvalidInputError(GlyphoxaError):
    """The input is invalid."""

    def __init__(self, message: str | None = None, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class NotFoundError(GlyphoxaError):
    """The requested item does not exist."""


class ConflictError(GlyphoxaError):
    """The change conflicts with what is already stored; nothing was written."""


class DatabaseError(GlyphoxaError):
    """The database reported an error; nothing was written by the failed statement."""


class DatabaseUnavailableError(DatabaseError):
    """Cannot reach the database. Check --dsn / GLYPHOXA_DSN, or unset it for the embedded one."""


class UnconfirmedWriteError(DatabaseError):
    """The write was not confirmed before its deadline; send it again (a resend is safe)."""

    def __init__(
        self, message: str | None = None, *, maybe_stored: bool = False, retry_after_ms: int = 0
    ) -> None:
        super().__init__(message)
        # False: nothing of it was stored. True: the commit was sent and not confirmed, so it
        # may have been stored; either way a resend of the same items stores each once.
        self.maybe_stored = maybe_stored
        self.retry_after_ms = retry_after_ms


class MigrationError(DatabaseError):
    """The database schema could not be brought up to date."""


class EmbeddingDimensionMismatchError(MigrationError):
    """The configured embedding dimension does not match the one the database was created with."""
