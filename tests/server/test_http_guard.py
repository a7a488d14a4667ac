"""The Host header parser of the Host and Origin guard: one host, in the forms a client
sends, or nothing. (pure; the guard in front of a served app is in test_table_http.py)"""

from __future__ import annotations

import pytest

from glyphoxa_mcp.server.http_guard import HostHeader, HostRules, parse_host


@pytest.mark.parametrize(
    ("header", "parsed"),
    [
        ("localhost", HostHeader("localhost", None)),
        ("Memory.Example:8765", HostHeader("memory.example", 8765)),
        ("127.0.0.1:80", HostHeader("127.0.0.1", 80)),
        ("[::1]", HostHeader("::1", None)),
        ("[::1]:8765", HostHeader("::1", 8765)),
        ("[FE80::1]:65535", HostHeader("fe80::1", 65535)),
        ("glyphoxa_memory-1", HostHeader("glyphoxa_memory-1", None)),
    ],
)
def test_the_forms_a_client_sends_are_read(header: str, parsed: HostHeader) -> None:
    assert parse_host(header) == parsed


@pytest.mark.parametrize(
    "header",
    [
        "",
        "a.example,b.example",  # several hosts
        "a.example b.example",
        "evil.example@127.0.0.1",  # userinfo
        "127.0.0.1@evil.example",
        " localhost",
        "local host",
        "localhost\t",
        "localhost:",  # an empty port
        "localhost:0",
        "localhost:65536",
        "localhost:80x",
        "localhost:+80",
        "localhost:80:80",
        "localhost/",
        "localhost/path",
        "localhost#",
        "localhost.",
        ".localhost",
        "-localhost",
        "a..b",
        "::1",  # IPv6 without brackets
        "[::1",
        "[::1]x",
        "[::1]:",
        "[fe80::1%eth0]",
        "[not-ipv6]",
        "256.0.0.1",
        "127.1",
        "1.2.3.4.5",
        "127.0.0.01",
        "x" * 254,
        "caf\u00e9.example",
    ],
)
def test_anything_else_is_refused(header: str) -> None:
    assert parse_host(header) is None


def test_allowed_hosts_match_with_or_without_their_port() -> None:
    rules = HostRules(["memory.example", "vtt.example:443", "[fe80::1]:8765"])

    def allowed(header: str) -> bool:
        parsed = parse_host(header)
        assert parsed is not None
        return rules.host_allowed(parsed)

    assert allowed("memory.example:1234") and allowed("Memory.Example")
    assert allowed("vtt.example:443") and not allowed("vtt.example:80")
    assert allowed("[fe80::1]:8765") and not allowed("[fe80::1]:80")
    assert allowed("[::1]:9") and allowed("127.0.0.1") and allowed("localhost:1")
    assert not allowed("evil.example")
