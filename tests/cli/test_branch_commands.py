"""`campaign fork|branches|delete`, `session delete`, `transcript forget`, in process on a
clone of the saga (tests/storage/saga_fixtures.py)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import threading
from collections.abc import AsyncIterator

import pytest

from glyphoxa_mcp.cli import main
from glyphoxa_mcp.providers.wordllama_embedder import WordLlamaEmbedder
from tests.cli.conftest import Cli
from tests.cli.runner import Ran, environment, run_in_process
from tests.conftest import DatabaseFactory, PostgresForTests
from tests.storage.saga_fixtures import CAMPAIGN, FIRST, LATER, clone_of, saga_dsn


@pytest.fixture(scope="module")
def seeded(test_server: PostgresForTests) -> str:
    return saga_dsn(test_server, WordLlamaEmbedder())


@pytest.fixture
async def saga_cli(databases: DatabaseFactory, seeded: str) -> AsyncIterator[tuple[Cli, str]]:
    """`glyphoxa-mcp ARGS --dsn <a clone of the saga>`, and that DSN."""
    async with clone_of(databases, seeded) as db:
        dsn = db.location.dsn

        def run(*args: str, stdin: str | None = None) -> Ran:
            return run_in_process(*args, "--dsn", dsn, stdin=stdin)

        yield run, dsn


def on_a_terminal(dsn: str, answer: str, *args: str) -> Ran:
    """`glyphoxa-mcp ARGS --dsn DSN` in process with a terminal as its stdin, where `answer`
    has been typed."""
    controller, terminal = os.openpty()
    out, err, code = io.StringIO(), io.StringIO(), []
    with os.fdopen(terminal, "r") as stdin:
        os.write(controller, answer.encode())

        def call() -> None:
            saved, sys.stdin = sys.stdin, stdin
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    code.append(main([*args, "--dsn", dsn]))
            finally:
                sys.stdin = saved

        with environment(None):
            worker = threading.Thread(target=call)
            worker.start()
            worker.join(timeout=60)
    os.close(controller)
    assert code, "the command did not finish"
    return Ran(code[0], out.getvalue(), err.getvalue())


@pytest.mark.slow
async def test_a_branch_is_forked_shown_and_deleted_with_its_own_branches(
    saga_cli: tuple[Cli, str],
) -> None:
    glyphoxa, _ = saga_cli
    forked = glyphoxa("campaign", "fork", CAMPAIGN, "east", "--at-session", FIRST)
    assert forked.returncode == 0, forked.stderr
    assert forked.stdout.startswith(
        f"Forked campaign 'ashfall' into 'east' as it stood after session '{FIRST}' "
        f"(left out: {LATER}): 1 session, 6 lines, "
    )
    assert "token create --campaign east" in forked.stdout
    again = glyphoxa("campaign", "fork", "east", "east-2", "--name", "East again", "--json")
    assert json.loads(again.stdout)["rows"]["session_entries"] == 6

    tree = glyphoxa("campaign", "branches", "east-2").stdout.splitlines()
    assert tree[0] == "ashfall (Ashfall)"
    assert tree[1].startswith(f"└── east (Ashfall (east))  forked after session {FIRST}, ")
    assert tree[2].startswith("    └── east-2 (East again)  forked ")
    assert tree[2].endswith("<- this one") and len(tree) == 3

    refused = glyphoxa("campaign", "delete", "east", "--yes")
    assert refused.returncode == 1
    assert "has branches (east-2); nothing was deleted" in refused.stderr
    assert "--with-branches" in refused.stderr and "--keep-branches" in refused.stderr
    unasked = glyphoxa("campaign", "delete", "east", "--with-branches")
    assert unasked.returncode == 2
    assert unasked.stderr == (
        "glyphoxa-mcp: error: campaign delete asks before deleting, and no terminal is there "
        "to answer: pass --yes to delete without asking.\n"
    )
    deleted = glyphoxa("campaign", "delete", "east", "--with-branches", "--yes")
    assert deleted.stdout == (
        "Deleted campaign 'east' and its branches east-2: 2 sessions, 12 lines, 8 entities.\n"
    )
    assert glyphoxa("campaign", "branches", CAMPAIGN).stdout == "ashfall (Ashfall)  <- this one\n"


async def test_campaign_delete_asks_on_a_terminal_for_the_campaigns_id(
    saga_cli: tuple[Cli, str],
) -> None:
    glyphoxa, dsn = saga_cli
    kept = on_a_terminal(dsn, "yes\n", "campaign", "delete", CAMPAIGN)
    assert kept.returncode == 1
    assert kept.stderr == (
        "Delete campaign 'ashfall' (2 sessions, 10 lines, 6 entities) and everything stored "
        "for it? This cannot be undone.\nType the campaign's id to delete it: "
        "Nothing was deleted.\n"
    )
    assert glyphoxa("status", "--json").returncode == 0
    deleted = on_a_terminal(dsn, f"{CAMPAIGN}\n", "campaign", "delete", CAMPAIGN)
    assert deleted.returncode == 0 and deleted.stdout.startswith("Deleted campaign 'ashfall': ")
    assert json.loads(glyphoxa("status", "--json").stdout)["campaigns"] == []


@pytest.mark.slow
async def test_a_line_is_forgotten_and_a_session_deleted_by_their_ids(
    saga_cli: tuple[Cli, str],
) -> None:
    glyphoxa, _ = saga_cli
    shown = glyphoxa("session", "show", FIRST, "--campaign", CAMPAIGN, "--grep", "xylophonist")
    line = shown.stdout.splitlines()[-1].split()[0]
    assert line.startswith("line:")

    forgot = glyphoxa("transcript", "forget", line, "--campaign", CAMPAIGN)
    assert forgot.returncode == 0, forgot.stderr
    assert forgot.stdout == (
        f"Forgot {line} of session '{FIRST}'. 3 passages held it; 2 were cut again from the "
        "lines left. Its summary was written again without it and waits for review.\n"
    )
    listed = glyphoxa("session", "list", "--campaign", CAMPAIGN).stdout
    assert "extractive (to review: lines were forgotten)" in listed
    for reference, error in (
        (line, f"No line {line} in campaign 'ashfall'."),
        ("fact:3", "'fact:3': name the line as line:ID"),
        ("line:x", "'line:x': the id after line: is a number."),
    ):
        refused = glyphoxa("transcript", "forget", reference, "--campaign", CAMPAIGN)
        assert refused.returncode == 2 and refused.stderr.startswith(
            f"glyphoxa-mcp: error: {error}"
        ), refused.stderr

    deleted = glyphoxa("session", "delete", LATER, "--campaign", CAMPAIGN)
    assert deleted.stdout.startswith(f"Deleted session '{LATER}': 4 lines, ")
    assert deleted.stdout.endswith(
        "its episode, 1 proposal.\n"
        "Kept 1 fact and 0 relationships the DM decided (no longer linked to it).\n"
    )
    missing = glyphoxa("session", "delete", LATER, "--campaign", CAMPAIGN)
    assert missing.returncode == 2 and f"No session '{LATER}'" in missing.stderr
