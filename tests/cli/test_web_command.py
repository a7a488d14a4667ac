"""`glyphoxa-mcp web`'s settings, checked before anything starts (the served desk itself is
driven in tests/web/test_browser.py)."""

from __future__ import annotations

import pytest

from tests.cli.runner import run_in_process


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--host", "0.0.0.0", "--auth", "none"), "--auth none serves every campaign's secrets"),
        (("--port", "70000"), "--port / GLYPHOXA_WEB_PORT: Input should be less than or equal"),
        (("--auth", "maybe"), "--auth / GLYPHOXA_AUTH: Input should be 'token' or 'none'"),
        (("--campaign", "no spaces"), "--campaign / GLYPHOXA_CAMPAIGN: String should match"),
        (("--max-sign-ins", "0"), "--max-sign-ins / GLYPHOXA_WEB_MAX_SIGN_INS: Input should be"),
        (
            ("--sign-in-idle-minutes", "0"),
            "--sign-in-idle-minutes / GLYPHOXA_WEB_SIGN_IN_IDLE_MINUTES: Input should be",
        ),
        (("--body-timeout-s", "-1"), "--body-timeout-s / GLYPHOXA_BODY_TIMEOUT_S: Input should be"),
    ],
)
def test_bad_settings_exit_2_naming_the_flag(args: tuple[str, ...], says: str) -> None:
    ran = run_in_process("web", *args)

    assert ran.returncode == 2
    assert says in ran.stderr and "Traceback" not in ran.stderr


def test_no_auth_on_a_public_address_names_the_loopback_hosts() -> None:
    ran = run_in_process("web", "--host", "192.0.2.10", "--auth", "none")

    assert ran.returncode == 2
    assert "loopback --host (127.0.0.1, ::1, localhost)" in ran.stderr
