from __future__ import annotations

from collections.abc import Callable

import pytest

from glyphoxa_mcp.bounded_input import check_length, load_json, load_json_line
from glyphoxa_mcp.errors import InvalidInputError


def refused(call: Callable[..., object], *args: object, **kwargs: object) -> str:
    with pytest.raises(InvalidInputError) as caught:
        call(*args, **kwargs)
    return str(caught.value)


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = '{"a": "[[[{{{\\"[[[", "b": [[["]]]"]]]}'
    assert load_json(text, "w.json", max_depth=4) == {"a": '[[[{{{"[[[', "b": [[["]]]"]]]}


def test_nesting_past_the_limit_is_refused_at_the_bracket_that_opens_it() -> None:
    text = '{"actors": [\n  {"system": ' + "[" * 200 + "]" * 200 + "}]}"
    message = refused(load_json, text, "w.json")
    assert message == "w.json:2:111: nested deeper than 100 levels."
    deep_line = '{"text": ' + "{" * 10 + "}" * 10 + "}"
    message = refused(load_json_line, deep_line, "game.jsonl:7", max_depth=5)
    assert message == "game.jsonl:7:14: nested deeper than 5 levels."


def test_text_past_the_limit_is_refused_at_the_first_character_too_many() -> None:
    message = refused(check_length, "ab\ncdef", "w.json", limit=5)
    assert message == "w.json:2:3: the file is longer than 5 characters, the most accepted."
    assert refused(load_json_line, "[1, 2]", "s.jsonl:3", max_chars=4).startswith(
        "s.jsonl:3: the line is longer than 4 characters"
    )


def test_bad_json_and_numbers_too_long_to_convert_name_their_place() -> None:
    assert refused(load_json, '{"a":\n [1,}', "w.json") == (
        "w.json:2:5: not valid JSON (Expecting value)."
    )
    assert refused(load_json, '{"a":\n [' + "9" * 5000 + "]}", "w.json").startswith(
        "w.json:2:3: a number has more than"
    )
