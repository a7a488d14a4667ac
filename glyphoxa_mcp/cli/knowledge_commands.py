"""`fact add|list|retcon|history`, `review list|confirm|reject`, `secret mark|reveal`."""

from __future__ import annotations

import argparse

from glyphoxa_mcp.cli.dm_support import (
    add_common,
    add_visibility,
    campaign_desk,
    emit,
    parse_item,
    visibility_of,
)
from glyphoxa_mcp.cli.options import add_embedder_options
from glyphoxa_mcp.cli.output import print_table
from glyphoxa_mcp.desk import review_actions
from glyphoxa_mcp.desk.fact_actions import (
    add_fact,
    fact_history,
    list_facts,
    retcon_fact,
    rumour_rule,
)
from glyphoxa_mcp.desk.name_actions import entity_resolver
from glyphoxa_mcp.desk.secret_actions import keep_lines_to_dm, keep_session_to_dm, set_visibility
from glyphoxa_mcp.domain.models import Fact, Visibility
from glyphoxa_mcp.domain.review_items import ReviewItem
from glyphoxa_mcp.domain.rumours import RumourRule
from glyphoxa_mcp.domain.wording import counted
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.recall.time_bounds import parse_time_bound


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    fact = commands.add_parser("fact", help="add, list, retcon facts")
    facts = fact.add_subparsers(title="actions", metavar="ACTION", required=True)
    add = facts.add_parser("add", help='add a fact: SUBJECT "TEXT"')
    add.add_argument("subject", help="the entity it is about (name, alias or id)")
    add.add_argument("text")
    add.add_argument("--session", help="the session it came from")
    add.add_argument("--when", help="an ISO date (real time) or 'day N' (story time)")
    add.add_argument("--confidence", type=float, default=1.0, help="below 1 marks a rumour")
    add_visibility(add)
    add_common(add)
    add_embedder_options(add)
    add.set_defaults(run=run_fact_add)
    listing = facts.add_parser("list", help="current facts, about one entity if given")
    listing.add_argument("subject", nargs="?")
    add_common(listing)
    listing.set_defaults(run=run_fact_list)
    retcon = facts.add_parser(
        "retcon", help="replace a fact's text; the old one is kept as history"
    )
    retcon.add_argument("item", metavar="fact:ID")
    retcon.add_argument("text")
    add_common(retcon)
    add_embedder_options(retcon)
    retcon.set_defaults(run=run_retcon)
    history = facts.add_parser("history", help="a fact and the versions it replaced")
    history.add_argument("item", metavar="fact:ID")
    add_common(history)
    history.set_defaults(run=run_history)

    review = commands.add_parser("review", help="confirm or reject low-confidence knowledge")
    reviews = review.add_subparsers(title="actions", metavar="ACTION", required=True)
    queue = reviews.add_parser("list", help="what waits for review")
    queue.add_argument(
        "--threshold",
        type=float,
        help="list what is below this confidence (default: the campaign's review threshold)",
    )
    add_common(queue)
    queue.set_defaults(run=run_review_list)
    for name, run, text in (
        ("confirm", run_confirm, "confirm it (a rumour becomes fact; an import is written)"),
        ("reject", run_reject, "reject it (it is deleted; an import is dropped)"),
    ):
        action = reviews.add_parser(name, help=text)
        action.add_argument("item", metavar="rel:ID|fact:ID|import:ID")
        add_common(action)
        action.set_defaults(run=run)

    secret = commands.add_parser(
        "secret",
        help="decide who knows an entity, relationship or fact; keep a line or session to the DM",
    )
    secrets = secret.add_subparsers(title="actions", metavar="ACTION", required=True)
    mark = secrets.add_parser(
        "mark",
        help="make it secret, known only to --known-by (or the DM); a transcript line or a "
        "whole session: DM-only",
    )
    mark.add_argument("item", metavar="NAME|rel:ID|fact:ID|line:ID|session:ID")
    mark.add_argument("--known-by", action="append", default=[], metavar="NPC")
    add_common(mark)
    mark.set_defaults(run=run_mark)
    reveal = secrets.add_parser("reveal", help="make it common knowledge (or readable by NPCs)")
    reveal.add_argument("item", metavar="NAME|rel:ID|fact:ID|line:ID|session:ID")
    add_common(reveal)
    reveal.set_defaults(run=run_reveal)


def fact_id(reference: str) -> int:
    kind, item = parse_item(reference if ":" in reference else f"fact:{reference}")
    if kind != "fact":
        raise InvalidInputError(f"{reference!r} is not a fact; write fact:ID.")
    assert isinstance(item, int)
    return item


def fact_line(fact: Fact, names: dict[str, str], rumours: RumourRule) -> list[str]:
    when = fact.story_label or (f"day {fact.story_day:g}" if fact.story_day is not None else "")
    marks = []
    if rumours.is_rumour(fact.provenance):
        marks.append("rumour")
    if fact.visibility.secret:
        marks.append("secret")
    subject = names.get(fact.subject_id or "", fact.subject_id or "")
    return [f"fact:{fact.id}", subject, fact.text, when, ", ".join(marks)]


async def run_fact_add(args: argparse.Namespace) -> int:
    bound = parse_time_bound(args.when, "--when")
    async with campaign_desk(args) as desk:
        entities = await entity_resolver(desk)
        subject = entities.resolve(args.subject, "subject")
        stored = await add_fact(
            desk,
            subject.id,
            args.text,
            session_id=args.session,
            story_day=bound.story_day if bound else None,
            occurred_at=bound.real if bound else None,
            confidence=args.confidence,
            visibility=visibility_of(args, entities),
        )
    emit(args, stored.model_dump(mode="json"), f"fact:{stored.id}  {subject.name}: {stored.text}")
    return 0


async def run_fact_list(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        entities = await entity_resolver(desk)
        subject = entities.resolve(args.subject, "subject") if args.subject else None
        found = await list_facts(desk, subject.id if subject else None)
        rumours = await rumour_rule(desk)
    names = {e.id: e.name for e in entities.entities}
    if args.json:
        emit(args, [f.model_dump(mode="json") for f in found], "")
    elif found:
        print_table(
            ["id", "about", "fact", "when", ""], [fact_line(f, names, rumours) for f in found]
        )
    else:
        print("No facts yet.")
    return 0


async def run_retcon(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        new = await retcon_fact(desk, fact_id(args.item), args.text)
    emit(
        args,
        new.model_dump(mode="json"),
        f"fact:{new.id}  {new.text}\n(the old version, {args.item}, is kept as history)",
    )
    return 0


async def run_history(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        versions = await fact_history(desk, fact_id(args.item))
    text = "\n".join(
        f"fact:{f.id}  {f.text}"
        + ("" if f.superseded_by is None else f"  (replaced by fact:{f.superseded_by})")
        for f in versions
    )
    emit(args, [f.model_dump(mode="json") for f in versions], text)
    return 0


async def run_review_list(args: argparse.Namespace) -> int:
    async with campaign_desk(args) as desk:
        waiting = await review_actions.waiting_for_review(desk, args.threshold)
        names = {e.id: e.name for e in (await entity_resolver(desk)).entities}
    threshold, queue, imports = waiting.threshold, waiting.queue, waiting.imports
    rows = (
        [
            [
                f"rel:{r.id}",
                f"{names.get(r.source_id)} {r.rel_type} {names.get(r.target_id)}",
                f"{r.provenance.confidence:.0%}",
                r.provenance.source,
                r.provenance.session_id or "",
            ]
            for r in queue.relationships
        ]
        + [
            [
                f"fact:{f.id}",
                f.text,
                f"{f.provenance.confidence:.0%}",
                f.provenance.source,
                f.session_id or "",
            ]
            for f in queue.facts
        ]
        + [
            [
                f"import:{p.id}",
                f"{p.entity.name} ({p.entity.type.value})",
                "",
                p.source,
                "updates an entity" if p.entity.id in names else "",
            ]
            for p in imports
        ]
    )
    if args.json:
        emit(
            args,
            queue.model_dump(mode="json")
            | {"imports": [p.model_dump(mode="json") for p in imports]},
            "",
        )
    elif rows:
        print_table(["id", "item", "confidence", "source", "session"], rows)
        print("\nreview confirm ID keeps one; review reject ID deletes it.")
    else:
        print(f"Nothing waits for review (threshold {threshold:.0%}).")
    return 0


async def run_confirm(args: argparse.Namespace) -> int:
    item = ReviewItem.parse(args.item)
    async with campaign_desk(args) as desk:
        await review_actions.confirm(desk, [item])
    emit(args, {"confirmed": args.item}, f"Confirmed {args.item}.")
    return 0


async def run_reject(args: argparse.Namespace) -> int:
    item = ReviewItem.parse(args.item)
    async with campaign_desk(args) as desk:
        await review_actions.reject(desk, [item])
    emit(args, {"rejected": args.item}, f"Rejected {args.item}; it is deleted.")
    return 0


async def _set_visibility(args: argparse.Namespace, secret: bool, known_by: list[str]) -> str:
    """Apply the visibility to the item; returns how to name the item to the DM."""
    async with campaign_desk(args) as desk:
        entities = await entity_resolver(desk)
        kind, item = parse_item(args.item)
        label: str = args.item
        if kind == "import":
            raise InvalidInputError(
                f"{args.item}: an import waiting for review has no visibility yet; "
                "`review confirm` it first."
            )
        if kind == "line" or kind == "session":
            raise AssertionError("lines and sessions are kept to the DM by _keep_to_dm")
        if kind == "entity":
            entity = entities.resolve(str(item))
            item, label = entity.id, entity.name
        knowers = tuple(entities.resolve(name, "--known-by").id for name in known_by)
        await set_visibility(desk, kind, item, Visibility(secret=secret, known_by=knowers))
    return label


async def _keep_to_dm(args: argparse.Namespace, dm_only: bool) -> int:
    """`secret mark|reveal line:ID|session:ID`."""
    kind, item = parse_item(args.item)
    if dm_only and getattr(args, "known_by", None):
        raise InvalidInputError(
            f"{args.item}: a transcript line or session is DM-only or not; --known-by is for "
            "entities, relationships and facts."
        )
    async with campaign_desk(args) as desk:
        if kind == "line":
            assert isinstance(item, int)
            lines = await keep_lines_to_dm(desk, [item], dm_only)
            data = {
                "line": item,
                "dm_only": dm_only,
                "summaries_rewritten": list(lines.summaries_rewritten),
                "waiting_for_llm": list(lines.waiting_for_llm),
            }
            text = [f"line:{item} is now {'DM-only' if dm_only else 'shown to NPCs'}."]
            for session in lines.summaries_rewritten:
                text.append(f"The summary of session {session!r} was written again without it.")
            if lines.waiting_for_llm:
                text.append(
                    "Run `glyphoxa-mcp session end --retry-llm` to have the LLM write "
                    f"{', '.join(repr(s) for s in lines.waiting_for_llm)} again."
                )
        else:
            marked = await keep_session_to_dm(desk, str(item), dm_only)
            hidden = marked.hidden
            data = {"session": marked.session.id, "dm_only": dm_only}
            text = [
                f"Session {marked.session.id!r} is now "
                f"{'DM-only' if dm_only else 'readable by NPCs'}."
            ]
            if hidden is not None:
                data |= {
                    "facts_made_secret": hidden.facts,
                    "relationships_made_secret": hidden.relationships,
                }
                text.append(
                    f"Its episode and what it taught ({counted(hidden.facts, 'fact')}, "
                    f"{counted(hidden.relationships, 'relationship')}) are now known to the DM "
                    "only."
                )
            elif not dm_only:
                text.append(
                    "Facts and relationships learned in it stay secret: `secret reveal` each "
                    "you want NPCs to know."
                )
    emit(args, data, "\n".join(text))
    return 0


async def run_mark(args: argparse.Namespace) -> int:
    if parse_item(args.item)[0] in ("line", "session"):
        return await _keep_to_dm(args, True)
    label = await _set_visibility(args, True, args.known_by)
    who = ", ".join(args.known_by) if args.known_by else "the DM only"
    emit(
        args,
        {"secret": args.item, "known_by": args.known_by},
        f"{label} is now secret, known by {who}.",
    )
    return 0


async def run_reveal(args: argparse.Namespace) -> int:
    if parse_item(args.item)[0] in ("line", "session"):
        return await _keep_to_dm(args, False)
    label = await _set_visibility(args, False, [])
    emit(args, {"revealed": args.item}, f"{label} is now common knowledge.")
    return 0
