"""How the offline session summary compares with the reference summaries of a LoCoMo file.

Each session of each conversation is summarised offline (pipeline/summary.py) as `session
end` would, and scored against the file's `session_summary` with ROUGE-1, ROUGE-2 and
ROUGE-L F1 (the `rouge-score` package, Porter stemming) and by the share of the reference's
names the summary holds. Beside it, four extractive baselines pick from the same sentences
(each with its speaker, as a transcript shows it) and are cut to the same number of words:
the first sentences of the session (lead), LexRank (Erkan and Radev 2004: TF-IDF cosine
graph, threshold 0.1), TextRank (Mihalcea and Tarau 2004: word-overlap graph) and LSA
(Steinberger and Ježek 2004: sentence length in the top singular dimensions).

A reference's names are its capitalised words that do not begin a sentence (but "I");
a summary holds a name when it has the word, in any case.
"""

from __future__ import annotations

import math
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from pydantic import BaseModel

from glyphoxa_mcp.bounded_input import load_json
from glyphoxa_mcp.domain.session_summaries import render_summary
from glyphoxa_mcp.errors import ConfigurationError, InvalidInputError
from glyphoxa_mcp.evaluation.locomo import Conversation, parse_locomo, turn_times
from glyphoxa_mcp.pipeline.summary import WORD_BUDGET, Sentence, sentences_of, summary_parts
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.recall.mentions import NamePattern

OURS = "glyphoxa"
BASELINES = ("lead", "lexrank", "textrank", "lsa")
METRICS = ("rouge1", "rouge2", "rougeL", "names")
LEXRANK_THRESHOLD = 0.1
DAMPING = 0.85
LSA_DIMENSIONS = 3
_WORD = re.compile(r"[a-z0-9]+")
_REFERENCE_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_CAPITALISED = re.compile(r"\b[A-Z][A-Za-z'-]*")


@dataclass(frozen=True)
class Line:
    speaker_name: str
    text: str
    spoken_at: datetime


@dataclass(frozen=True)
class SessionCase:
    conversation: str
    session: int
    lines: tuple[Line, ...]
    reference: str


class SummaryRow(BaseModel):
    conversation: str
    session: int
    words: int
    scores: dict[str, dict[str, float]]
    """method -> metric -> value."""


class MethodFigures(BaseModel):
    method: str
    rouge1: float
    rouge2: float
    rougeL: float
    names: float


class ConversationFigures(BaseModel):
    conversation: str
    sessions: int
    methods: list[MethodFigures]


class Spread(BaseModel):
    method: str
    metric: str
    mean: float
    lowest: float
    highest: float
    stdev: float


class SummaryReport(BaseModel):
    dataset: str
    embedder: str
    sessions: int
    word_budget: int
    mean_words: float
    overall: list[MethodFigures]
    conversations: list[ConversationFigures]
    spread: list[Spread]
    summarise_ms_per_session: float
    rows: list[SummaryRow]
    summaries: list[dict[str, Any]]


def cases(text: str, source: str) -> list[SessionCase]:
    """Every session of the file that has a reference summary."""
    conversations = parse_locomo(text, source)
    raw = load_json(text, source)
    found = []
    for conversation, item in zip(conversations, raw, strict=True):
        references = item.get("session_summary") if isinstance(item, dict) else None
        if not isinstance(references, dict):
            raise InvalidInputError(
                f"{source}: conversation {conversation.sample_id!r} has no 'session_summary' "
                "object (session_N_summary: text)."
            )
        found += _cases(conversation, references)
    if not found:
        raise InvalidInputError(f"{source}: no session has a session_N_summary to score.")
    return found


def _cases(conversation: Conversation, references: dict[str, Any]) -> list[SessionCase]:
    found = []
    for session in conversation.sessions:
        reference = references.get(f"session_{session.number}_summary")
        if not isinstance(reference, str) or not reference.strip():
            continue
        times = turn_times(session.started_at, len(session.turns))
        lines = tuple(
            Line(turn.speaker, turn.utterance, moment)
            for turn, moment in zip(session.turns, times, strict=True)
        )
        found.append(SessionCase(conversation.sample_id, session.number, lines, reference))
    return found


# --- the baselines ------------------------------------------------------------------------


def _terms(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _pagerank(matrix: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    count = matrix.shape[0]
    sums = matrix.sum(axis=1, keepdims=True)
    transition = np.where(sums > 0, matrix / np.where(sums > 0, sums, 1), 1.0 / count)
    rank = np.full(count, 1.0 / count)
    for _ in range(100):
        updated = (1 - DAMPING) / count + DAMPING * transition.T @ rank
        if np.abs(updated - rank).sum() < 1e-9:
            return np.asarray(updated)
        rank = updated
    return rank


def lexrank(texts: Sequence[str]) -> list[float]:
    tokens = [_terms(t) for t in texts]
    documents = Counter(w for ts in tokens for w in set(ts))
    count = len(texts)
    vocabulary = sorted(documents)
    index = {w: i for i, w in enumerate(vocabulary)}
    matrix = np.zeros((count, len(vocabulary)))
    for row, ts in enumerate(tokens):
        for word, tf in Counter(ts).items():
            matrix[row, index[word]] = tf * math.log(count / documents[word])
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = matrix / np.where(norms > 0, norms, 1)
    similarity = unit @ unit.T
    graph = (similarity > LEXRANK_THRESHOLD).astype(float)
    return [float(x) for x in _pagerank(graph)]


def textrank(texts: Sequence[str]) -> list[float]:
    tokens = [set(_terms(t)) for t in texts]
    count = len(texts)
    graph = np.zeros((count, count))
    for i in range(count):
        for j in range(count):
            if i != j and len(tokens[i]) > 1 and len(tokens[j]) > 1:
                overlap = len(tokens[i] & tokens[j])
                graph[i, j] = overlap / (math.log(len(tokens[i])) + math.log(len(tokens[j])))
    return [float(x) for x in _pagerank(graph)]


def lsa(texts: Sequence[str]) -> list[float]:
    tokens = [_terms(t) for t in texts]
    vocabulary = sorted({w for ts in tokens for w in ts})
    if not vocabulary:
        return [0.0] * len(texts)
    index = {w: i for i, w in enumerate(vocabulary)}
    matrix = np.zeros((len(vocabulary), len(texts)))
    for column, ts in enumerate(tokens):
        for word, tf in Counter(ts).items():
            matrix[index[word], column] = tf
    _, singular, vt = np.linalg.svd(matrix, full_matrices=False)
    kept = min(LSA_DIMENSIONS, len(singular))
    weighted = (singular[:kept, None] ** 2) * (vt[:kept] ** 2)
    return [float(x) for x in np.sqrt(weighted.sum(axis=0))]


def lead(texts: Sequence[str]) -> list[float]:
    return [float(len(texts) - i) for i in range(len(texts))]


RANKERS: dict[str, Callable[[Sequence[str]], list[float]]] = {
    "lead": lead,
    "lexrank": lexrank,
    "textrank": textrank,
    "lsa": lsa,
}


def extract(sentences: Sequence[Sentence], ranker: str, words: int) -> str:
    """The best-ranked sentences, each with its speaker, in the order said, cut to
    `words` words."""
    texts = [f"{s.speaker}: {s.text}" for s in sentences]
    if not texts:
        return ""
    ranks = RANKERS[ranker](texts)
    order = sorted(range(len(texts)), key=lambda i: (-ranks[i], i))
    picked: list[int] = []
    spent = 0
    for i in order:
        if spent >= words:
            break
        picked.append(i)
        spent += len(texts[i].split())
    chosen = " ".join(texts[i] for i in sorted(picked)).split()
    return " ".join(chosen[:words])


# --- scoring ------------------------------------------------------------------------------


def reference_names(reference: str) -> list[str]:
    """Capitalised words not beginning a sentence (but "I"), casefolded, once each."""
    names: dict[str, None] = {}
    for sentence in _REFERENCE_SENTENCE.findall(reference):
        for match in list(_CAPITALISED.finditer(sentence.strip()))[1:]:
            word = match.group(0).strip("'-")
            if word and word != "I" and len(word) > 1:
                names[word.casefold().removesuffix("'s")] = None
    return list(names)


def names_held(reference: str, summary: str) -> float:
    names = reference_names(reference)
    if not names:
        return 1.0
    words = set(re.findall(r"[a-z0-9]+", summary.casefold()))
    return sum(all(w in words for w in _terms(n)) for n in names) / len(names)


def _scorer() -> Any:
    try:
        from rouge_score import rouge_scorer  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ConfigurationError(
            "`eval summaries` scores with the rouge-score package: "
            "pip install 'glyphoxa-mcp[eval]'."
        ) from exc
    return rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)


def scores(scorer: Any, reference: str, summary: str) -> dict[str, float]:
    rouge = scorer.score(reference, summary)
    return {
        "rouge1": rouge["rouge1"].fmeasure,
        "rouge2": rouge["rouge2"].fmeasure,
        "rougeL": rouge["rougeL"].fmeasure,
        "names": names_held(reference, summary),
    }


def _figures(method: str, rows: Sequence[SummaryRow]) -> MethodFigures:
    def mean(metric: str) -> float:
        return round(statistics.fmean(r.scores[method][metric] for r in rows), 3)

    return MethodFigures(
        method=method,
        rouge1=mean("rouge1"),
        rouge2=mean("rouge2"),
        rougeL=mean("rougeL"),
        names=mean("names"),
    )


async def evaluate(
    text: str, source: str, embedder: Embedder, budget: int = WORD_BUDGET
) -> SummaryReport:
    scorer = _scorer()
    empty = NamePattern.of_terms([])
    rows, summaries = [], []
    spent = 0.0
    for case in cases(text, source):
        sentences = sentences_of(case.lines)
        started = time.perf_counter()
        vectors = await embedder.embed([s.text for s in sentences]) if sentences else []
        parts = summary_parts(case.lines, [], sentences, vectors, empty, {}, budget)
        spent += time.perf_counter() - started
        ours = render_summary(parts)
        words = len(ours.split())
        outputs = {OURS: ours} | {m: extract(sentences, m, words) for m in BASELINES}
        rows.append(
            SummaryRow(
                conversation=case.conversation,
                session=case.session,
                words=words,
                scores={m: scores(scorer, case.reference, s) for m, s in outputs.items()},
            )
        )
        summaries.append(
            {"conversation": case.conversation, "session": case.session, "summary": ours}
        )
    return report(source, embedder.model, budget, rows, summaries, spent)


def report(
    source: str,
    embedder: str,
    budget: int,
    rows: Sequence[SummaryRow],
    summaries: list[dict[str, Any]],
    seconds: float,
) -> SummaryReport:
    methods = (OURS, *BASELINES)
    conversations = list(dict.fromkeys(r.conversation for r in rows))
    per_conversation = [
        ConversationFigures(
            conversation=c,
            sessions=sum(r.conversation == c for r in rows),
            methods=[_figures(m, [r for r in rows if r.conversation == c]) for m in methods],
        )
        for c in conversations
    ]
    spread = []
    for index, method in enumerate(methods):
        for metric in ("rougeL", "names"):
            values = [getattr(c.methods[index], metric) for c in per_conversation]
            spread.append(
                Spread(
                    method=method,
                    metric=metric,
                    mean=round(statistics.fmean(values), 3),
                    lowest=min(values),
                    highest=max(values),
                    stdev=round(statistics.pstdev(values), 3),
                )
            )
    return SummaryReport(
        dataset=source,
        embedder=embedder,
        sessions=len(rows),
        word_budget=budget,
        mean_words=round(statistics.fmean(r.words for r in rows), 1),
        overall=[_figures(m, rows) for m in methods],
        conversations=per_conversation,
        spread=spread,
        summarise_ms_per_session=round(1000 * seconds / max(len(rows), 1), 2),
        rows=list(rows),
        summaries=summaries,
    )
