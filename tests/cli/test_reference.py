"""docs/reference/ is generated, and every variable the package names is a setting."""

from __future__ import annotations

import ast
import difflib
import re
from pathlib import Path

from glyphoxa_mcp.cli import build_parser
from glyphoxa_mcp.cli.options import bindings
from glyphoxa_mcp.cli.reference import CONFIGURATION, REGENERATE, commands, generated
from glyphoxa_mcp.cli.settings import VARIABLES

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "glyphoxa_mcp"
REFERENCE = ROOT / "docs" / "reference"
NAME = re.compile(r"GLYPHOXA_[A-Z0-9_]*[A-Z0-9]")
# The only modules that may look at the environment: the settings, read once; and the bench,
# which hands a `serve` subprocess this environment less every GLYPHOXA_* variable.
READS_ENVIRONMENT = {"cli/settings.py", "bench/http_serve.py"}


def test_the_committed_reference_is_what_the_code_generates() -> None:
    for name, text in generated().items():
        committed = (REFERENCE / name).read_text() if (REFERENCE / name).exists() else ""
        diff = list(
            difflib.unified_diff(
                committed.splitlines(),
                text.splitlines(),
                f"committed {name}",
                "generated",
                n=0,
                lineterm="",
            )
        )
        assert not diff, f"docs/reference/{name} is out of date; run `{REGENERATE}`:\n" + "\n".join(
            diff[:30]
        )


def test_every_glyphoxa_variable_named_in_the_package_is_a_setting() -> None:
    named: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for name in NAME.findall(path.read_text()):
            named.setdefault(name, set()).add(str(path.relative_to(PACKAGE)))
    unknown = {name: sorted(where) for name, where in named.items() if name not in VARIABLES}
    assert not unknown, f"not fields of glyphoxa_mcp/cli/settings.py: {unknown}"


def test_every_setting_is_in_the_configuration_reference() -> None:
    reference = (REFERENCE / CONFIGURATION).read_text()
    missing = [name for name in VARIABLES if f"| `{name}` |" not in reference]
    assert not missing, f"missing from docs/reference/{CONFIGURATION}: {missing}"


def test_every_setting_is_used_by_some_command() -> None:
    parser = build_parser()
    used = {env for c in commands(parser) for env in bindings(c.parser)}
    extra = {
        name
        for name, variable in VARIABLES.items()
        if isinstance(variable.info.json_schema_extra, dict)
        and "used_by" in variable.info.json_schema_extra
    }
    assert set(VARIABLES) - used - extra == set()


def test_only_the_settings_read_the_environment() -> None:
    readers = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.attr]
                if isinstance(node, ast.Attribute)
                else [alias.name for alias in node.names]
                if isinstance(node, ast.ImportFrom) and node.module == "os"
                else []
            )
            if {"environ", "getenv", "environb"} & set(names):
                readers.add(str(path.relative_to(PACKAGE)))
    extra = sorted(readers - READS_ENVIRONMENT)
    assert not extra, f"read the environment outside glyphoxa_mcp/cli/settings.py: {extra}"
