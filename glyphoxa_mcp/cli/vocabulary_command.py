"""`vocabulary`: the campaign's names as a speech-to-text keyword list."""

from __future__ import annotations

import argparse

from glyphoxa_mcp.cli.dm_support import add_campaign_option, campaign_desk
from glyphoxa_mcp.cli.options import add_database_options
from glyphoxa_mcp.desk.name_actions import speech_terms
from glyphoxa_mcp.recall.speech_terms import FORMATS, formatted


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    vocabulary = commands.add_parser(
        "vocabulary",
        help="the campaign's names and aliases as a speech-to-text keyword list",
        description="Prints every name and alias (people first) for a speech-to-text "
        "service, so names are heard right before they are transcribed: plain (one a line), "
        "json, deepgram (the keyterm query string of Nova-3, first 100) or assemblyai "
        "(word_boost JSON). With --npc, only what that NPC may know.",
    )
    add_campaign_option(vocabulary)
    vocabulary.add_argument("--npc", metavar="ID", help="only the names this NPC may know")
    vocabulary.add_argument("--format", choices=FORMATS, default="plain")
    add_database_options(vocabulary)
    vocabulary.set_defaults(run=run_vocabulary)


async def run_vocabulary(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        terms = await speech_terms(desk, args.npc or None)
    print(formatted(terms, args.format, desk.campaign_id))
    return 0
