from __future__ import annotations

import json
from pathlib import Path

import pytest

from glyphoxa_mcp.campaign.yaml_source import MAX_CHARS
from glyphoxa_mcp.cli.campaign_commands import read_text
from glyphoxa_mcp.errors import InvalidInputError
from tests.cli.conftest import Cli

HEADER = "campaign: {id: coast, name: The Coast}\nentities:\n  - name: Grimjaw\n    type: npc\n"
# 9**9 values once its aliases are expanded, in under 1 KB ("billion laughs").
ANCHOR_BOMB = (
    HEADER
    + "    attributes:\n      a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    + "".join(
        f"      {name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
        for previous, name in zip("abcdefgh", "bcdefghi", strict=True)
    )
)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (ANCHOR_BOMB, "12:22: the file holds more than 2,000,000 values"),
        (HEADER + "    attributes: &me {self: *me}\n", "5:28: the alias *me is inside the value"),
        (
            HEADER + '    attributes: {x: !!python/object/apply:os.system ["echo owned"]}\n',
            "5:21: the tag !!python/object/apply:os.system is not allowed",
        ),
        (
            HEADER + "# " + "x" * MAX_CHARS + "\n",
            f"5:{MAX_CHARS - len(HEADER) + 1}: the file is longer than 16,777,216 characters",
        ),
    ],
    ids=["anchor bomb", "recursive alias", "python tag", "oversize"],
)
def test_a_hostile_campaign_file_is_refused_in_one_line_and_nothing_is_stored(
    tmp_path: Path, glyphoxa: Cli, text: str, error: str
) -> None:
    file = tmp_path / "coast.yaml"
    file.write_text(text)
    result = glyphoxa("campaign", "load", str(file))
    assert result.returncode == 2
    assert result.stderr.startswith(f"glyphoxa-mcp: error: {file}:{error}"), result.stderr
    assert result.stderr.count("\n") == 1
    assert json.loads(glyphoxa("status", "--json").stdout)["campaigns"] == []


def test_a_file_is_read_no_further_than_the_limit(tmp_path: Path) -> None:
    file = tmp_path / "big.json"
    file.write_text("ab\ncdef")
    assert read_text(file, max_chars=7) == "ab\ncdef"
    with pytest.raises(InvalidInputError) as caught:
        read_text(file, max_chars=5)
    assert str(caught.value).startswith(f"{file}:2:3: the file is longer than 5 characters")
