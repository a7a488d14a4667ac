"""`eval locomo FILE`: evidence recall of session search on a LoCoMo-format file; `eval
summaries FILE`: the offline session summary against its reference summaries."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from glyphoxa_mcp.cli.campaign_commands import read_text
from glyphoxa_mcp.cli.dm_support import emit
from glyphoxa_mcp.cli.options import (
    EMBEDDING_DIM_HELP,
    add_embedder_options,
    app_settings,
    env_option,
)
from glyphoxa_mcp.cli.output import print_table
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.evaluation.locomo import parse_locomo
from glyphoxa_mcp.evaluation.recall import KS

if TYPE_CHECKING:
    from glyphoxa_mcp.evaluation.locomo_run import LocomoReport


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
    locomo.add_argument(
        "--tune",
        action="store_true",
        help="also run each tuned number of the search one step down and up, and show for "
        "each conversation held out which setting the others would choose and how it does "
        "there (leave-one-conversation-out); several times slower",
    )
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
    summaries = benchmarks.add_parser(
        "summaries",
        help="the offline session summary against a LoCoMo file's reference summaries",
        description="Summarises each session of a LoCoMo-format file offline, as `session end` "
        "does without an LLM, and scores it against the file's session_summary with ROUGE-1, "
        "ROUGE-2 and ROUGE-L F1 (rouge-score, stemmed) and the share of the reference's names "
        "it holds, beside four extractive baselines cut to the same length (lead, LexRank, "
        "TextRank, LSA); per conversation, with the spread across them. Needs no database; "
        "scoring needs the eval extra: pip install 'glyphoxa-mcp[eval]'.",
    )
    summaries.add_argument("file", type=Path, help="a LoCoMo JSON file with session_summary")
    summaries.add_argument(
        "--json",
        type=Path,
        metavar="OUT",
        help='also write every session\'s summary to OUT as {"sessions": [{"conversation", '
        '"session", "summary"}, ...]}, beside the scores',
    )
    summaries.set_defaults(run=run_summaries)


async def run_locomo(args: argparse.Namespace) -> int:
    # Imports the MCP SDK and the pipeline; see run_serve.
    from glyphoxa_mcp.evaluation.locomo_run import evaluate, scratch_app
    from glyphoxa_mcp.recall.search_tuning import SHIPPED_TUNING, one_step_away

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
            settings=one_step_away(SHIPPED_TUNING) if args.tune else None,
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
    _print_generalisation(report)
    return 0


def _print_generalisation(report: LocomoReport) -> None:
    names = list(dict.fromkeys(n for row in report.conversation_rows for n in row.by_category))
    print("\nPer conversation (categories 1-4; by category at R@10):")
    print_table(
        ["conversation", "questions", *(f"R@{k}" for k in KS), *names],
        [
            [
                row.conversation,
                row.questions,
                *(f"{row.recall[k]:.1f}" for k in KS),
                *(f"{row.by_category[n]:.1f}" if n in row.by_category else "-" for n in names),
            ]
            for row in report.conversation_rows
        ],
    )
    s = report.spread
    print(
        f"Spread of R@{s.k} across conversations: mean {s.mean:.1f}, lowest {s.lowest:.1f}, "
        f"highest {s.highest:.1f}, standard deviation {s.stdev:.1f}."
    )
    if len(report.settings) > 1 and not report.folds:
        print("Leave one conversation out needs at least two conversations in the file.")
    if not report.folds:
        return
    print(
        f"\nLeave one conversation out ({len(report.settings)} settings: the shipped one and "
        "each tuned number one step away). The setting chosen on the other conversations, "
        f"scored on the one held out, beside the shipped setting there (R@10, 1-4):"
    )
    print_table(
        ["held out", "chosen on the others", "on the others", "held out", "shipped", "gain"],
        [
            [
                fold.held_out,
                fold.chosen,
                f"{fold.chosen_on_others:.1f}",
                f"{fold.held_out_chosen:.1f}",
                f"{fold.held_out_shipped:.1f}",
                f"{fold.gain:+.1f}",
            ]
            for fold in report.folds
        ],
    )


async def run_summaries(args: argparse.Namespace) -> int:
    from glyphoxa_mcp.evaluation.summaries import evaluate
    from glyphoxa_mcp.providers.embeddings import offline_embedder
    from glyphoxa_mcp.providers.wordllama_embedder import DIMENSION

    report = await evaluate(read_text(args.file), str(args.file), offline_embedder(DIMENSION))
    if args.json is not None:
        written = {"sessions": report.summaries, "scores": report.model_dump(exclude={"summaries"})}
        try:
            args.json.write_text(json.dumps(written, indent=2, ensure_ascii=False) + "\n")
        except OSError as exc:
            raise InvalidInputError(f"--json {args.json}: cannot be written ({exc}).") from None
    print(
        f"Session summaries: {report.dataset}\n{report.sessions} sessions with a reference "
        f"summary; ours {report.mean_words:.0f} words on average (budget {report.word_budget}), "
        f"every baseline cut to the same length; embedder {report.embedder}.\n"
    )
    print_table(
        ["method", "ROUGE-1", "ROUGE-2", "ROUGE-L", "names held"],
        [
            [m.method, f"{m.rouge1:.3f}", f"{m.rouge2:.3f}", f"{m.rougeL:.3f}", f"{m.names:.3f}"]
            for m in report.overall
        ],
    )
    print("\nPer conversation (ROUGE-L / names held):")
    methods = [m.method for m in report.overall]
    print_table(
        ["conversation", "sessions", *methods],
        [
            [c.conversation, c.sessions, *(f"{m.rougeL:.3f} / {m.names:.3f}" for m in c.methods)]
            for c in report.conversations
        ],
    )
    print("\nSpread across conversations:")
    print_table(
        ["method", "metric", "mean", "lowest", "highest", "stdev"],
        [
            [
                s.method,
                s.metric,
                f"{s.mean:.3f}",
                f"{s.lowest:.3f}",
                f"{s.highest:.3f}",
                f"{s.stdev:.3f}",
            ]
            for s in report.spread
        ],
    )
    print(
        f"\nSummarising took {report.summarise_ms_per_session:.1f} ms a session "
        "(embedding its sentences included)."
    )
    return 0


def _progress(line: str) -> None:
    print(line, file=sys.stderr)
