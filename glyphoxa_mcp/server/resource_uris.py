"""This server's resources by URI, listed once: their kinds (hot, prefetch, npcs,
vocabulary), the URI or template of each, the bounds of their parameters, which a client may
subscribe to, and the spec's answer to a URI that names none of them.

server/resources.py registers them, the argument gate and the subscriptions check a URI
against them, the tier gate names them in its metrics.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import parse_qsl, quote

from mcp.shared.exceptions import MCPError
from mcp.shared.uri_template import UriTemplate
from mcp_types import INVALID_PARAMS

from glyphoxa_mcp.server.refusals import NUL, fit, refusal, unknown_name
from glyphoxa_mcp.views.arguments import quoted
from glyphoxa_mcp.views.limits import MAX_ID, MAX_UTTERANCE

HOT_URI_TEMPLATE = "glyphoxa://npc/{npc_id}/hot{?session}"
PREFETCH_URI_TEMPLATE = "glyphoxa://npc/{npc_id}/prefetch{?utterance}"
NPCS_URI = "glyphoxa://npcs"
VOCABULARY_URI = "glyphoxa://campaign/vocabulary"
# The spec's resource-not-found error up to 2025-11-25; from 2026-07-28 on, an unknown
# resource is answered with INVALID_PARAMS (SEP-2164), and -32002 is retired.
RESOURCE_NOT_FOUND = -32002
INVALID_PARAMS_FOR_NOT_FOUND_SINCE = "2026-07-28"
MAX_URI = 65_536  # the SDK's own limit for matching a template
LISTED = "glyphoxa://npcs lists the NPCs and the URI of each one's hot context"


class ResourceKind(StrEnum):
    """What a resource URI names; also its label in the metrics."""

    HOT = "hot"
    PREFETCH = "prefetch"
    NPCS = "npcs"
    VOCABULARY = "vocabulary"


@dataclass(frozen=True)
class ResourceShape:
    """One of this server's resources: a fixed URI, or a template whose parameters are text
    of at most so many characters."""

    kind: ResourceKind
    uri: str | None = None
    template: UriTemplate | None = None
    parameters: Mapping[str, int] = dataclasses.field(default_factory=dict)
    query: tuple[str, ...] = ()
    subscribable: bool = False

    def parameters_of(self, uri: str) -> dict[str, str] | None:
        if self.uri is not None:
            return {} if uri == self.uri else None
        assert self.template is not None
        found = self.template.match(uri)
        if found is None:
            return None
        return {name: v if isinstance(v, str) else ",".join(v) for name, v in found.items()}


RESOURCES = (
    ResourceShape(ResourceKind.NPCS, uri=NPCS_URI, subscribable=True),
    ResourceShape(ResourceKind.VOCABULARY, uri=VOCABULARY_URI, subscribable=True),
    ResourceShape(
        ResourceKind.HOT,
        template=UriTemplate.parse(HOT_URI_TEMPLATE),
        parameters={"npc_id": MAX_ID, "session": MAX_ID},
        query=("session",),
        subscribable=True,
    ),
    ResourceShape(
        ResourceKind.PREFETCH,
        template=UriTemplate.parse(PREFETCH_URI_TEMPLATE),
        parameters={"npc_id": MAX_ID, "utterance": MAX_UTTERANCE},
        query=("utterance",),
    ),
)
# Every parameter of a template: ids and free text, never paths.
PARAMETERS = frozenset(name for shape in RESOURCES for name in shape.parameters)


def hot_uri(npc_id: str, session: str | None = None) -> str:
    uri = f"glyphoxa://npc/{quote(npc_id, safe='')}/hot"
    return f"{uri}?session={quote(session, safe='')}" if session else uri


def metric_name(uri: str) -> str:
    """A resource URI's kind by its last path segment, unchecked, else 'other': a bounded
    metric label for any read, answered or refused."""
    path = uri.split("?", 1)[0].rstrip("/")
    last = path.rsplit("/", 1)[-1]
    return last if last in tuple(ResourceKind) else "other"


def not_found_code(protocol_version: str | None) -> int:
    """The spec's resource-not-found code under a protocol version."""
    modern = protocol_version is not None and protocol_version >= (
        INVALID_PARAMS_FOR_NOT_FOUND_SINCE
    )
    return INVALID_PARAMS if modern else RESOURCE_NOT_FOUND


def _uri_data(uri: str) -> dict[str, str] | None:
    return {"uri": uri} if len(uri) <= 256 else None


def resource_kind(uri: str) -> ResourceKind:
    """Which of this server's resources `uri` names, its parameters checked; otherwise an
    MCPError saying what is wrong (RESOURCE_NOT_FOUND for a URI that names none of them)."""
    if len(uri) > MAX_URI:
        raise MCPError(INVALID_PARAMS, f"uri must be at most {MAX_URI} characters.")
    for shape in RESOURCES:
        parameters = shape.parameters_of(uri)
        if parameters is None:
            continue
        problems = []
        for name, value in parameters.items():
            longest = shape.parameters.get(name, 0)
            if NUL in value:
                problems.append(f"{name} must not contain NUL characters")
            elif len(value) > longest:
                problems.append(f"{name} must be at most {longest} characters")
        query = uri.partition("?")[2].partition("#")[0]
        names = [k for k, _ in parse_qsl(query, keep_blank_values=True)]
        problems += [
            unknown_name(k, list(shape.query), "parameter")
            for k in dict.fromkeys(names)
            if k not in shape.query
        ]
        if problems:
            raise MCPError(
                INVALID_PARAMS, refusal(f"Invalid parameters in {quoted(uri)}", problems)
            )
        return shape.kind
    raise MCPError(
        RESOURCE_NOT_FOUND,
        fit(
            f"No resource at uri {quoted(uri)}: {LISTED}; glyphoxa://campaign/vocabulary lists "
            "the campaign's names."
        ),
        _uri_data(uri),
    )


def subscribable(uri: str) -> ResourceKind:
    """The kind of resource `uri` names, when a client may subscribe to it; otherwise an
    MCPError saying why not."""
    kind = resource_kind(uri)
    if not next(shape for shape in RESOURCES if shape.kind is kind).subscribable:
        raise MCPError(
            INVALID_PARAMS,
            f"uri {quoted(uri)} cannot be subscribed to: subscribe to an NPC's hot context "
            f"(glyphoxa://npc/<npc_id>/hot), {VOCABULARY_URI} or {NPCS_URI}.",
        )
    return kind


def answered(error: MCPError, protocol_version: str | None, uri: str | None) -> MCPError:
    """A resource error as this connection's protocol spells it, cut to 1 kB."""
    code = error.code
    if code == RESOURCE_NOT_FOUND:
        code = not_found_code(protocol_version)
    data = error.data
    if uri is not None and (data is None or (isinstance(data, dict) and "uri" in data)):
        data = _uri_data(uri)
    return MCPError(code, fit(error.message), data)
