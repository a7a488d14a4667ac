from __future__ import annotations

from pathlib import Path

import pytest

from glyphoxa_mcp.config import DatabaseSettings
from glyphoxa_mcp.errors import ConfigurationError


def test_defaults_use_the_embedded_server_and_the_databases_own_dimension() -> None:
    settings = DatabaseSettings.build()
    assert settings.dsn is None and settings.embedding_dim is None
    assert settings.data_dir.name == "glyphoxa-mcp"


def test_a_blank_dsn_means_embedded() -> None:
    assert DatabaseSettings.build(dsn="  ").dsn is None


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"embedding_dim": "0"}, "--embedding-dim / GLYPHOXA_EMBEDDING_DIM"),
        ({"embedding_dim": "3072"}, "--embedding-dim / GLYPHOXA_EMBEDDING_DIM"),
        ({"embedding_dim": "many"}, "--embedding-dim / GLYPHOXA_EMBEDDING_DIM"),
        ({"dsn": "mysql://x"}, "--dsn / GLYPHOXA_DSN"),
    ],
)
def test_bad_settings_name_the_flag_and_variable(values: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigurationError, match=named):
        DatabaseSettings.build(**values)


@pytest.mark.parametrize("dsn", ["postgresql://u@h/db", "postgres://u@h/db"])
def test_a_dsn_starts_with_either_postgresql_scheme(dsn: str) -> None:
    assert DatabaseSettings.build(dsn=dsn).dsn == dsn


def test_a_bad_dsn_names_both_accepted_schemes_in_plain_words() -> None:
    with pytest.raises(ConfigurationError) as caught:
        DatabaseSettings.build(dsn="mysql://x")
    assert str(caught.value) == (
        "Invalid setting: --dsn / GLYPHOXA_DSN: must start with postgresql:// or postgres:// "
        "(for example postgresql://user@host/db) (got 'mysql://x')"
    )


def test_data_dir_expands_the_home_folder() -> None:
    assert DatabaseSettings.build(data_dir="~/glyphoxa").data_dir == Path.home() / "glyphoxa"
