"""`schemas`: write tool_schemas/ for MCP, OpenAI Realtime and Gemini Live, or check it."""

from __future__ import annotations

import argparse
from pathlib import Path

from glyphoxa_mcp.domain.wording import counted


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    schemas = commands.add_parser(
        "schemas",
        help="write each tier's tool definitions for MCP, OpenAI Realtime and Gemini Live",
    )
    schemas.add_argument("--out", default="tool_schemas", help="folder (default: tool_schemas)")
    schemas.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if the folder is out of date"
    )
    schemas.set_defaults(run=run_schemas)


async def run_schemas(args: argparse.Namespace) -> int:
    from glyphoxa_mcp.server.tool_schemas import export  # imports the MCP SDK; see run_serve

    out = Path(args.out)
    files = await export(out)
    if args.check:
        stale = [str(p) for p, text in files.items() if not p.is_file() or p.read_text() != text]
        extra = (
            sorted(str(p) for p in out.rglob("*.json") if p not in files) if out.is_dir() else []
        )
        for name in [*stale, *extra]:
            print(f"out of date: {name}")
        if stale or extra:
            print("Run `glyphoxa-mcp schemas` to regenerate.")
            return 1
        print(f"{out} is up to date ({counted(len(files), 'file')})")
        return 0
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {path}")
    return 0
