"""The desk's browser sessions, held in the server's memory: a cookie names one, and it holds
the form token every POST must carry (CSRF), the DM token it signed in with, and the notes
the next page shows ("Confirmed 3 items"). (pure)

A session is started on a browser's first visit, so even the sign-in form carries a form
token; signing in starts a new one (a session id seen before sign-in never grants anything).
The DM token stays on the server, is checked again on every request (a revoked token stops
working within a second), and is forgotten when the session ends or sits idle too long.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

COOKIE = "glyphoxa_desk"
IDLE_S = 12 * 3600
# Past this many, the least recently seen sessions are dropped (a browser that lost its
# session is asked to sign in again), so no visitor can make the server hold more.
MAX_SESSIONS = 2_000
MAX_NOTES = 20


@dataclass(frozen=True)
class Note:
    kind: Literal["ok", "error"]
    text: str


@dataclass
class BrowserSession:
    id: str
    form_token: str
    seen_at: float
    campaign: str | None = None
    """With token auth: the campaign whose DM token this session signed in with."""
    dm_token: str | None = None
    notes: list[Note] = field(default_factory=list)

    @property
    def signed_in(self) -> bool:
        return self.dm_token is not None

    def note(self, kind: Literal["ok", "error"], text: str) -> None:
        self.notes = [*self.notes, Note(kind, text)][-MAX_NOTES:]

    def take_notes(self) -> list[Note]:
        notes, self.notes = self.notes, []
        return notes

    def form_token_matches(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.form_token.encode())


class BrowserSessions:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._sessions: OrderedDict[str, BrowserSession] = OrderedDict()

    def find(self, session_id: str | None) -> BrowserSession | None:
        """The live session of this id, or None (unknown, or idle too long)."""
        if not session_id:
            return None
        session = self._sessions.get(session_id)
        now = self.clock()
        if session is None:
            return None
        if now - session.seen_at > IDLE_S:
            del self._sessions[session_id]
            return None
        session.seen_at = now
        self._sessions.move_to_end(session_id)
        return session

    def start(self) -> BrowserSession:
        session = BrowserSession(
            id=secrets.token_urlsafe(32), form_token=secrets.token_urlsafe(32), seen_at=self.clock()
        )
        self._sessions[session.id] = session
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return session

    def sign_in(self, before: BrowserSession, campaign: str, dm_token: str) -> BrowserSession:
        """A new session for the signed-in DM; the one before is ended."""
        self.end(before)
        session = self.start()
        session.campaign, session.dm_token = campaign, dm_token
        return session

    def end(self, session: BrowserSession) -> None:
        self._sessions.pop(session.id, None)
