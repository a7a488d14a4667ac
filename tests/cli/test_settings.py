"""The settings model: every variable read once as a command starts, typed, a flag over it,
and a bad value an error only where it is used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glyphoxa_mcp.cli.settings import VARIABLES, read_settings
from tests.cli.runner import run_in_process


def _entry(stdout: str) -> tuple[str, dict[str, object]]:
    [(name, entry)] = json.loads(stdout)["mcpServers"].items()
    return name, entry


def test_a_variable_set_after_import_counts_when_the_command_starts(tmp_path: Path) -> None:
    # claude-config prints without a database: the quickest command that shows its settings.
    ran = run_in_process(
        "claude-config",
        env={
            "GLYPHOXA_DATA_DIR": str(tmp_path),
            "GLYPHOXA_SERVER_NAME": "tavern",
            "GLYPHOXA_TIER": "deep",
        },
    )
    assert ran.returncode == 0, ran.stderr
    name, entry = _entry(ran.stdout)
    assert name == "tavern" and "DEEP" in entry["args"]  # type: ignore[operator]
    assert entry["env"] == {"GLYPHOXA_DATA_DIR": str(tmp_path)}


def test_a_flag_overrides_its_variable_even_a_bad_one(tmp_path: Path) -> None:
    ran = run_in_process(
        "claude-config",
        "--tier",
        "fast",
        "--name",
        "inn",
        env={"GLYPHOXA_DATA_DIR": str(tmp_path), "GLYPHOXA_TIER": "ULTRA"},
    )
    assert ran.returncode == 0, ran.stderr
    name, entry = _entry(ran.stdout)
    assert name == "inn" and "FAST" in entry["args"]  # type: ignore[operator]


def test_a_bad_variable_stops_a_command_using_it_with_the_flag_variable_and_rule(
    tmp_path: Path,
) -> None:
    ran = run_in_process(
        "claude-config", env={"GLYPHOXA_DATA_DIR": str(tmp_path), "GLYPHOXA_TIER": "ultra"}
    )
    assert ran.returncode == 2 and ran.stdout == ""
    [line] = ran.stderr.strip().splitlines()
    assert line == (
        "glyphoxa-mcp: error: Invalid setting: --tier / GLYPHOXA_TIER: "
        "Input should be 'FAST', 'STANDARD' or 'DEEP' (got 'ultra')"
    )


def test_a_bad_variable_of_another_command_is_ignored(tmp_path: Path) -> None:
    ran = run_in_process(
        "claude-config",
        env={
            "GLYPHOXA_DATA_DIR": str(tmp_path),
            "GLYPHOXA_PORT": "eighty",
            "GLYPHOXA_WEB_MAX_SIGN_INS": "0",
            "GLYPHOXA_BENCH_SAMPLES": "many",
        },
    )
    assert ran.returncode == 0, ran.stderr


def test_a_bad_log_level_variable_says_which_levels_there_are() -> None:
    from glyphoxa_mcp.cli import log_level_from

    assert log_level_from(read_settings({"GLYPHOXA_LOG_LEVEL": " info "})) == "INFO"
    with pytest.raises(SystemExit) as stopped:
        log_level_from(read_settings({"GLYPHOXA_LOG_LEVEL": "loud"}))
    assert str(stopped.value) == (
        "glyphoxa-mcp: error: GLYPHOXA_LOG_LEVEL: one of DEBUG, INFO, WARNING, ERROR, not 'LOUD'"
    )
    # --log-level given: the variable is not read.
    ran = run_in_process(
        "claude-config", "--log-level", "ERROR", env={"GLYPHOXA_LOG_LEVEL": "loud"}
    )
    assert ran.returncode == 0, ran.stderr


def test_a_secret_is_never_printed_not_even_when_it_is_rejected() -> None:
    settings = read_settings(
        {"GLYPHOXA_OPENAI_API_KEY": "sk-live-abcdef", "GLYPHOXA_METRICS_TOKEN": "short-secret"}
    )
    assert "sk-live-abcdef" not in repr(settings) and "short-secret" not in repr(settings)
    assert settings.models.api_key() == "sk-live-abcdef"
    ran = run_in_process("serve", env={"GLYPHOXA_METRICS_TOKEN": "short-secret"})
    assert ran.returncode == 2
    assert "GLYPHOXA_METRICS_TOKEN: a metrics token has 16 to 200 characters" in ran.stderr
    assert "short-secret" not in ran.stderr


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"OPENAI_API_KEY": "sk-b"}, "sk-b"),
        ({"GLYPHOXA_OPENAI_API_KEY": "sk-a", "OPENAI_API_KEY": "sk-b"}, "sk-a"),
        # A blank variable counts as unset, as `os.environ.get(...) or ...` did.
        ({"GLYPHOXA_OPENAI_API_KEY": "", "OPENAI_API_KEY": "sk-b"}, "sk-b"),
        ({"GLYPHOXA_OPENAI_API_KEY": ""}, None),
    ],
)
def test_the_api_key_falls_back_to_the_openai_clients_own_variable(
    environ: dict[str, str], expected: str | None
) -> None:
    assert read_settings(environ).models.api_key() == expected


@pytest.mark.parametrize(
    ("value", "on"), [("off", False), ("NO", False), ("0", False), ("on", True), ("", True)]
)
def test_only_the_off_words_turn_the_llm_off(value: str, on: bool) -> None:
    assert read_settings({"GLYPHOXA_LLM": value}).models.llm is on


def test_values_are_typed_and_lists_comma_separated() -> None:
    settings = read_settings(
        {
            "GLYPHOXA_ALLOWED_HOSTS": " vtt.example:8765, ,memory.lan ",
            "GLYPHOXA_PORT": "9000",
            "GLYPHOXA_TIER": "deep",
            "GLYPHOXA_DSN": "  ",
            "GLYPHOXA_UNHEALTHY_EXIT_S": "2.5",
        }
    )
    assert settings.http.allowed_hosts == ("vtt.example:8765", "memory.lan")
    assert settings.serving.port == 9000 and settings.serving.unhealthy_exit_s == 2.5
    assert settings.general.tier == "DEEP" and settings.database.dsn is None
    assert not settings.problems


def test_one_bad_variable_spoils_only_itself() -> None:
    settings = read_settings({"GLYPHOXA_PORT": "70000", "GLYPHOXA_HOST": "0.0.0.0"})
    assert settings.serving.port == 8765 and settings.serving.host == "0.0.0.0"
    [problem] = settings.problems.values()
    assert problem.describe("--port") == (
        "--port / GLYPHOXA_PORT: Input should be less than or equal to 65535 (got '70000')"
    )


def test_the_commands_own_models_keep_the_settings_defaults() -> None:
    """serve and web still validate their merged flags in their own models; those must not
    drift from the settings' defaults."""
    from glyphoxa_mcp.cli import build_parser
    from glyphoxa_mcp.cli.options import bindings
    from glyphoxa_mcp.cli.reference import commands
    from glyphoxa_mcp.cli.serve_command import ServeSettings
    from glyphoxa_mcp.cli.web_command import WebSettings

    by_name = {c.name: c for c in commands(build_parser())}
    for command, model in (
        ("glyphoxa-mcp serve", ServeSettings),
        ("glyphoxa-mcp web", WebSettings),
    ):
        for env, binding in bindings(by_name[command].parser).items():
            if binding.dest in model.model_fields:
                expected = model.model_fields[binding.dest].get_default(call_default_factory=True)
                assert VARIABLES[env].default == expected, (command, env)
