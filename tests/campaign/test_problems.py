from __future__ import annotations

from glyphoxa_mcp.campaign.problems import MAX_SHOWN, FileProblems, Problem


def test_problems_are_listed_in_file_order_and_capped() -> None:
    problems = [
        Problem("f.yaml", line, 3, f"facts[{line}]", "too long") for line in range(70, 0, -1)
    ]
    message = str(FileProblems("f.yaml", [*problems, Problem("f.yaml", None, None, "", "empty")]))
    lines = message.splitlines()
    assert lines[0] == "f.yaml has 71 problems; nothing was stored:"
    assert lines[1] == "f.yaml: empty"
    assert lines[2] == "f.yaml:1:3: facts[1]: too long"
    assert lines[MAX_SHOWN] == f"f.yaml:{MAX_SHOWN - 1}:3: facts[{MAX_SHOWN - 1}]: too long"
    assert lines[MAX_SHOWN + 1 :] == ["... and 21 more problems."]


def test_one_problem_is_one_line() -> None:
    problem = Problem("f.csv", 4, None, "type", "'city' is not a type")
    assert str(FileProblems("f.csv", [problem])) == "f.csv:4: type: 'city' is not a type"
