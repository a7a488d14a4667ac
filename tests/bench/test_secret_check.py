from __future__ import annotations

from glyphoxa_mcp.bench.operations import BenchContext
from glyphoxa_mcp.bench.secret_check import secret_check
from tests.bench.test_dataset import tiny


def test_the_timed_check_judges_real_lines_against_the_npcs_hidden_names() -> None:
    dataset = tiny()
    context = BenchContext(
        db=None,  # type: ignore[arg-type]
        dataset=dataset,
        embedder=None,  # type: ignore[arg-type]
        queries=[],
        session_searches=[],
        query_vectors=[],
    )
    (operation,) = secret_check(context)
    assert "hidden)" in operation.name and " 0 hidden" not in operation.name
    # Each call judges a line it has not seen; a few hundred run without error.
    for number in range(300):
        operation.call(number)
