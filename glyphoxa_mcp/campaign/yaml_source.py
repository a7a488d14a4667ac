"""Reading a campaign file (YAML, or JSON, which YAML includes) with line and column for
every value, so an error names file, line, column and field. (pure)

The file is read within bounds, so a hostile one costs no more than a large real one: its
length, its nesting and the number of values it holds once every alias is expanded are
capped, an alias inside the value it names is refused, and only plain YAML types are built
(no `!!python/...` or other tags).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import yaml
from pydantic import ValidationError

from glyphoxa_mcp.bounded_input import MAX_DEPTH, check_length
from glyphoxa_mcp.campaign.file_format import CampaignFile
from glyphoxa_mcp.errors import InvalidInputError

Path_ = tuple[str | int, ...]

# Far above any real campaign file (the sample has a few hundred values in 8 KB).
MAX_CHARS = 16 * 1024 * 1024
MAX_VALUES = 2_000_000
_CORE = "tag:yaml.org,2002:"
# What plain YAML resolves to ('value' is the plain scalar '=', built as text).
ALLOWED_TAGS = frozenset(
    _CORE + name
    for name in ("null", "bool", "int", "float", "str", "timestamp", "value", "merge", "seq", "map")
)


class _Mark(Protocol):
    line: int
    column: int


class _Refused(Exception):
    def __init__(self, mark: _Mark | None, rule: str) -> None:
        super().__init__(rule)
        self.mark = mark
        self.rule = rule


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that counts while it composes: every value, and for an alias the
    expanded size of the value it names (measured once, when that value was composed)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.values = 0
        self.depth = 0
        self.open_anchors: set[str] = set()
        self.sizes: dict[str, int] = {}

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self.check_event()
        event: yaml.NodeEvent = self.current_event
        if isinstance(event, yaml.AliasEvent):
            name = str(event.anchor)
            if name in self.open_anchors:
                raise _Refused(
                    event.start_mark,
                    f"the alias *{name} is inside the value it names (a recursive alias).",
                )
            alias = super().compose_node(parent, index)  # undefined: a YAMLError
            self._count(self.sizes[name], event.start_mark)
            return alias
        if self.depth >= MAX_DEPTH:
            raise _Refused(event.start_mark, f"values nested deeper than {MAX_DEPTH} levels.")
        self._count(1, event.start_mark)
        anchor = event.anchor
        before = self.values
        if anchor is not None:
            self.open_anchors.add(anchor)
        self.depth += 1
        node = super().compose_node(parent, index)
        assert node is not None  # composing a node event always makes a node
        self.depth -= 1
        if anchor is not None:
            self.open_anchors.discard(anchor)
            self.sizes[anchor] = self.values - before + 1
        if node.tag not in ALLOWED_TAGS:
            shown = node.tag.replace(_CORE, "!!", 1)
            raise _Refused(
                node.start_mark,
                f"the tag {shown} is not allowed: a campaign file holds plain values "
                "(text, numbers, true/false, dates, lists and mappings).",
            )
        return node

    def _count(self, values: int, mark: _Mark | None) -> None:
        self.values += values
        if self.values > MAX_VALUES:
            raise _Refused(
                mark,
                f"the file holds more than {MAX_VALUES:,} values (each alias counted as the "
                "values it repeats), the most a campaign file may.",
            )


def _checked(
    construct: Callable[[yaml.SafeLoader, yaml.Node], Any],
) -> Callable[[yaml.SafeLoader, yaml.Node], Any]:
    """An explicitly tagged scalar that is not of its type (`!!int abc`) is a YAML error."""

    def checked(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
        try:
            return construct(loader, node)
        except (ValueError, KeyError, AttributeError):
            shown = node.tag.replace(_CORE, "!!", 1)
            raise yaml.constructor.ConstructorError(
                None, None, f"{str(node.value)[:40]!r} is not a {shown}", node.start_mark
            ) from None

    return checked


for _name in ("bool", "int", "float"):
    _BoundedLoader.add_constructor(
        _CORE + _name, _checked(yaml.SafeLoader.yaml_constructors[_CORE + _name])
    )


def _text(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    return loader.construct_scalar(node)


# A date stays as written: stored values are JSON, which has no dates.
_BoundedLoader.add_constructor(_CORE + "timestamp", _text)
_BoundedLoader.add_constructor(_CORE + "value", _text)


def _mark_at(node: yaml.Node, location: Path_) -> _Mark | None:
    """Where the deepest value the file has on that path starts (a missing field points at
    its parent)."""
    for part in location:
        if isinstance(node, yaml.MappingNode):
            found = [value for key, value in node.value if str(key.value) == str(part)]
            if not found:
                break
            node = found[-1]  # as when the mapping is built, the last of a repeated key
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if not 0 <= part < len(node.value):
                break
            node = node.value[part]
        else:
            break
    return node.start_mark


def _where(source: str, mark: _Mark | None) -> str:
    return f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source


def _not_yaml(source: str, exc: yaml.YAMLError) -> InvalidInputError:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    return InvalidInputError(f"{_where(source, mark)}: not valid YAML ({problem}).")


def parse_campaign_file(text: str, source: str) -> CampaignFile:
    check_length(text, source, MAX_CHARS)
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise InvalidInputError(f"{source}: the file is empty.")
        data: Any = loader.construct_document(node)
    except _Refused as exc:
        raise InvalidInputError(f"{_where(source, exc.mark)}: {exc.rule}") from None
    except yaml.YAMLError as exc:
        raise _not_yaml(source, exc) from None
    finally:
        loader.dispose()
    try:
        return CampaignFile.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            location = tuple(error["loc"])
            field = _field(location)
            problems.append(f"{_where(source, _mark_at(node, location))}: {field}: {error['msg']}")
        raise InvalidInputError(
            "; ".join(problems), field=_field(tuple(exc.errors()[0]["loc"]))
        ) from None


def _field(location: Path_) -> str:
    """('entities', 1, 'type') -> 'entities[1].type'."""
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "file"
