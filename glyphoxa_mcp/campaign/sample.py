"""The sample campaign that ships with the package: "The Salt Road"."""

from __future__ import annotations

from importlib import resources


def bundled(name: str) -> str:
    """A file of the bundled sample (campaign and sessions)."""
    return resources.files("glyphoxa_mcp").joinpath("data", "demo", name).read_text("utf-8")


def sample_campaign() -> str:
    """The sample campaign file, a commented example of the format."""
    return bundled("campaign.yaml")
