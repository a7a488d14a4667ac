from __future__ import annotations

import pytest

from glyphoxa_mcp.db.vector_connection import scans_iteratively


@pytest.mark.parametrize(
    ("version", "iterative"),
    [("0.8.5", True), ("0.8.0", True), ("1.0", True), ("0.7.4", False), ("0.6.2", False)],
)
def test_pgvector_0_8_and_newer_scan_iteratively_and_older_servers_keep_the_wider_search(
    version: str, iterative: bool
) -> None:
    assert scans_iteratively(version) is iterative


def test_a_server_without_pgvector_never_scans_iteratively() -> None:
    assert scans_iteratively(None) is False
