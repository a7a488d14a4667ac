"""`web`: the DM's desk in a browser."""

from __future__ import annotations

import argparse
import sys
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from glyphoxa_mcp.app import open_app
from glyphoxa_mcp.cli.http_options import (
    add_http_options,
    allowed_hosts,
    allowed_origins,
    check_auth,
)
from glyphoxa_mcp.cli.options import (
    add_database_options,
    add_embedder_options,
    app_settings,
    env_option,
)
from glyphoxa_mcp.cli.settings import DEFAULT_WEB_PORT
from glyphoxa_mcp.config import settings_from
from glyphoxa_mcp.domain.vocabulary import KEY_PATTERN
from glyphoxa_mcp.server.http_limits import (
    DEFAULT_BODY_TIMEOUT_S,
    DEFAULT_HEADER_TIMEOUT_S,
    HttpTimeouts,
)
from glyphoxa_mcp.web.browser_sessions import SignInLimits

DEFAULT_PORT = DEFAULT_WEB_PORT
# Not serve's GLYPHOXA_HOST and GLYPHOXA_PORT: both may run on one machine.
HOST_ENV, PORT_ENV = "GLYPHOXA_WEB_HOST", "GLYPHOXA_WEB_PORT"
SIGN_IN_ENV = {
    "sign_in_idle_minutes": "GLYPHOXA_WEB_SIGN_IN_IDLE_MINUTES",
    "sign_in_lifetime_hours": "GLYPHOXA_WEB_SIGN_IN_LIFETIME_HOURS",
    "max_sign_ins": "GLYPHOXA_WEB_MAX_SIGN_INS",
}
DEFAULT_SIGN_INS = SignInLimits()


class WebSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    campaign: str | None = Field(default=None, pattern=KEY_PATTERN)
    host: str = "127.0.0.1"
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535)
    auth: Literal["token", "none"] = "token"
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    sign_in_idle_minutes: float = Field(default=DEFAULT_SIGN_INS.idle_s / 60, gt=0)
    sign_in_lifetime_hours: float = Field(default=DEFAULT_SIGN_INS.lifetime_s / 3600, gt=0)
    max_sign_ins: int = Field(default=DEFAULT_SIGN_INS.max_sign_ins, ge=1)
    header_timeout_s: float = Field(default=DEFAULT_HEADER_TIMEOUT_S, gt=0)
    body_timeout_s: float = Field(default=DEFAULT_BODY_TIMEOUT_S, gt=0)

    def timeouts(self) -> HttpTimeouts:
        return HttpTimeouts(self.header_timeout_s, self.body_timeout_s)

    def sign_ins(self) -> SignInLimits:
        return SignInLimits(
            idle_s=self.sign_in_idle_minutes * 60,
            lifetime_s=self.sign_in_lifetime_hours * 3600,
            max_sign_ins=self.max_sign_ins,
        )


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    web = commands.add_parser(
        "web",
        help="the DM's desk in a browser: review, entities, sessions, as an NPC sees it",
        description="Serve the DM's desk: the review queue (confirm, reject, edit, in bulk "
        "too), entities with their facts and who knows them, sessions with their summaries "
        "and transcripts, the campaign as one NPC sees it, and search across everything. "
        "Sign in with a DM token (`glyphoxa-mcp token create --campaign C --dm`), or, on a "
        "loopback address only, use --auth none.",
    )
    env_option(
        web,
        "--campaign",
        env="GLYPHOXA_CAMPAIGN",
        help="serve only this campaign (unset: every campaign; a DM token opens its own)",
    )
    http = web.add_argument_group("HTTP")
    add_http_options(
        http,
        host_env=HOST_ENV,
        port_env=PORT_ENV,
        auth_help="token: sign in with a DM token; none: no sign-in, allowed only when --host "
        "is loopback",
    )
    env_option(
        http,
        "--sign-in-idle-minutes",
        env=SIGN_IN_ENV["sign_in_idle_minutes"],
        help="a sign-in unused this long ends",
        metavar="MINUTES",
    )
    env_option(
        http,
        "--sign-in-lifetime-hours",
        env=SIGN_IN_ENV["sign_in_lifetime_hours"],
        help="a sign-in this old ends, however used",
        metavar="HOURS",
    )
    env_option(
        http,
        "--max-sign-ins",
        env=SIGN_IN_ENV["max_sign_ins"],
        help="sign-ins held at once; past it a new sign-in is refused (none is ended)",
        metavar="N",
    )
    add_database_options(web)
    # Retcons and new relationships are embedded as they are written; search embeds queries.
    add_embedder_options(web)
    web.set_defaults(run=run_web)


def web_settings(args: argparse.Namespace) -> WebSettings:
    settings = settings_from(
        WebSettings,
        {
            "campaign": args.campaign or None,
            "host": args.host,
            "port": args.port,
            "auth": args.auth,
            "allowed_hosts": allowed_hosts(args),
            "allowed_origins": allowed_origins(args),
            "sign_in_idle_minutes": args.sign_in_idle_minutes,
            "sign_in_lifetime_hours": args.sign_in_lifetime_hours,
            "max_sign_ins": args.max_sign_ins,
            "header_timeout_s": args.header_timeout_s,
            "body_timeout_s": args.body_timeout_s,
        },
        env={"host": HOST_ENV, "port": PORT_ENV, **SIGN_IN_ENV},
    )
    check_auth(settings.auth, settings.host, "every campaign's secrets")
    return settings


async def run_web(args: argparse.Namespace) -> int:
    settings = web_settings(args)
    # The web server and its templates load only for this command.
    from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
    from glyphoxa_mcp.server.hosting import listening_socket, serve_http
    from glyphoxa_mcp.server.http_guard import HostRules
    from glyphoxa_mcp.server.token_gate import TokenGate
    from glyphoxa_mcp.web.desk_app import build_desk

    # Before the database and the embedder start: a port in use is known in a moment.
    with listening_socket(settings.host, settings.port) as sock:
        async with open_app(app_settings(args)) as app:
            if settings.campaign is not None:
                await CampaignDesk.of(app, settings.campaign)  # NotFoundError if it is not
            desk = build_desk(
                app,
                TokenGate(app.access_tokens() if settings.auth == "token" else None),
                HostRules(settings.allowed_hosts, settings.allowed_origins),
                only_campaign=settings.campaign,
                sign_ins=settings.sign_ins(),
            )
            host = f"[{settings.host}]" if ":" in settings.host else settings.host
            auth = (
                "sign in with a DM token (glyphoxa-mcp token create --dm)"
                if settings.auth == "token"
                else "no sign-in (loopback only)"
            )
            print(
                f"glyphoxa-mcp: the DM's desk at http://{host}:{settings.port}/ ; {auth}",
                file=sys.stderr,
            )
            await serve_http(desk, sock, args.log_level, settings.timeouts())
    return 0
