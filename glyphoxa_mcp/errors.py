"""The one error tree. Each class's docstring is its default, actionable message."""

from __future__ import annotations


class GlyphoxaError(Exception):
    """Something went wrong in glyphoxa-mcp."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or " ".join((self.__doc__ or "").split()))

    @property
    def message(self) -> str:
        return str(self)


class ConfigurationError(GlyphoxaError):
    """The configuration is invalid; run `glyphoxa-mcp --help` for the options."""


class EmbeddingModelMismatchError(ConfigurationError):
    """The configured embedding model is not the one that made this database's vectors."""


class ProviderError(GlyphoxaError):
    """The provider failed; check its URL, key and model."""


class InvalidInputError(GlyphoxaError):
    """The input is invalid."""

    def __init__(self, message: str | None = None, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class FormInvalid(InvalidInputError):
    """What the page sent breaks a rule; each problem names its field."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


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


# What a reader (a tool call, a resource read) is told, one typed outcome per reason, each
# message ending with one sentence on whether and when to retry.


class MemoryUnavailableError(DatabaseUnavailableError):
    """Memory unavailable: the campaign database is not answering. Try again shortly."""


class MemoryBusyError(GlyphoxaError):
    """Memory is busy: this call cannot be answered within its deadline right now. Retry in a
    moment."""

    def __init__(
        self, retry_after_ms: int, message: str | None = None, *, waited_ms: int | None = None
    ) -> None:
        super().__init__(
            message
            or "Memory is busy: this call cannot be answered within its deadline right now. "
            f"Retry after {retry_after_ms} ms."
        )
        self.retry_after_ms = retry_after_ms
        # Set when the call waited for a place first (a wait that ran longer than foreseen).
        self.waited_ms = waited_ms


class CallDeadlineError(GlyphoxaError):
    """The call did not finish within its deadline and was cancelled. Retry once; if it is
    cancelled again, ask for fewer results or use a deeper tier."""


class InternalError(GlyphoxaError):
    """The call failed inside glyphoxa-mcp (the server log says why). Retry once; if it fails
    again, retrying will not help."""


class BenchError(GlyphoxaError):
    """A measured operation failed; the benchmark stopped rather than time a failure."""


# What the memory guard (db/guard.py) raises when a call's deadline passes, for the gates in
# server/ to turn into one of the outcomes above; never shown to a caller as it is.


class DeadlineExceeded(Exception):
    """The call ran past its deadline while the database was answering."""


class CheckOutstanding(DeadlineExceeded):
    """The call ran past its deadline while the guard's own check of the database was still
    out: a stalled database or only a slow one, not yet known."""


class MemoryBusy(DeadlineExceeded):
    """The call ran past its deadline with every database connection taken: the server is
    overloaded, not the call too big."""


# A bad argument's own message names the field and the rule; this sentence follows it.
BAD_ARGUMENT_RETRY = "Do not retry unchanged: correct the argument first."
# After a statement the database refused (a read; writes say what to resend themselves).
REFUSED_RETRY = "Retry once; if it fails again, retrying will not help."


def with_retry_advice(exc: GlyphoxaError) -> str:
    """`exc`'s message, followed by whether and when to retry when it does not say so."""
    if isinstance(exc, InvalidInputError | NotFoundError | ConflictError):
        return f"{exc.message} {BAD_ARGUMENT_RETRY}"
    if type(exc) is DatabaseError or isinstance(exc, MigrationError):
        return f"{exc.message} {REFUSED_RETRY}"
    return exc.message
