"""`main`: every failure is one line on stderr and an exit code, never a traceback."""

from __future__ import annotations

import argparse
import logging

import anyio
import pytest

from glyphoxa_mcp.cli import campaign_commands
from glyphoxa_mcp.errors import InvalidInputError
from tests.cli.runner import run_in_process

ONE_LINE = (
    "glyphoxa-mcp: error: internal error (ZeroDivisionError); "
    "rerun with --log-level DEBUG for the details\n"
)


async def broken(args: argparse.Namespace) -> int:
    return 1 // 0


def test_an_unexpected_failure_is_one_line_and_exit_1(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(campaign_commands, "run_sample", broken)
    result = run_in_process("campaign", "sample")
    assert (result.returncode, result.stderr) == (1, ONE_LINE)


def test_with_log_level_debug_the_traceback_is_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(campaign_commands, "run_sample", broken)
    caplog.set_level(logging.DEBUG, logger="glyphoxa_mcp.cli")
    result = run_in_process("campaign", "sample", "--log-level", "DEBUG")
    assert result.returncode == 1 and result.stderr.endswith(ONE_LINE)
    [record] = [r for r in caplog.records if r.exc_info]
    assert record.levelno == logging.DEBUG and record.exc_info is not None
    assert record.exc_info[0] is ZeroDivisionError


async def fails_in_a_task_group(args: argparse.Namespace) -> int:
    async def refuse() -> None:
        raise InvalidInputError("name: must not be blank")

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(refuse)
    return 0


def test_an_error_raised_in_a_task_group_is_reported_by_its_own_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(campaign_commands, "run_sample", fails_in_a_task_group)
    result = run_in_process("campaign", "sample")
    assert (result.returncode, result.stderr) == (
        2,
        "glyphoxa-mcp: error: name: must not be blank\n",
    )
