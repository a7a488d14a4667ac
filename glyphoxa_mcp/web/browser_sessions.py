"""The desk's browser sessions: a cookie names one, and it holds the form token every POST
must carry (CSRF), the DM token it signed in with, and the notes the next page shows
("Confirmed 3 items"). (pure)

A browser that has not signed in (a visitor) occupies nothing here: its cookie is a random
nonce and its form token an HMAC of that nonce under this process's secret, so the sign-in
form is protected from other sites without the server keeping a row per visitor. Any number
of requests without a cookie therefore cannot push a signed-in DM out.

Only signing in stores a session, under a new id (a visitor's nonce never grants anything).
The DM token stays on the server, is checked again on every request (a revoked token stops
working within a second), and is forgotten when the DM signs out, or the session sits idle
too long or reaches its lifetime. Sign-ins end by time, never to make room: when the desk
holds its most, a new sign-in is refused with a message saying so.

A visitor's notes ("Signed out.", why a token was refused) are kept apart, bounded; when
that store is full the oldest visitor's notes go, which costs a message, never a sign-in.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from glyphoxa_mcp.domain.wording import counted

COOKIE = "glyphoxa_desk"
MAX_NOTES = 20
# Visitors whose notes wait for their next page; past this many, the oldest are dropped.
MAX_VISITOR_NOTES = 10_000
# What `secrets.token_urlsafe(32)` makes: a cookie of another shape is not looked at.
COOKIE_VALUE = re.compile(r"[A-Za-z0-9_-]{43}")


@dataclass(frozen=True)
class SignInLimits:
    """How long a sign-in lasts and how many the desk holds (`web --sign-in-idle-minutes`,
    `--sign-in-lifetime-hours`, `--max-sign-ins`)."""

    idle_s: float = 12 * 3600
    lifetime_s: float = 7 * 24 * 3600
    max_sign_ins: int = 1_000


class SignInsFull(Exception):
    """The desk holds as many sign-ins as it may; the message says what to do."""


@dataclass(frozen=True)
class Note:
    kind: Literal["ok", "error"]
    text: str


@dataclass
class BrowserSession:
    id: str
    form_token: str
    seen_at: float
    started_at: float
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
    def __init__(
        self,
        limits: SignInLimits | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limits = limits or SignInLimits()
        self.clock = clock
        # New each start: a visitor's form token does not outlive the process, as a sign-in
        # does not.
        self._secret = secrets.token_bytes(32)
        self._signed_in: dict[str, BrowserSession] = {}
        self._visitor_notes: OrderedDict[str, list[Note]] = OrderedDict()

    @property
    def signed_in_count(self) -> int:
        return len(self._signed_in)

    def for_cookie(self, cookie: str | None) -> BrowserSession:
        """The live sign-in the cookie names; otherwise the visitor it names, or a new
        visitor when it names nothing usable. Only a sign-in is stored."""
        if cookie is None or not COOKIE_VALUE.fullmatch(cookie):
            return self.visitor()
        session = self._signed_in.get(cookie)
        if session is None:
            return self.visitor(cookie)
        now = self.clock()
        if self._expired(session, now):
            del self._signed_in[cookie]
            # The old id is a visitor's nonce now, with a form token no page of the sign-in
            # ever showed.
            return self.visitor(cookie)
        session.seen_at = now
        return session

    def visitor(self, nonce: str | None = None) -> BrowserSession:
        """A browser that has not signed in: nothing of it is stored but its notes."""
        nonce = nonce or secrets.token_urlsafe(32)
        now = self.clock()
        return BrowserSession(
            id=nonce,
            form_token=self._visitor_form_token(nonce),
            seen_at=now,
            started_at=now,
            notes=self._visitor_notes.pop(nonce, []),
        )

    def keep(self, session: BrowserSession) -> None:
        """Keep a visitor's notes for its next page (a sign-in keeps its own)."""
        if session.signed_in:
            return
        if not session.notes:
            self._visitor_notes.pop(session.id, None)
            return
        self._visitor_notes[session.id] = session.notes
        self._visitor_notes.move_to_end(session.id)
        while len(self._visitor_notes) > MAX_VISITOR_NOTES:
            self._visitor_notes.popitem(last=False)

    def sign_in(self, before: BrowserSession, campaign: str, dm_token: str) -> BrowserSession:
        """A new session for the signed-in DM; the one before is ended. Raises SignInsFull
        when the desk holds its most sign-ins: none is ever ended to make room."""
        now = self.clock()
        for expired in [s for s in self._signed_in.values() if self._expired(s, now)]:
            del self._signed_in[expired.id]
        if len(self._signed_in) >= self.limits.max_sign_ins and not before.signed_in:
            raise SignInsFull(
                f"The desk holds {counted(self.limits.max_sign_ins, 'sign-in')}, its most; none "
                "was ended to make room. Sign out on a browser you no longer use, wait for a "
                "sign-in to expire, or raise the limit (web --max-sign-ins / "
                "GLYPHOXA_WEB_MAX_SIGN_INS)."
            )
        self.end(before)
        session = BrowserSession(
            id=secrets.token_urlsafe(32),
            form_token=secrets.token_urlsafe(32),
            seen_at=now,
            started_at=now,
            campaign=campaign,
            dm_token=dm_token,
        )
        self._signed_in[session.id] = session
        return session

    def end(self, session: BrowserSession) -> None:
        self._signed_in.pop(session.id, None)
        self._visitor_notes.pop(session.id, None)

    def _expired(self, session: BrowserSession, now: float) -> bool:
        return (
            now - session.seen_at > self.limits.idle_s
            or now - session.started_at > self.limits.lifetime_s
        )

    def _visitor_form_token(self, nonce: str) -> str:
        return hmac.new(self._secret, b"form:" + nonce.encode(), hashlib.sha256).hexdigest()
