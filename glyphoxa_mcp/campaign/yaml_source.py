"""Reading a campaign file (YAML, or JSON, which YAML includes) with line and column for
every value, so an error names file, line, column and field. (pure)"""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import ValidationError

from glyphoxa_mcp.campaign.file_format import CampaignFile
from glyphoxa_mcp.errors import InvalidInputError

Path_ = tuple[str | int, ...]


def _marks(node: yaml.Node, path: Path_, found: dict[Path_, yaml.Mark]) -> None:
    found[path] = node.start_mark
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            _marks(value, (*path, str(key.value)), found)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _marks(item, (*path, index), found)


def _where(source: str, mark: yaml.Mark | None) -> str:
    return f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source


def parse_campaign_file(text: str, source: str) -> CampaignFile:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise InvalidInputError(f"{_where(source, mark)}: not valid YAML ({problem}).") from None
    if node is None:
        raise InvalidInputError(f"{source}: the file is empty.")
    data: Any = yaml.SafeLoader("").construct_document(node)
    marks: dict[Path_, yaml.Mark] = {}
    _marks(node, (), marks)
    try:
        return CampaignFile.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            location = tuple(error["loc"])
            # The deepest value the file has on that path (a missing field points at its parent).
            known = max((p for p in marks if location[: len(p)] == p), key=len)
            field = _field(location)
            problems.append(f"{_where(source, marks[known])}: {field}: {error['msg']}")
        raise InvalidInputError(
            "; ".join(problems), field=_field(tuple(exc.errors()[0]["loc"]))
        ) from None


def _field(location: Path_) -> str:
    """('entities', 1, 'type') -> 'entities[1].type'."""
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "file"
