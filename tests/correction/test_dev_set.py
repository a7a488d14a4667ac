"""The floors on the shared phonetic development set, scored by its own reference scorer."""

import importlib.util
import json
from pathlib import Path

import pytest

from glyphoxa_mcp.correction.phonetic import PhoneticCorrector

DEV_SET = Path(__file__).resolve().parents[3] / "shared" / "data" / "phonetic-dev"


@pytest.fixture(scope="module")
def scorer():
    if not (DEV_SET / "score.py").exists():
        pytest.skip(f"the phonetic dev set is not at {DEV_SET}")
    spec = importlib.util.spec_from_file_location("phonetic_dev_score", DEV_SET / "score.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_strict_precision_recall_and_protected_lines_reach_the_floors(scorer):
    lines = (DEV_SET / "phonetic-dev.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    predictions = {
        row["id"]: {
            "output": PhoneticCorrector(row["entities"]).correct(row["utterance"]).corrected
        }
        for row in rows
    }
    result = scorer.score(rows, predictions)
    assert result["precision"] >= 0.95, result
    assert result["recall"] >= 0.90, result
    assert result["changed_protected"] <= 1, result
