"""What the HTTP door bounds, as settings: how long a client may take to send a request, and
how many sessions and streams one token may hold open. (pure; `serve` and `web` read these
before any server part is imported)"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_BODY_TIMEOUT_S = 10.0
DEFAULT_MAX_SESSIONS_PER_TOKEN = 32


@dataclass(frozen=True)
class HttpTimeouts:
    """How long a client may take to send a request's head, and then its body
    (`slow_clients`)."""

    header_s: float = DEFAULT_HEADER_TIMEOUT_S
    body_s: float = DEFAULT_BODY_TIMEOUT_S
