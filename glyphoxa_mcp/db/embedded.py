"""The embedded PostgreSQL 16 + pgvector from the `pgserver` wheel.

pgserver keeps one server per data directory and counts the processes using it under an
inter-process lock, so a running `serve` and a CLI command share the same server; the last
process to leave stops it. A process killed before it can leave is dropped from the count by
the keeper (keeper.py), which stops the server when nobody is left.
"""

from __future__ import annotations

import logging
import subprocess
import warnings
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from glyphoxa_mcp.db.keeper import ensure_keeper
from glyphoxa_mcp.errors import DatabaseUnavailableError

log = logging.getLogger(__name__)

EMBEDDED_DATABASE = "glyphoxa"


def postgres_data_dir(data_dir: Path) -> Path:
    return data_dir / "postgres"


def start_embedded_server(data_dir: Path, *, delete_on_exit: bool = False) -> str:
    """Start (or join) the embedded server for `data_dir`; return the DSN of its admin database.

    The last process using it stops it at exit (and deletes its data if `delete_on_exit`).
    Blocking: run it in a worker thread from async code.
    """
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset and falls back to /tmp, which is fine.
        warnings.simplefilter("ignore")
        import pgserver

    pgdata = postgres_data_dir(data_dir)
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = pgserver.get_server(
                pgdata, cleanup_mode="delete" if delete_on_exit else "stop"
            )
    except (OSError, subprocess.SubprocessError) as exc:
        log_file = pgdata / "log"
        raise DatabaseUnavailableError(
            f"Could not start the embedded PostgreSQL in {pgdata}: {exc}. "
            f"Its log is {log_file}. Use --data-dir for another location, or --dsn for an "
            "external server."
        ) from exc
    log.info("embedded PostgreSQL running for %s", pgdata)
    try:
        ensure_keeper(Path(server.pgdata), Path(server.lock_path))
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning(
            "no keeper for %s (%s): if this process is killed, the server runs on", pgdata, exc
        )
    return server.get_uri()


def database_dsn(admin_dsn: str, database: str) -> str:
    """The same server's DSN for another database."""
    return urlunsplit(urlsplit(admin_dsn)._replace(path="/" + quote(database)))
