"""Every action of the DM's desk is what some command or some page of the web desk does: each
public function of `glyphoxa_mcp/desk/*_actions.py` is reached from a command's `run`
function (as the parser sets it) or a route's endpoint, through the functions of cli/ and
web/ they call. An action added without a command or a page fails here, naming it.

The calls are read from the source (a function reaches what it names: called, or handed on
as `review_actions.confirm` is), the entry points from the parser and the routes as they
are built."""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import pkgutil
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import glyphoxa_mcp.desk
from glyphoxa_mcp.cli import build_parser
from glyphoxa_mcp.web.desk_app import desk_routes

PACKAGE = Path(glyphoxa_mcp.desk.__file__).resolve().parents[1]
ADAPTERS = ("cli", "web")


def desk_actions() -> set[str]:
    """The desk's actions by qualified name: the public functions its *_actions modules
    define."""
    found = set()
    for info in pkgutil.iter_modules(glyphoxa_mcp.desk.__path__):
        if not info.name.endswith("_actions"):
            continue
        module = importlib.import_module(f"glyphoxa_mcp.desk.{info.name}")
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ == module.__name__ and not name.startswith("_"):
                found.add(f"{module.__name__}.{name}")
    return found


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_names(tree: ast.Module, module: str) -> dict[str, str]:
    """What each imported name (anywhere in the module) stands for, qualified."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert not node.level, f"{module}: a relative import; the package imports absolutely"
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
    return names


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def call_graph() -> dict[str, set[str]]:
    """For every function of cli/ and web/ (by qualified name), the qualified names its body
    names: functions of its own module, imported functions, and `module.function`."""
    graph: dict[str, set[str]] = {}
    for adapter in ADAPTERS:
        for path in sorted((PACKAGE / adapter).rglob("*.py")):
            module = _module_name(path)
            tree = ast.parse(path.read_text(encoding="utf-8"))
            imported = _imported_names(tree, module)
            own = {
                node.name
                for node in tree.body
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            }
            for node in tree.body:
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                named: set[str] = set()
                for inner in ast.walk(node):
                    dotted = _dotted(inner) if isinstance(inner, ast.Name | ast.Attribute) else None
                    if dotted is None:
                        continue
                    head, _, rest = dotted.partition(".")
                    if head in imported:
                        named.add(imported[head] + (f".{rest}" if rest else ""))
                    elif head in own and not rest:
                        named.add(f"{module}.{head}")
                graph[f"{module}.{node.name}"] = named
    return graph


def _commands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, str]]:
    """(the command, its run function's qualified name) for every command of the parser."""
    run = parser.get_default("run")
    if run is not None:
        yield parser.prog, f"{run.__module__}.{run.__qualname__}"
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from _commands(sub)


def entry_points() -> dict[str, str]:
    """Every command and every page by the qualified name of the function that runs it."""
    found = {f"`{command}`": run for command, run in _commands(build_parser())}
    for route in desk_routes():
        endpoint = getattr(route, "endpoint", None)
        if inspect.isfunction(endpoint):
            methods = ",".join(sorted(getattr(route, "methods", None) or ()))
            found[f"{methods} {getattr(route, 'path', '')}"] = (
                f"{endpoint.__module__}.{endpoint.__qualname__}"
            )
    return found


def reached_from(entries: Mapping[str, str], graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """For each name reached from an entry point, the entry points it is reached from."""
    reached: dict[str, set[str]] = {}
    for entry, function in entries.items():
        seen, todo = set(), [function]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            reached.setdefault(name, set()).add(entry)
            todo.extend(graph.get(name, ()))
    return reached


def uncalled(actions: Iterable[str], reached: Mapping[str, set[str]]) -> list[str]:
    return sorted(action for action in actions if not reached.get(action))


def test_every_desk_action_is_a_command_or_a_page() -> None:
    actions = desk_actions()
    reached = reached_from(entry_points(), call_graph())
    assert uncalled(actions, reached) == [], (
        "desk actions no command (cli/) and no page (web/routes/) calls: give each one, or "
        "make it private (_name)"
    )


def test_the_desk_has_the_actions_the_issue_names() -> None:
    # Enough to mean the walk found the modules: load, add, edit, secret, review, fork,
    # delete, forget, sessions, tokens, lore.
    short = {name.rpartition(".")[2] for name in desk_actions()}
    assert {
        "load_campaign_file",
        "add_entity",
        "edit_entity",
        "add_fact",
        "retcon_fact",
        "set_visibility",
        "keep_lines_to_dm",
        "waiting_for_review",
        "confirm",
        "reject",
        "fork_campaign",
        "delete_campaign",
        "delete_session",
        "forget_line",
        "end_session",
        "create_token",
        "add_lore",
        "pin_lore",
    } <= short


def test_actions_shared_by_a_command_and_a_page_are_reached_from_both() -> None:
    reached = reached_from(entry_points(), call_graph())
    retcon = reached["glyphoxa_mcp.desk.fact_actions.retcon_fact"]
    assert "`glyphoxa-mcp fact retcon`" in retcon
    assert "POST /c/{campaign}/facts/{fact_id:int}/retcon" in retcon
    confirm = reached["glyphoxa_mcp.desk.review_actions.confirm"]
    assert "`glyphoxa-mcp review confirm`" in confirm
    assert "POST /c/{campaign}/review" in confirm  # handed on, not called by name


def test_an_action_nobody_calls_is_named() -> None:
    reached = reached_from(entry_points(), call_graph())
    new = "glyphoxa_mcp.desk.entity_actions.an_action_no_command_calls"
    assert uncalled([*desk_actions(), new], reached) == [new]


def test_a_helper_of_the_commands_counts_only_when_a_command_calls_it() -> None:
    graph = {
        "glyphoxa_mcp.cli.x.run_a": {"glyphoxa_mcp.cli.x._helper"},
        "glyphoxa_mcp.cli.x._helper": {"glyphoxa_mcp.desk.a_actions.used"},
        "glyphoxa_mcp.cli.x._orphan": {"glyphoxa_mcp.desk.a_actions.unused"},
    }
    reached = reached_from({"`a`": "glyphoxa_mcp.cli.x.run_a"}, graph)
    assert uncalled(
        ["glyphoxa_mcp.desk.a_actions.used", "glyphoxa_mcp.desk.a_actions.unused"], reached
    ) == ["glyphoxa_mcp.desk.a_actions.unused"]
