"""`eval locomo FILE`: evidence recall of session search on a LoCoMo-format file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from glyphoxa_mcp.cli.campaign_commands import read_text
from glyphoxa_mcp.cli.dm_support import emit
from glyphoxa_mcp.cli.options import (
    EMBEDDING_DIM_HELP,
    add_embedder_options,
    app_settings,
    env_option,
)
from glyphoxa_mcp.cli.output import print_table
from glyphoxa_mcp.evaluation.locomo import parse_locomo
from glyphoxa_mcp.evaluation.recall import KS


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    evaluate = commands.add_parser("eval", help="measure retrieval on a public benchmark")
    benchmarks = evaluate.add_subparsers(title="benchmarks", metavar="BENCHMARK", required=True)
    locomo = benchmarks.add_parser(
        "locomo",
        help="evidence recall of memory.search_sessions on a LoCoMo file",
        description="Ingests and processes each conversation of a LoCoMo-format file as its "
        "own campaign, asks every question through memory.search_sessions (STANDARD tier, "
        f"top_k {max(KS)}), and reports how many evidence turns are among the first "
        f"{', '.join(map(str, KS))} transcript turns returned, per category and overall "
        "(categories 1-4). Runs in a temporary embedded database unless --dsn is given.",
    )
    locomo.add_argument("file", type=Path, help="a LoCoMo JSON file (a list of conversations)")
    locomo.add_argument("--json", action="store_true", help="print JSON, with every question")
    # Not GLYPHOXA_DSN: an evaluation must never write into the memory the user plays with.
    env_option(
        locomo,
        "--dsn",
        env="GLYPHOXA_EVAL_DSN",
        help="an empty PostgreSQL database to use instead of a temporary embedded one",
        metavar="URL",
    )
    env_option(
        locomo,
        "--embedding-dim",
        env="GLYPHOXA_EMBEDDING_DIM",
        help=EMBEDDING_DIM_HELP,
        metavar="N",
    )
    add_embedder_options(locomo)
    locomo.set_defaults(run=run_locomo)


async def run_locomo(args: argparse.Namespace) -> int:
    # Imports the MCP SDK and the pipeline; see run_serve.
    from glyphoxa_mcp.evaluation.locomo_run import evaluate, scratch_app

    conversations = parse_locomo(read_text(args.file), str(args.file))
    # Validates --dsn, --embedding-dim and the embedder before any server starts.
    settings = app_settings(args)
    async with scratch_app(settings) as app:
        report = await evaluate(
            app.db,
            conversations,
            app.embedder,
            str(args.file),
            say=None if args.json else _progress,
        )
    if args.json:
        emit(args, report.model_dump(mode="json"), "")
        return 0
    print(
        f"LoCoMo evidence recall: {report.dataset}\n"
        f"{report.conversations} conversations, {report.turns} turns in {report.passages} "
        f"passages, {report.questions} questions scored"
        + (f" ({report.unscored} without evidence left out)" if report.unscored else "")
        + f"; {report.tier} tier, top_k {report.top_k}, embedder {report.embedder}.\n"
    )
    print_table(
        ["category", "questions", *(f"R@{k}" for k in KS)],
        [[row.label, row.questions, *(f"{row.recall[k]:.1f}" for k in KS)] for row in report.rows],
    )
    print(
        f"\nR@k: share of evidence turns among the first k transcript turns returned (%). "
        f"Loading took {report.load_seconds:.1f} s, the questions {report.search_seconds:.1f} s."
    )
    return 0


def _progress(line: str) -> None:
    print(line, file=sys.stderr)
