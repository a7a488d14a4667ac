"""Migrations must ship inside the wheel and be found there."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_carries_the_migrations_and_finds_them(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    [wheel] = tmp_path.glob("glyphoxa_mcp-*.whl")
    sql_files = sorted(p.name for p in (ROOT / "sql").glob("*.sql"))
    with zipfile.ZipFile(wheel) as archive:
        packaged = sorted(
            Path(n).name for n in archive.namelist() if n.startswith("glyphoxa_mcp/sql/")
        )
        archive.extractall(tmp_path / "site")
    assert packaged == sql_files
    found = subprocess.run(
        [
            sys.executable,
            "-c",
            "from glyphoxa_mcp.db.migrations import migrations_dir, load_migrations;"
            "print(migrations_dir()); print(len(load_migrations()))",
        ],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path / "site")},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    location, count = found.stdout.split()
    assert location == str(tmp_path / "site" / "glyphoxa_mcp" / "sql")
    assert int(count) == len(sql_files)
