"""Hostile arguments, generated: every tool and resource, on a DM's and an NPC's server, over
both protocol generations, against the spoken village. Every answer is a result, or an error
that names the field it is about, in at most 1 kB, with no driver text, SQL, stack trace,
file path or pydantic report in it; nothing crashes and nothing hangs.

A few hundred cases by default. The long run, for the figure in a closing note:

    GLYPHOXA_FUZZ_CASES=10000 .venv/bin/pytest tests/server/test_fuzz.py -p no:cacheprovider \\
        --hypothesis-show-statistics

(GLYPHOXA_FUZZ_REASONS=1 adds how often each kind of refusal was given to the statistics.)
"""

from __future__ import annotations

import contextlib
import os
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import annotated_types
import anyio
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mcp.client import Client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import INVALID_PARAMS
from pydantic.fields import FieldInfo

from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.refusals import MAX_ANSWER
from glyphoxa_mcp.server.resource_uris import (
    NPCS_URI,
    RESOURCE_NOT_FOUND,
    VOCABULARY_URI,
    hot_uri,
)
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.server.subscriptions import HotSubscriptions
from glyphoxa_mcp.server.tools import ARGUMENTS
from glyphoxa_mcp.views.arguments import quoted
from glyphoxa_mcp.views.view import View
from tests.conftest import read_only, unhurried

# With the red team, in the end-to-end run: CI runs it; the fast subset stays under a minute.
pytestmark = pytest.mark.e2e

CASES = int(os.environ.get("GLYPHOXA_FUZZ_CASES", "300"))
CALL_TIMEOUT_S = 60
ROOT = str(Path(__file__).resolve().parents[2])
RESOURCE_FIELDS = ("uri", "npc_id", "session", "utterance")
# What only a leak would put in an answer.
LEAKS = re.compile(
    r"asyncpg|Traceback|SELECT|\$\d|site-packages|File \"|/[\w./-]+\.py\b|SQLSTATE"
    r"|validation error|errors\.pydantic\.dev|Input should|input_value|Error executing tool \S+$"
)

# --- what a hostile caller sends -------------------------------------------------------------

NASTY = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "'; DROP TABLE entities; --",
    "$1",
    "%s%s%n",
    "\\",
    "SELECT * FROM pg_user",
    "../../etc/passwd",
    "/etc/passwd",
    "C:\\Windows",
    "I: think",
    "/me waves",
    "{{7*7}}",
    "\u202egnp.exe",
    "null",
    "[1, 2]",
    '{"a": 1}',
    "1e400",
    "-1",
    "9" * 40,
    "day 1e9",
    "day 99999999999999999999",
    "day -3",
    "0001-01-01",
    "0001-01-01T00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    "2026-02-30",
    "2026-03-14T25:00",
    "2026-03-14T19:30Z",
    "\ud7ff\ue000\U0010ffff",
    "x" * 129,
    "x" * 1001,
]
BIG = ["x" * 1_000_000, "é" * 70_000, "%00" * 5_000]

texts = st.one_of(
    st.text(max_size=40),
    st.sampled_from(NASTY),
    st.text(min_size=60, max_size=300),
    st.sampled_from(BIG),
)
hostile = st.one_of(
    texts,
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
when = st.one_of(
    st.dates().map(lambda d: d.isoformat()),
    st.datetimes(
        timezones=st.sampled_from(
            [None, UTC, timezone(timedelta(hours=14)), timezone(-timedelta(hours=14))]
        )
    ).map(lambda d: d.isoformat()),
    st.integers(min_value=0, max_value=10**12).map(lambda n: f"day {n}"),
    st.floats(min_value=0, max_value=1e9).map(lambda n: f"story day {n}"),
)
names = st.sampled_from(
    ["Mira", "Grimjaw", "grimjaw", "Captain Oriel Vask", "Vask", "Cult", "Red Kettle", "Nobody"]
)
ids = st.sampled_from(["grimjaw", "mira", "vask", "cult", "red-kettle", "Old Berrit", "nobody"])
sessions = st.sampled_from(["s1", "s2", "s9", " s1 ", "S1"])
counts = st.integers(min_value=-5, max_value=1100)
PLAUSIBLE: dict[str, st.SearchStrategy[Any]] = {
    "query": st.one_of(
        st.text(max_size=80),
        st.sampled_from(["caravan", "Grimjaw iron", "what did Mira say on 7 July 2023", "cult"]),
    ),
    "top_k": counts,
    "limit": counts,
    "depth": st.integers(min_value=-2, max_value=12),
    "sessions_ago": st.integers(min_value=-2, max_value=12),
    "session_id": sessions,
    "speaker": names,
    "npc_id": ids,
    "name": names,
    "related_to": names,
    "entity": names,
    "relation": st.sampled_from(["KNOWS", "member of", "MEMBER_OF", "x" * 64, "lives-at"]),
    "type": st.sampled_from([*(t.value for t in EntityType), "dragon", "NPC"]),
    "after": when,
    "before": when,
}


def within(info: FieldInfo) -> st.SearchStrategy[Any]:
    """Values of the field's type within its bounds: past the gate, into the reads."""
    if info.annotation is int or info.annotation == int | None:
        low = next(m.ge for m in info.metadata if isinstance(m, annotated_types.Ge))
        high = next(m.le for m in info.metadata if isinstance(m, annotated_types.Le))
        return st.integers(min_value=low, max_value=high)
    longest = next((m.max_length for m in info.metadata if hasattr(m, "max_length")), 100)
    fitting = [n for n in NASTY if len(n) <= longest and "\x00" not in n]
    return st.one_of(
        st.text(max_size=min(longest, 80)).filter(lambda t: "\x00" not in t),
        st.sampled_from(fitting),
    )


MODES = ("plausible", "plausible", "bounded", "hostile", "without required", "with unknown")


def arguments_of(tool: str, mode: str) -> st.SearchStrategy[dict[str, Any]]:
    """Plausible values; any values of the right type within bounds; or hostile ones; or any
    of these without the required arguments, or with unknown ones."""
    model = ARGUMENTS[tool].arg_model
    fields = list(model.model_fields)

    def value(name: str) -> st.SearchStrategy[Any]:
        plausible = PLAUSIBLE[name]
        if mode == "bounded":
            return st.one_of(plausible, within(model.model_fields[name]))
        if mode in ("hostile", "with unknown"):
            return st.one_of(plausible, hostile)
        return plausible

    required = {f: value(f) for f, info in model.model_fields.items() if info.is_required()}
    optional = {f: value(f) for f in fields if f not in required}
    if mode == "without required":
        return st.fixed_dictionaries({}, optional=optional)
    chosen = st.fixed_dictionaries(required, optional=optional)
    if mode != "with unknown":
        return chosen
    unknown = st.dictionaries(
        st.one_of(
            st.text(min_size=1, max_size=20), st.sampled_from(["topk", "graph_expansion"])
        ).filter(lambda k: k not in fields),
        hostile,
        min_size=1,
        max_size=2,
    )
    return st.tuples(chosen, unknown).map(lambda drawn: {**drawn[0], **drawn[1]})


@dataclass(frozen=True)
class Case:
    kind: str  # "tool" | "read" | "subscribe"
    server: str  # "dm" | "npc"
    protocol: str  # "legacy" | "auto"
    target: str  # a tool's name or a URI
    arguments: dict[str, Any] = field(default_factory=dict)

    def sent(self) -> list[str]:
        """Every string the caller sent: an answer may repeat a short prefix of one."""
        found = [self.target] if self.kind != "tool" else []
        for key, value in self.arguments.items():
            found += [key] + ([value] if isinstance(value, str) else [])
        if self.kind != "tool":
            found += [unquote(part) for part in re.split(r"[/?&=]", self.target)]
        return found


def tool_cases() -> st.SearchStrategy[Case]:
    def one(tool: str) -> st.SearchStrategy[Case]:
        spelled = st.sampled_from([tool, tool.replace(".", "_")])
        return st.builds(
            Case,
            kind=st.just("tool"),
            server=st.sampled_from(["dm", "npc"]),
            protocol=st.sampled_from(["legacy", "auto"]),
            target=spelled,
            arguments=st.sampled_from(MODES).flatmap(lambda mode: arguments_of(tool, mode)),
        )

    return st.one_of([one(tool) for tool in ARGUMENTS])


def encoded(value: str) -> str:
    return quote(value, safe="")


params = st.one_of(ids, texts, st.sampled_from(["", "%ZZ", "a%2Fb", "..", "%2E%2E"]))
speakers_npcs = st.sampled_from(["mira", "grimjaw"])
plausible_uris = st.one_of(
    st.builds(hot_uri, speakers_npcs, st.sampled_from([None, "s1", "s2"])),
    st.builds(
        lambda npc, said: f"glyphoxa://npc/{npc}/prefetch?utterance={encoded(said)}",
        speakers_npcs,
        st.one_of(
            st.text(max_size=200),
            st.sampled_from(NASTY[:-1]),
            st.sampled_from(["do you remember the caravan, Grimjaw?", "Mira, the bridge!"]),
        ),
    ),
)
uris = st.one_of(
    plausible_uris,
    plausible_uris,
    st.builds(lambda npc, session: hot_uri(npc, session), params, st.none() | sessions | texts),
    st.builds(
        lambda npc, said: f"glyphoxa://npc/{encoded(npc)}/prefetch?utterance={encoded(said)}",
        ids,
        st.one_of(texts, st.sampled_from(["do you remember the caravan, Grimjaw?"])),
    ),
    st.builds(lambda npc: f"glyphoxa://npc/{npc}/hot", st.text(max_size=30)),  # unencoded
    st.builds(
        lambda name, value: f"glyphoxa://npc/grimjaw/hot?{encoded(name)}={encoded(value)}",
        st.sampled_from(["session", "sesion", "utterance", "x"]) | st.text(max_size=10),
        texts,
    ),
    st.sampled_from(
        [
            NPCS_URI,
            VOCABULARY_URI,
            "x://junk/1",
            "glyphoxa://npc/grimjaw/cold",
            "glyphoxa://",
            "glyphoxa://npcs?x=1",
            "GLYPHOXA://npcs",
            "file:///etc/passwd",
        ]
    ),
    st.text(min_size=1, max_size=60),
)


def resource_cases() -> st.SearchStrategy[Case]:
    reads = st.builds(
        Case,
        kind=st.just("read"),
        server=st.sampled_from(["dm", "npc"]),
        protocol=st.sampled_from(["legacy", "auto"]),
        target=uris,
    )
    subscribes = st.builds(
        Case,
        kind=st.just("subscribe"),
        server=st.sampled_from(["dm", "npc"]),
        protocol=st.just("legacy"),
        target=uris,
    )
    return st.one_of(reads, reads, subscribes)


KINDS = {"tool": tool_cases(), "resource": resource_cases()}
# Tool calls, and resource reads and subscriptions: each kind chosen first, half the time.
cases = st.sampled_from(sorted(KINDS)).flatmap(KINDS.__getitem__)

# --- the servers -----------------------------------------------------------------------------


@dataclass
class Servers:
    portal: BlockingPortal
    clients: dict[tuple[str, str], Client]


@pytest.fixture(scope="module")
def servers(spoken_village_dsn: str, offline_embedder: LocalMiniLMEmbedder) -> Iterator[Servers]:
    """A DM's server and Mira's, each with a client on each protocol generation, open for the
    whole run in an event loop of their own (hypothesis drives a plain function)."""
    with start_blocking_portal() as portal, contextlib.ExitStack() as stack:
        memory = stack.enter_context(
            portal.wrap_async_context_manager(read_only(spoken_village_dsn, 384))
        )
        clients = {}
        for server, npc in (("dm", None), ("npc", "mira")):
            for protocol in ("legacy", "auto"):
                state = ServerState(View(memory, npc, offline_embedder), unhurried(Tier.DEEP))
                built = build_server(state, subscriptions=HotSubscriptions(memory, npc))
                clients[server, protocol] = stack.enter_context(
                    portal.wrap_async_context_manager(Client(built, mode=protocol))
                )
        yield Servers(portal, clients)


@dataclass(frozen=True)
class Answer:
    ok: bool
    text: str = ""
    code: int | None = None


async def answer(client: Client, case: Case) -> Answer:
    with anyio.fail_after(CALL_TIMEOUT_S):
        try:
            if case.kind == "tool":
                result = await client.call_tool(case.target, case.arguments)
                texts = [getattr(block, "text", "") for block in result.content]
                return Answer(ok=not result.is_error, text="\n".join(texts))
            if case.kind == "read":
                await client.read_resource(case.target, cache_mode="bypass")
                return Answer(ok=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.subscribe_resource(case.target)
                await client.unsubscribe_resource(case.target)
            return Answer(ok=True)
        except MCPError as exc:
            return Answer(ok=False, text=exc.message, code=exc.code)


def scrubbed(text: str, case: Case) -> str:
    """The answer without what the caller sent repeated in it (they said it)."""
    echoes = set()
    for sent in case.sent():
        for value in (sent, sent.strip()):
            echoes |= {value, repr(value), quoted(value), repr(value[:40])}
    for echo in sorted((e for e in echoes if e), key=len, reverse=True):
        text = text.replace(echo, "")
    return text


def names_a_field(text: str, case: Case) -> bool:
    if case.kind == "tool":
        tool = case.target.replace("_", ".", 1) if case.target not in ARGUMENTS else case.target
        fields = [*ARGUMENTS[tool].arg_model.model_fields, "unknown argument"]
    else:
        fields = [*RESOURCE_FIELDS, "resourceSubscriptions"]
    return any(re.search(rf"\b{re.escape(f)}\b", text) for f in fields)


def check(case: Case, got: Answer) -> None:
    event(f"{case.kind}: {'answered' if got.ok else 'refused'}")
    if not got.ok and os.environ.get("GLYPHOXA_FUZZ_REASONS"):
        event(re.sub(r"'[^']*'|\d+", "_", got.text)[:90])
    if got.ok:
        return
    assert len(got.text.encode()) <= MAX_ANSWER, f"{len(got.text.encode())} bytes"
    assert names_a_field(got.text, case), got.text
    leak = LEAKS.search(scrubbed(got.text, case))
    assert leak is None and ROOT not in got.text, (leak, got.text)
    if case.kind != "tool":
        expected = {INVALID_PARAMS, RESOURCE_NOT_FOUND if case.protocol == "legacy" else None}
        assert got.code in expected, (got.code, got.text)


@settings(
    max_examples=CASES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=cases)
def test_hostile_arguments_get_an_answer_naming_the_field(servers: Servers, case: Case) -> None:
    client = servers.clients[case.server, case.protocol]
    check(case, servers.portal.call(answer, client, case))


def test_the_servers_still_answer_after_the_fuzzing(servers: Servers) -> None:
    for (server, protocol), client in servers.clients.items():
        fine = Case("tool", server, protocol, "memory.query_entities", {"name": "Grimjaw"})
        got = servers.portal.call(answer, client, fine)
        assert got.ok, (server, protocol, got.text)
