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
from glyphoxa_mcp.campaign.file_format import ENTRY_LISTS, CampaignFile, Origin
from glyphoxa_mcp.campaign.problems import FileProblems, Path, Problem, field_name
from glyphoxa_mcp.domain.wording import rule_of
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.recall.names import compact

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
        self.repeated_keys: list[tuple[yaml.MappingNode, yaml.ScalarNode]] = []
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

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """A key given twice in one mapping is a problem: YAML would keep the last silently."""
        seen: set[str] = set()
        for key, _ in node.value:
            if isinstance(key, yaml.ScalarNode) and key.tag != _CORE + "merge":
                if key.value in seen:
                    self.repeated_keys.append((node, key))
                seen.add(key.value)
        return super().construct_mapping(node, deep)

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


def _mark_at(node: yaml.Node, location: Path) -> _Mark:
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


def _locator(root: yaml.Node) -> Callable[[Path], tuple[int, int]]:
    """Finds a value's place only when a problem asks for it: the composed file is kept,
    not walked ahead of time."""

    def locate(path: Path) -> tuple[int, int]:
        mark = _mark_at(root, path)
        return mark.line + 1, mark.column + 1

    return locate


def _where(source: str, mark: _Mark | None) -> str:
    return f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source


def _not_yaml(source: str, exc: yaml.YAMLError) -> InvalidInputError:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    return InvalidInputError(f"{_where(source, mark)}: not valid YAML ({problem}).")


def _compose(text: str, source: str) -> tuple[yaml.Node, Any, list[Problem]]:
    """The file's composed nodes, the plain data they build, and the keys it repeats."""
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise InvalidInputError(f"{source}: the file is empty.")
        data = loader.construct_document(node)
    except _Refused as exc:
        raise InvalidInputError(f"{_where(source, exc.mark)}: {exc.rule}") from None
    finally:
        loader.dispose()
    repeated = [
        Problem(
            source,
            key.start_mark.line + 1,
            key.start_mark.column + 1,
            field_name((*_path_to(node, mapping), key.value)),
            f"the key {key.value!r} is given twice in this mapping.",
        )
        for mapping, key in loader.repeated_keys
    ]
    return node, data, repeated


def _path_to(root: yaml.Node, wanted: yaml.Node) -> Path:
    """The path from the root to a node (searched for only when a problem names it)."""
    stack: list[tuple[yaml.Node, Path]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if node is wanted:
            return path
        if isinstance(node, yaml.MappingNode):
            stack += [(value, (*path, str(key.value))) for key, value in node.value]
        elif isinstance(node, yaml.SequenceNode):
            stack += [(value, (*path, i)) for i, value in enumerate(node.value)]
    return ()


def parse_campaign_file(text: str, source: str) -> CampaignFile:
    """The file, checked as far as it can be without the campaign's stored entities: its
    problems are reported together when it is loaded (see loader.py), or at once when what
    is wrong leaves nothing to check further (not YAML, out of bounds, no campaign block
    that can be read)."""
    check_length(text, source, MAX_CHARS)
    try:
        node, data, repeated = _compose(text, source)
    except yaml.YAMLError as exc:
        if not _json_indented_with_tabs(text, exc):
            raise _not_yaml(source, exc) from None
        # Tabs stand only between tokens in JSON, so spaces in their place change nothing,
        # not even a column.
        try:
            node, data, repeated = _compose(text.replace("\t", " "), source)
        except yaml.YAMLError as again:
            raise _not_yaml(source, again) from None
    locate = _locator(node)
    try:
        file = CampaignFile.model_validate(data)
    except ValidationError:
        return _entry_by_entry(data, source, locate, repeated)
    return file.with_origin(Origin(source, locate, tuple(repeated)))


def _json_indented_with_tabs(text: str, exc: yaml.YAMLError) -> bool:
    return text.lstrip().startswith(("{", "[")) and "\\t" in str(getattr(exc, "problem", ""))


def _entry_by_entry(
    data: Any, source: str, locate: Callable[[Path], tuple[int, int]], repeated: list[Problem]
) -> CampaignFile:
    """Every entry checked on its own: the ones that break a rule are left out and their
    problems kept, so the rest can still be checked when the file is loaded."""

    def problem(path: Path, rule: str) -> Problem:
        return Problem(source, *locate(path), field_name(path) or "file", rule)

    problems = list(repeated)
    if not isinstance(data, dict):
        raise FileProblems(
            source,
            [
                problem(
                    (),
                    "a campaign file is a mapping of campaign, relationship_types, entities, "
                    "relationships and facts.",
                )
            ],
        )
    top: dict[str, Any] = {}
    for key, value in data.items():
        try:
            CampaignFile.model_validate({key: [] if key in ENTRY_LISTS else value})
        except ValidationError as exc:
            problems += [problem((key, *e["loc"][1:]), rule_of(e)) for e in exc.errors()]
            continue
        if key not in ENTRY_LISTS:
            top[key] = value
    kept: dict[str, tuple[int, ...]] = {}
    unchecked: set[str] = set()
    left_out: list[tuple[str, int, dict[str, Any]]] = []
    for key, entry_type in ENTRY_LISTS.items():
        if key not in data:
            continue
        entries = data[key]
        if not isinstance(entries, list):
            problems.append(problem((key,), f"{key} is a list of entries."))
            continue
        valid, positions = [], []
        for position, entry in enumerate(entries):
            try:
                valid.append(entry_type.model_validate(entry))
                positions.append(position)
            except ValidationError as exc:
                errors = exc.errors()
                problems += [problem((key, position, *e["loc"]), rule_of(e)) for e in errors]
                if isinstance(entry, dict):
                    broken = {e["loc"][0] for e in errors if e["loc"]}
                    fields = {k: v for k, v in entry.items() if k not in broken}
                    left_out.append((key, position, fields))
                    if key == "entities":
                        unchecked.update(_spellings(entry))
        top[key] = valid
        kept[key] = tuple(positions)
    if "campaign" in data and "campaign" not in top:
        # Which campaign the file is for decides what its names can refer to.
        raise FileProblems(source, problems)
    file = CampaignFile.model_validate(top)
    return file.with_origin(
        Origin(source, locate, tuple(problems), kept, tuple(left_out), frozenset(unchecked))
    )


def _spellings(entry: dict[str, Any]) -> list[str]:
    """How the file could refer to an entity entry that broke a rule."""
    aliases = entry.get("aliases")
    written = [entry.get("name"), entry.get("id"), *(aliases if isinstance(aliases, list) else [])]
    return [compact(str(spelling)) for spelling in written if isinstance(spelling, str | int)]
