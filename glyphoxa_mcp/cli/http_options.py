"""What every command that listens over HTTP (`serve`, `web`) takes, and the one rule on who
may go without auth: only a loopback address may be served with `--auth none`."""

from __future__ import annotations

import argparse

from glyphoxa_mcp.access import is_loopback
from glyphoxa_mcp.cli.options import env_option, settings_of, uses_settings
from glyphoxa_mcp.errors import ConfigurationError


def add_http_options(
    group: argparse._ActionsContainer,
    *,
    host_env: str,
    port_env: str,
    auth_help: str,
) -> None:
    env_option(group, "--host", env=host_env, help="address to listen on")
    env_option(group, "--port", env=port_env, help="port")
    env_option(group, "--auth", env="GLYPHOXA_AUTH", help=auth_help)
    group.add_argument(
        "--allowed-host",
        action="append",
        metavar="NAME[:PORT]",
        help="a Host header to answer besides the loopback names (repeat for more) "
        "[env GLYPHOXA_ALLOWED_HOSTS, comma-separated]",
    )
    group.add_argument(
        "--allowed-origin",
        action="append",
        metavar="URL",
        help="a browser Origin to accept besides loopback pages, e.g. https://vtt.example "
        "(repeat for more) [env GLYPHOXA_ALLOWED_ORIGINS, comma-separated]",
    )
    uses_settings(group, "GLYPHOXA_ALLOWED_HOSTS", "GLYPHOXA_ALLOWED_ORIGINS")
    env_option(
        group,
        "--header-timeout-s",
        env="GLYPHOXA_HEADER_TIMEOUT_S",
        help="close a connection that has not sent a whole request head this long after "
        "opening or after its last answer",
        metavar="S",
    )
    env_option(
        group,
        "--body-timeout-s",
        env="GLYPHOXA_BODY_TIMEOUT_S",
        help="answer 408 and close when a request's body is not in this long after its head",
        metavar="S",
    )


def allowed_hosts(args: argparse.Namespace) -> tuple[str, ...]:
    """Repeated flags, else the comma-separated variable."""
    return tuple(args.allowed_host or settings_of(args).http.allowed_hosts)


def allowed_origins(args: argparse.Namespace) -> tuple[str, ...]:
    return tuple(args.allowed_origin or settings_of(args).http.allowed_origins)


def check_auth(auth: str, host: str, what: str) -> None:
    """`--auth none` serves `what` to anyone who can reach the address: loopback only."""
    if auth == "none" and not is_loopback(host):
        raise ConfigurationError(
            f"--auth none serves {what} to anyone who can reach {host}; use it only with a "
            "loopback --host (127.0.0.1, ::1, localhost), or keep --auth token."
        )
