from __future__ import annotations

from collections.abc import Callable

import pytest

from glyphoxa_mcp.db.database import Database
from tests.cli.runner import Ran, run_in_process

Cli = Callable[..., Ran]


@pytest.fixture
def cli_dsn(db256: Database) -> str:
    """A migrated database of this test's own, sized for the default offline model."""
    return db256.location.dsn


@pytest.fixture
def glyphoxa(cli_dsn: str) -> Cli:
    """`glyphoxa-mcp ARGS --dsn <this test's database>`, in process."""

    def run(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> Ran:
        return run_in_process(*args, "--dsn", cli_dsn, env=env, stdin=stdin)

    return run
