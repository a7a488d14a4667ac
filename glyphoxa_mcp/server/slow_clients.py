"""Clients that never finish a request (slowloris): a connection must send each request's
head within `header_s` of opening (or of its last response), and the request's body within
`body_s` of its head; otherwise it is closed, with a 408 when no answer has started.

uvicorn closes a connection that sits idle between requests, but not one partway through a
request's head (its keep-alive timer stops at the first byte), nor one whose body trickles
in: a few bytes now and then held a connection, and whatever the server keeps for it, for as
long as the client liked. The deadlines live in uvicorn's HTTP protocol (`Config(http=...)`,
uvicorn's way to choose one), the only place that sees a request before its head is whole.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable

import h11

from glyphoxa_mcp.server.http_limits import HttpTimeouts

log = logging.getLogger(__name__)


def _timeout_response(body_s: float) -> bytes:
    body = json.dumps(
        {"error": f"The request's body did not arrive within {body_s:g} s; send it again."}
    ).encode()
    head = (
        "HTTP/1.1 408 Request Timeout\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def deadline_protocol(timeouts: HttpTimeouts) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with the head and body deadlines of `timeouts`."""
    # uvicorn loads only for the commands that serve HTTP.
    from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle

    class DeadlineH11Protocol(H11Protocol):
        # The request the running deadline is about: None before the first one.
        _deadline: asyncio.TimerHandle | None = None
        _timed: RequestResponseCycle | None = None

        def connection_made(  # type: ignore[override]
            self, transport: asyncio.Transport
        ) -> None:
            super().connection_made(transport)
            self._expect_head(after=None)

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_deadline()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            super().handle_events()
            # A new cycle is a request whose head just arrived: now its body is awaited.
            if self.cycle is not None and self.cycle is not self._timed:
                self._timed = self.cycle
                self._set_deadline(timeouts.body_s, self._body_late, self.cycle)

        def on_response_complete(self) -> None:
            finished = self.cycle
            super().on_response_complete()
            # Unless a pipelined request already started in there, the next head is awaited.
            if self.cycle is finished:
                self._expect_head(after=finished)

        def _expect_head(self, after: RequestResponseCycle | None) -> None:
            self._set_deadline(timeouts.header_s, self._head_late, after)

        def _set_deadline(
            self,
            seconds: float,
            late: Callable[[RequestResponseCycle | None], None],
            of: RequestResponseCycle | None,
        ) -> None:
            self._stop_deadline()
            if self.transport is not None and not self.transport.is_closing():
                self._deadline = self.loop.call_later(seconds, late, of)

        def _stop_deadline(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _head_late(self, after: RequestResponseCycle | None) -> None:
            self._deadline = None
            if self.cycle is after and not self.transport.is_closing():
                log.info("closed a connection: no request head within %g s", timeouts.header_s)
                self.transport.close()

        def _body_late(self, cycle: RequestResponseCycle | None) -> None:
            self._deadline = None
            if cycle is None or self.cycle is not cycle or self.transport.is_closing():
                return
            if self.conn.their_state is not h11.SEND_BODY:
                return  # the body is in; the answer may take as long as it takes
            if self.flow.read_paused:
                # The app is not reading yet and uvicorn stopped reading for it: the client
                # is not the slow one.
                self._set_deadline(timeouts.body_s, self._body_late, cycle)
                return
            log.info("closed a connection: no request body within %g s", timeouts.body_s)
            if not cycle.response_started:
                self.transport.write(_timeout_response(timeouts.body_s))
            self.transport.close()

    return DeadlineH11Protocol
