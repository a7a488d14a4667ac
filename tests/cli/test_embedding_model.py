"""A database remembers which model made its vectors and refuses another of the same width
(an API key in the environment used to switch a WordLlama database to OpenAI queries)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import Cli


@pytest.mark.slow
def test_another_model_of_the_same_width_is_refused(tmp_path: Path, glyphoxa: Cli) -> None:
    transcript = tmp_path / "s1.txt"
    transcript.write_text("Brannoch: Welcome to the Red Kettle.\n")
    assert glyphoxa("ingest", str(transcript), "--session", "s1", "--campaign", "c").returncode == 0
    offline = glyphoxa("process", "s1", "--campaign", "c")
    assert offline.returncode == 0, offline.stderr
    # A key or base URL in the environment selects the OpenAI-compatible embedder; its
    # text-embedding-3-small shortened to 256 fits the column, but not the vectors.
    switched = glyphoxa(
        "process",
        "s1",
        "--campaign",
        "c",
        env={"GLYPHOXA_OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
    )
    assert switched.returncode == 2
    assert "made by 'wordllama-l2-supercat-256'" in switched.stderr
    assert "'text-embedding-3-small'" in switched.stderr and "GLYPHOXA_EMBEDDER" in switched.stderr
    pinned = glyphoxa(
        "process",
        "s1",
        "--campaign",
        "c",
        "--no-llm",
        env={"GLYPHOXA_OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "GLYPHOXA_EMBEDDER": "local"},
    )
    assert pinned.returncode == 0, pinned.stderr
