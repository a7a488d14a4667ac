"""DNS-rebinding protection for every HTTP route, whatever address the server is bound to.

A web page in the DM's browser can make requests to the server (its own origin, or a name it
re-points at the server's address). Two checks stop it: the Host header must name the server
(loopback names, or a host the operator allowed), else 421; an Origin header, when a browser
sends one, must be the server's own or one the operator allowed, else 403. Before both, the
Host header must be one well-formed host (`parse_host`), else 400: a value two parsers could
read differently is where such checks are slipped past.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from glyphoxa_mcp.access import is_loopback


@dataclass(frozen=True)
class HostHeader:
    name: str
    """Lower case; an IPv6 address without its brackets."""
    port: int | None


# A DNS label; '_' too, as container and intranet names have it.
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_PORT = re.compile(r":([0-9]{1,5})")
MAX_NAME = 253


def parse_host(header: str) -> HostHeader | None:
    """A Host header as one host and an optional port ('Example.org:8765', '127.0.0.1',
    '[::1]:80'), or None when it is anything else: several hosts, userinfo ('a@b'),
    whitespace, a bare or zoned IPv6 address, a port out of range, trailing characters.
    A header that could be read two ways is refused, never guessed at."""
    value = header.lower()
    if value.startswith("["):
        address, bracket, rest = value[1:].partition("]")
        if not bracket or "%" in address:
            return None
        try:
            name = str(ipaddress.IPv6Address(address))
        except ValueError:
            return None
    else:
        name, colon, port_text = value.partition(":")
        rest = colon + port_text
        if len(name) > MAX_NAME or not _NAME.fullmatch(name):
            return None
        # A name ending in a number is an IPv4 address (as URL parsers read it), and must be
        # a whole one.
        if name.rpartition(".")[2].isdigit():
            try:
                name = str(ipaddress.IPv4Address(name))
            except ValueError:
                return None
    if not rest:
        return HostHeader(name, None)
    port = _PORT.fullmatch(rest)
    if port is None or not 1 <= int(port.group(1)) <= 65535:
        return None
    return HostHeader(name, int(port.group(1)))


class HostRules:
    """Which Host and Origin headers the server answers. An allowed host or origin may name a
    port ('memory.example:8765'); without one, every port of that name is allowed."""

    def __init__(self, hosts: Iterable[str] = (), origins: Iterable[str] = ()) -> None:
        self.hosts = frozenset(h.strip().lower() for h in hosts if h.strip())
        self.origins = frozenset(o.strip().lower().rstrip("/") for o in origins if o.strip())

    def host_allowed(self, host: HostHeader) -> bool:
        if is_loopback(host.name):
            return True
        names = {host.name, f"[{host.name}]"} if ":" in host.name else {host.name}
        if host.port is not None:
            names |= {f"{name}:{host.port}" for name in set(names)}
        return not names.isdisjoint(self.hosts)

    def origin_allowed(self, origin: str | None, host_header: str | None) -> bool:
        """An absent Origin is a non-browser client; 'null' and foreign origins are refused."""
        if origin is None:
            return True
        origin = origin.strip().lower().rstrip("/")
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return False
        if is_loopback(parts.hostname) or origin in self.origins:
            return True
        if f"{parts.scheme}://{parts.hostname}" in self.origins:
            return True
        # Same-origin: a page served by this server under a Host that passed the check.
        return host_header is not None and parts.netloc == host_header.strip().lower()


class HostGuard:
    """ASGI middleware applying `HostRules` to every HTTP request before anything else."""

    def __init__(self, app: ASGIApp, rules: HostRules) -> None:
        self.app = app
        self.rules = rules

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        hosts = [v.decode("latin-1") for k, v in scope["headers"] if k == b"host"]
        host = headers.get("host")
        parsed = parse_host(hosts[0]) if len(hosts) == 1 else None
        if parsed is None:
            refusal = JSONResponse(
                {
                    "error": "The request needs one Host header naming one host (a name, an "
                    "IPv4 address or a bracketed IPv6 address), with an optional :port."
                },
                status_code=400,
            )
        elif not self.rules.host_allowed(parsed):
            refusal = JSONResponse(
                {"error": "This server does not answer to that Host; see --allowed-host."},
                status_code=421,
            )
        elif not self.rules.origin_allowed(headers.get("origin"), host):
            refusal = JSONResponse(
                {"error": "Requests from that Origin are refused; see --allowed-origin."},
                status_code=403,
            )
        else:
            await self.app(scope, receive, send)
            return
        await refusal(scope, receive, send)
