from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from glyphoxa_mcp.campaign.sample import bundled
from tests.cli.conftest import Cli
from tests.cli.runner import Ran, run_in_process


def correct(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    """`glyphoxa-mcp correct` as a pipeline runs it: a process reading lines on stdin."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("GLYPHOXA_")}
    return subprocess.run(
        [sys.executable, "-m", "glyphoxa_mcp", "correct", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )


def correct_in_process(*args: str, stdin: str) -> Ran:
    """The same command through `main`: its logic, without a process start per case."""
    return run_in_process("correct", *args, stdin=stdin)


def lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.e2e
def test_each_line_comes_back_in_order_with_its_fields_and_the_corrections() -> None:
    requests = [
        {"id": "a", "utterance": "bran knock's arm", "entities": ["Brannoch", "Saltmere"]},
        {"id": "b", "utterance": "nothing to fix", "entities": ["Brannoch"], "extra": [1]},
        {"id": "c", "utterance": "to salt mirror", "entities": ["Saltmere"]},
    ]
    result = correct(stdin="\n".join(json.dumps(r) for r in requests) + "\n\n")
    assert result.returncode == 0, result.stderr
    out = lines(result.stdout)
    assert [o["id"] for o in out] == ["a", "b", "c"]
    assert out[0]["corrected"] == "Brannoch's arm"
    assert out[0]["corrections"] == [
        {"start": 0, "end": 10, "heard": "bran knock", "entity": "Brannoch"}
    ]
    assert (out[1]["corrected"], out[1]["corrections"], out[1]["extra"]) == (
        "nothing to fix",
        [],
        [1],
    )
    assert out[2]["corrected"] == "to Saltmere"


def test_names_from_a_file_of_names_or_of_entities_with_aliases(tmp_path: Path) -> None:
    plain = tmp_path / "names.txt"
    plain.write_text("Brannoch\nSaltmere\n")
    structured = tmp_path / "names.json"
    structured.write_text(json.dumps([{"name": "Ozzabel", "aliases": ["Old Oz"]}, "Dovrek"]))
    request = json.dumps({"utterance": "dove wreck and oz a bell met bran knock"})
    by_plain = lines(correct_in_process("--entities", str(plain), stdin=request).stdout)[0]
    assert by_plain["corrected"] == "dove wreck and oz a bell met Brannoch"
    by_json = lines(correct_in_process("--entities", str(structured), stdin=request).stdout)[0]
    assert by_json["corrected"] == "Dovrek and Ozzabel met bran knock"


def test_bad_input_names_the_line_after_the_good_lines_are_written(tmp_path: Path) -> None:
    good = json.dumps({"utterance": "bran knock", "entities": ["Brannoch"]})
    result = correct_in_process(stdin=f"{good}\n{{broken\n")
    assert result.returncode == 2
    assert lines(result.stdout)[0]["corrected"] == "Brannoch"
    assert "stdin:2:2: not valid JSON" in result.stderr
    missing = correct_in_process(stdin=json.dumps({"text": "x", "entities": []}))
    assert missing.returncode == 2
    assert missing.stderr == "glyphoxa-mcp: error: stdin:1: 'utterance' (a string) is missing.\n"
    names = tmp_path / "bad.json"
    names.write_text('[{"nom": "x"}]')
    bad_names = correct_in_process("--entities", str(names), stdin=good)
    assert bad_names.returncode == 2
    assert "item 1 must be a name or an object with a 'name'" in bad_names.stderr
    threshold = correct_in_process("--threshold", "2", stdin=good)
    assert "--threshold must be between 0 and 1" in threshold.stderr


def test_without_names_the_campaign_entities_and_aliases_are_used(
    tmp_path: Path, glyphoxa: Cli
) -> None:
    campaign = tmp_path / "campaign.yaml"
    campaign.write_text(bundled("campaign.yaml"))
    loaded = glyphoxa("campaign", "load", str(campaign))
    assert loaded.returncode == 0, loaded.stderr
    request = json.dumps({"utterance": "We ask Captain Isolde about the red cattle."})
    result = glyphoxa("correct", "--campaign", "demo", stdin=request)
    assert result.returncode == 0, result.stderr
    (out,) = lines(result.stdout)
    assert out["corrected"] == "We ask Captain Ysolde about the Red Kettle."
    assert [(c["entity"], c["entity_id"]) for c in out["corrections"]] == [
        ("Captain Ysolde", "ysolde"),
        ("Red Kettle", "red-kettle"),
    ]
