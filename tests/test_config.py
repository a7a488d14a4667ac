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


def test_data_dir_expands_the_home_folder() -> None:
    assert DatabaseSettings.build(data_dir="~/glyphoxa").data_dir == Path.home() / "glyphoxa"
