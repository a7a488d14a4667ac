"""DNS-rebinding protection for every HTTP route, whatever address the server is bound to.

A web page in the DM's browser can make requests to the server (its own origin, or a name it
re-points at the server's address). Two checks stop it: the Host header must name the server
(loopback names, or a host the operator allowed), else 421; an Origin header, when a browser
sends one, must be the server's own or one the operator allowed, else 403.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from glyphoxa_mcp.access import is_loopback


def _split_host(header: str) -> tuple[str, str | None]:
    """'Example.org:8765' -> ('example.org', '8765'); '[::1]:80' -> ('::1', '80')."""
    header = header.strip().lower()
    if header.startswith("["):
        name, _, rest = header[1:].partition("]")
        return name, rest[1:] if rest.startswith(":") else None
    name, sep, port = header.rpartition(":")
    if not sep or ":" in name:  # no port, or a bare IPv6 address
        return header, None
    return name, port


class HostRules:
    """Which Host and Origin headers the server answers. An allowed host or origin may name a
    port ('memory.example:8765'); without one, every port of that name is allowed."""

    def __init__(self, hosts: Iterable[str] = (), origins: Iterable[str] = ()) -> None:
        self.hosts = frozenset(h.strip().lower() for h in hosts if h.strip())
        self.origins = frozenset(o.strip().lower().rstrip("/") for o in origins if o.strip())

    def host_allowed(self, header: str | None) -> bool:
        if not header:
            return False
        name, port = _split_host(header)
        if is_loopback(name):
            return True
        return name in self.hosts or (port is not None and f"{name}:{port}" in self.hosts)

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
        host = headers.get("host")
        if not self.rules.host_allowed(host):
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
