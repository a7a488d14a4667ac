"""Counts worded with their nouns, and pydantic's rules without its prefix."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError, field_validator

from glyphoxa_mcp.domain.wording import counted, plural_of, rule_of


@pytest.mark.parametrize(
    ("count", "noun", "said"),
    [
        (1, "misheard name", "1 misheard name"),
        (2, "misheard name", "2 misheard names"),
        (0, "line", "0 lines"),
        (1, "entity", "1 entity"),
        (3, "entity", "3 entities"),
        (2, "day", "2 days"),
        (2, "pass", "2 passes"),
        (2, "branch", "2 branches"),
    ],
)
def test_one_is_singular_and_every_other_count_plural(count: int, noun: str, said: str) -> None:
    assert counted(count, noun) == said


def test_an_irregular_plural_is_given() -> None:
    assert counted(2, "person", "people") == "2 people"
    assert counted(1, "person", "people") == "1 person"
    assert plural_of("key") == "keys"


class Dsn(BaseModel):
    url: str

    @field_validator("url")
    @classmethod
    def postgres(cls, url: str) -> str:
        if not url.startswith("postgresql://"):
            raise ValueError("must start with postgresql://")
        return url


def test_a_validators_rule_reads_without_pydantics_prefix() -> None:
    with pytest.raises(ValidationError) as caught:
        Dsn(url="mysql://x")
    (error,) = caught.value.errors()
    assert error["msg"] == "Value error, must start with postgresql://"
    assert rule_of(error) == "must start with postgresql://"
