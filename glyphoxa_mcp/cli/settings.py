"""Every environment variable the command line reads, as one typed settings model.

Each field is one variable (its name is the field's alias, spelled out so it can be found
with grep), with its type, default and a one-line description; fields are grouped by what
they configure. `read_settings` reads the environment once, when a command starts (`main`),
never at import, so a variable set just before a command runs counts. Command-line flags
take their defaults from it (`cli.options.env_option`) and still override it.

A variable holding a value its field does not accept is kept aside as a problem, not raised
at once: it is an error only for a command that uses it without its flag given
(`cli.options.apply_settings`), so a bad variable of one command never stops another, and a
flag overrides a bad variable as it overrides a good one. Secrets are `SecretStr` and never
printed, not even in an error.

`docs/reference/configuration.md` is generated from this model (`python -m
glyphoxa_mcp.cli.reference --write`), and a test fails when any GLYPHOXA_* name in the
package is not a field here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo

from glyphoxa_mcp.bench.load import DEFAULT_CLIENTS, DEFAULT_SECONDS
from glyphoxa_mcp.config import (
    DEFAULT_WRITE_DEADLINE_MS,
    MAX_INDEXED_DIMENSIONS,
    check_dsn,
    default_data_dir,
)
from glyphoxa_mcp.domain.tiers import DEFAULT_DEADLINES_MS, Tier
from glyphoxa_mcp.domain.tool_names import NameStyle
from glyphoxa_mcp.domain.wording import rule_of
from glyphoxa_mcp.providers.chat import DEFAULT_CHAT_MODEL, DEFAULT_MAX_RETRIES
from glyphoxa_mcp.server.http_limits import (
    DEFAULT_BODY_TIMEOUT_S,
    DEFAULT_HEADER_TIMEOUT_S,
    DEFAULT_MAX_SESSIONS_PER_TOKEN,
)
from glyphoxa_mcp.supervision import DEFAULT_UNHEALTHY_EXIT_S, UNHEALTHY_EXIT_CODE
from glyphoxa_mcp.web.browser_sessions import SignInLimits

DEFAULT_SERVE_PORT = 8765
# Not serve's port: both may run on one machine.
DEFAULT_WEB_PORT = 8766
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
# GLYPHOXA_LLM: these values (any case) keep the LLM off; anything else leaves it on.
LLM_OFF = frozenset({"off", "0", "false", "no"})
METRICS_TOKEN_LENGTH = (16, 200)
_SIGN_INS = SignInLimits()
# How the reference shows a DSN's type (`check_dsn` is the rule).
POSTGRES_URL: dict[str, Any] = {"doc_type": "`postgresql://` (or `postgres://`) URL"}


def _upper(value: object) -> object:
    return value.strip().upper() if isinstance(value, str) else value


def _blank_is_unset(value: object) -> object:
    return None if isinstance(value, str) and not value else value


def _comma_separated(value: object) -> object:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


class _Group(BaseModel):
    # Validated from the variables by their names (the fields' aliases) only.
    model_config = ConfigDict(frozen=True, extra="ignore")


class GeneralVariables(_Group):
    """What most commands share: logging, and which campaign, viewer and tier."""

    model_config = ConfigDict(title="General")

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "WARNING",
        validation_alias="GLYPHOXA_LOG_LEVEL",
        description="log detail, written to stderr (never stdout, which stdio serving uses)",
        json_schema_extra={"used_by": "every command (--log-level)"},
    )
    campaign: str | None = Field(
        None,
        validation_alias="GLYPHOXA_CAMPAIGN",
        description="the campaign a command works on; unset, the only campaign there is "
        "(a command refuses, naming them, when there are several), or what commands.md "
        "says for the command (`demo`, or every campaign)",
    )
    npc: str | None = Field(
        None,
        validation_alias="GLYPHOXA_NPC",
        description="the NPC whose knowledge applies; unset is the DM, who sees everything",
    )
    tier: Tier = Field(
        Tier.STANDARD,
        validation_alias="GLYPHOXA_TIER",
        description="the tier served: its tools, result limits and deadline (any case)",
    )
    server_name: str = Field(
        "glyphoxa-memory",
        validation_alias="GLYPHOXA_SERVER_NAME",
        description="the server's name in the Claude Desktop entry `claude-config` prints",
    )

    _upper_tier = field_validator("tier", mode="before")(_upper)

    @field_validator("log_level", mode="before")
    @classmethod
    def _one_of_the_levels(cls, value: object) -> object:
        level = _upper(value)
        if level not in LOG_LEVELS:
            raise ValueError(f"one of {', '.join(LOG_LEVELS)}, not {level!r}")
        return level


class DatabaseVariables(_Group):
    """Where the memory lives and the shape of its vectors."""

    model_config = ConfigDict(title="Database")

    dsn: str | None = Field(
        None,
        validation_alias="GLYPHOXA_DSN",
        json_schema_extra=POSTGRES_URL,
        description="PostgreSQL >= 15 with pgvector (postgresql://...); unset or blank, the "
        "embedded server in the data directory",
    )
    data_dir: Path = Field(
        default_factory=default_data_dir,
        validation_alias="GLYPHOXA_DATA_DIR",
        description="where the embedded server keeps its data",
        json_schema_extra={
            "doc_default": "the per-user data folder (`~/.local/share/glyphoxa-mcp` on Linux)"
        },
    )
    embedding_dim: int | None = Field(
        None,
        ge=1,
        le=MAX_INDEXED_DIMENSIONS,
        validation_alias="GLYPHOXA_EMBEDDING_DIM",
        description="vector width of a new database (256: offline WordLlama, 384: offline "
        "all-MiniLM-L6-v2, or an OpenAI-compatible model's size); unset, an existing "
        "database keeps its own and a new one gets 256",
    )
    write_deadline_ms: int = Field(
        DEFAULT_WRITE_DEADLINE_MS,
        gt=0,
        le=600_000,
        validation_alias="GLYPHOXA_WRITE_DEADLINE_MS",
        description="a recorder's write not done by then is answered as not stored (or maybe "
        "stored), naming what to resend",
    )

    _check_dsn = field_validator("dsn")(check_dsn)


class ModelVariables(_Group):
    """The embedder and the pipeline's LLM: offline by default, OpenAI-compatible when a key
    or a base URL is set."""

    model_config = ConfigDict(title="Embedder and LLM")

    embedder: Literal["local", "openai"] | None = Field(
        None,
        validation_alias="GLYPHOXA_EMBEDDER",
        description="local or openai; unset, openai when a key or base URL is set, else local",
    )
    embedding_model: str | None = Field(
        None,
        validation_alias="GLYPHOXA_EMBEDDING_MODEL",
        description="model of an OpenAI-compatible embedder; unset, text-embedding-3-small",
    )
    openai_base_url: str | None = Field(
        None,
        validation_alias="GLYPHOXA_OPENAI_BASE_URL",
        description="an OpenAI-compatible server such as Ollama (http://localhost:11434/v1)",
    )
    fallback_base_url: str | None = Field(
        None,
        validation_alias="OPENAI_BASE_URL",
        description="the OpenAI client's own variable, used when GLYPHOXA_OPENAI_BASE_URL "
        "(or --openai-base-url) is unset or blank",
    )
    openai_api_key: SecretStr | None = Field(
        None,
        validation_alias="GLYPHOXA_OPENAI_API_KEY",
        description="API key of the OpenAI-compatible server; read from the environment only",
    )
    fallback_api_key: SecretStr | None = Field(
        None,
        validation_alias="OPENAI_API_KEY",
        description="the OpenAI client's own variable, used when GLYPHOXA_OPENAI_API_KEY is "
        "unset or blank",
    )
    llm_model: str = Field(
        DEFAULT_CHAT_MODEL,
        validation_alias="GLYPHOXA_LLM_MODEL",
        description="chat model for name correction, extraction and summaries, used when a "
        "key or base URL is set",
    )
    llm: bool = Field(
        True,
        validation_alias="GLYPHOXA_LLM",
        json_schema_extra={"doc_type": "`off`, `0`, `false` or `no` (any case), or anything else"},
        description="off (or 0, false, no, any case) stays offline even with a key or base "
        "URL, as --no-llm does; any other value leaves the LLM on",
    )
    llm_max_retries: int = Field(
        DEFAULT_MAX_RETRIES,
        ge=0,
        le=10,
        validation_alias="GLYPHOXA_LLM_MAX_RETRIES",
        description="retries of an LLM request (429s, 5xx, lost connections) before it "
        "counts as unreachable",
    )

    @field_validator("llm", mode="before")
    @classmethod
    def _off_words(cls, value: object) -> object:
        return value.lower() not in LLM_OFF if isinstance(value, str) else value

    def api_key(self) -> str | None:
        """GLYPHOXA_OPENAI_API_KEY, else OPENAI_API_KEY (a blank one counts as unset)."""
        for key in (self.openai_api_key, self.fallback_api_key):
            if key is not None and key.get_secret_value():
                return key.get_secret_value()
        return None


class ServeVariables(_Group):
    """`serve`: the transport, and HTTP's address, limits and deadlines."""

    model_config = ConfigDict(title="Serving (`serve`)")

    transport: Literal["stdio", "sse", "http"] = Field(
        "stdio",
        validation_alias="GLYPHOXA_TRANSPORT",
        description="stdio serves one campaign and viewer; http and sse serve every "
        "campaign's NPCs and DM over streamable HTTP and SSE",
    )
    tool_names: NameStyle = Field(
        NameStyle.DOTTED,
        validation_alias="GLYPHOXA_TOOL_NAMES",
        description="dotted (memory.search_sessions) or underscore (memory_search_sessions, "
        "for Claude Desktop and the OpenAI and Anthropic APIs)",
    )
    host: str = Field(
        "127.0.0.1", validation_alias="GLYPHOXA_HOST", description="address serve listens on"
    )
    port: int = Field(
        DEFAULT_SERVE_PORT,
        ge=1,
        le=65535,
        validation_alias="GLYPHOXA_PORT",
        description="port serve listens on",
    )
    max_sessions_per_token: int = Field(
        DEFAULT_MAX_SESSIONS_PER_TOKEN,
        ge=1,
        validation_alias="GLYPHOXA_MAX_SESSIONS_PER_TOKEN",
        description="streamable HTTP sessions and SSE streams one token (without auth: one "
        "viewer) may hold open at once; past it a new one gets 429",
    )
    unhealthy_exit_s: float = Field(
        DEFAULT_UNHEALTHY_EXIT_S,
        ge=0,
        validation_alias="GLYPHOXA_UNHEALTHY_EXIT_S",
        description=f"exit with code {UNHEALTHY_EXIT_CODE} once the server could not serve "
        "calls this long for a reason of its own (not a database outage), so a supervisor "
        "restarts it; 0: never",
    )
    fast_deadline_ms: int = Field(
        DEFAULT_DEADLINES_MS[Tier.FAST],
        gt=0,
        validation_alias="GLYPHOXA_FAST_DEADLINE_MS",
        description="FAST calls running longer are cancelled",
    )
    standard_deadline_ms: int = Field(
        DEFAULT_DEADLINES_MS[Tier.STANDARD],
        gt=0,
        validation_alias="GLYPHOXA_STANDARD_DEADLINE_MS",
        description="STANDARD calls running longer are cancelled",
    )
    deep_deadline_ms: int = Field(
        DEFAULT_DEADLINES_MS[Tier.DEEP],
        gt=0,
        validation_alias="GLYPHOXA_DEEP_DEADLINE_MS",
        description="DEEP calls running longer are cancelled",
    )
    metrics_token: SecretStr | None = Field(
        None,
        validation_alias="GLYPHOXA_METRICS_TOKEN",
        description="bearer token Prometheus scrapers send for /metrics when serving with "
        "token auth (16 to 200 characters); unset, /metrics answers 403 there",
    )

    _blank_token = field_validator("metrics_token", mode="before")(_blank_is_unset)

    @field_validator("metrics_token")
    @classmethod
    def _token_length(cls, token: SecretStr | None) -> SecretStr | None:
        shortest, longest = METRICS_TOKEN_LENGTH
        if token is not None and not shortest <= len(token.get_secret_value()) <= longest:
            raise ValueError(f"a metrics token has {shortest} to {longest} characters")
        return token


class HttpVariables(_Group):
    """What both HTTP commands, `serve` and `web`, take: auth, allowed hosts and origins,
    and how long a client may take to send a request."""

    model_config = ConfigDict(title="HTTP (`serve` and `web`)")

    auth: Literal["token", "none"] = Field(
        "token",
        validation_alias="GLYPHOXA_AUTH",
        description="token: every request needs a bearer token (a DM token for web); none: "
        "no auth, allowed only on a loopback address",
    )
    allowed_hosts: tuple[str, ...] = Field(
        (),
        validation_alias="GLYPHOXA_ALLOWED_HOSTS",
        description="Host headers to answer besides the loopback names (NAME[:PORT]), "
        "comma-separated; --allowed-host flags replace them",
    )
    allowed_origins: tuple[str, ...] = Field(
        (),
        validation_alias="GLYPHOXA_ALLOWED_ORIGINS",
        description="browser Origins to accept besides loopback pages (e.g. "
        "https://vtt.example), comma-separated; --allowed-origin flags replace them",
    )
    header_timeout_s: float = Field(
        DEFAULT_HEADER_TIMEOUT_S,
        gt=0,
        validation_alias="GLYPHOXA_HEADER_TIMEOUT_S",
        description="close a connection that has not sent a whole request head this long "
        "after opening or after its last answer",
    )
    body_timeout_s: float = Field(
        DEFAULT_BODY_TIMEOUT_S,
        gt=0,
        validation_alias="GLYPHOXA_BODY_TIMEOUT_S",
        description="answer 408 and close when a request's body is not in this long after its head",
    )

    _split = field_validator("allowed_hosts", "allowed_origins", mode="before")(_comma_separated)


class WebVariables(_Group):
    """`web`, the DM's desk: its address and how sign-ins last."""

    model_config = ConfigDict(title="The DM's desk (`web`)")

    host: str = Field(
        "127.0.0.1", validation_alias="GLYPHOXA_WEB_HOST", description="address web listens on"
    )
    port: int = Field(
        DEFAULT_WEB_PORT,
        ge=1,
        le=65535,
        validation_alias="GLYPHOXA_WEB_PORT",
        description="port web listens on",
    )
    sign_in_idle_minutes: float = Field(
        _SIGN_INS.idle_s / 60,
        gt=0,
        validation_alias="GLYPHOXA_WEB_SIGN_IN_IDLE_MINUTES",
        description="a sign-in unused this long ends",
    )
    sign_in_lifetime_hours: float = Field(
        _SIGN_INS.lifetime_s / 3600,
        gt=0,
        validation_alias="GLYPHOXA_WEB_SIGN_IN_LIFETIME_HOURS",
        description="a sign-in this old ends, however used",
    )
    max_sign_ins: int = Field(
        _SIGN_INS.max_sign_ins,
        ge=1,
        validation_alias="GLYPHOXA_WEB_MAX_SIGN_INS",
        description="sign-ins held at once; past it a new sign-in is refused (none is ended)",
    )


class BenchVariables(_Group):
    """`bench` and `bench load`: the synthetic dataset, what is measured, and where. Its own
    database variables, so a benchmark never lands in the real memory."""

    model_config = ConfigDict(title="Benchmarks (`bench`)")

    scale: float = Field(
        1.0,
        validation_alias="GLYPHOXA_BENCH_SCALE",
        description="the reference dataset's sizes times this factor, e.g. 0.01",
    )
    seed: int = Field(1, validation_alias="GLYPHOXA_BENCH_SEED", description="generator seed")
    samples: int = Field(
        200, validation_alias="GLYPHOXA_BENCH_SAMPLES", description="timed calls per operation"
    )
    warmup: int = Field(
        64,
        validation_alias="GLYPHOXA_BENCH_WARMUP",
        description="untimed calls before them (one pass over every argument set)",
    )
    ingest_utterances: int = Field(
        2000,
        validation_alias="GLYPHOXA_BENCH_INGEST_UTTERANCES",
        description="utterances ingested and processed for throughput; 0 skips it",
    )
    live_lines: int = Field(
        30,
        validation_alias="GLYPHOXA_BENCH_LIVE_LINES",
        description="lines appended live through the recorder, each timed to its hot-context "
        "notification and to being found by search; 0 skips it",
    )
    scene_changes: int = Field(
        40,
        validation_alias="GLYPHOXA_BENCH_SCENE_CHANGES",
        description="times the DM takes the benchmarked NPC out of the scene being played or "
        "puts it back, each timed to the subscribed NPC's hot-context notification and to its "
        "hot context reflecting it; 0 skips it",
    )
    edit_seconds: float = Field(
        20.0,
        validation_alias="GLYPHOXA_BENCH_EDIT_SECONDS",
        description="seconds of entity edits, one a second, while FAST, STANDARD and DEEP "
        "calls run; 0 skips it",
    )
    tier: Tier = Field(
        Tier.STANDARD,
        validation_alias="GLYPHOXA_BENCH_TIER",
        description="the tier whose tools and limits `bench` measures (any case)",
    )
    clients: int = Field(
        DEFAULT_CLIENTS,
        validation_alias="GLYPHOXA_BENCH_CLIENTS",
        description="`bench load`: concurrent MCP clients",
    )
    seconds: int = Field(
        DEFAULT_SECONDS,
        validation_alias="GLYPHOXA_BENCH_SECONDS",
        description="`bench load`: how long the clients call",
    )
    tiers: str = Field(
        "STANDARD",
        validation_alias="GLYPHOXA_BENCH_TIERS",
        description="`bench load`: the clients' tiers in turn, comma-separated, e.g. "
        "FAST,STANDARD,DEEP",
    )
    dsn: str | None = Field(
        None,
        validation_alias="GLYPHOXA_BENCH_DSN",
        json_schema_extra=POSTGRES_URL,
        description="benchmark in this PostgreSQL (campaign 'bench') instead of a temporary "
        "embedded server",
    )
    data_dir: Path | None = Field(
        None,
        validation_alias="GLYPHOXA_BENCH_DATA_DIR",
        description="keep the benchmark's embedded server here, and reuse its loaded dataset",
    )

    _upper_tier = field_validator("tier", mode="before")(_upper)
    _check_dsn = field_validator("dsn")(check_dsn)


class EvalVariables(_Group):
    """`eval`: its own database, so an evaluation never writes into the memory played with."""

    model_config = ConfigDict(title="Evaluation (`eval`)")

    dsn: str | None = Field(
        None,
        validation_alias="GLYPHOXA_EVAL_DSN",
        json_schema_extra=POSTGRES_URL,
        description="an empty PostgreSQL database for `eval locomo` instead of a temporary "
        "embedded one",
    )

    _check_dsn = field_validator("dsn")(check_dsn)


GROUPS: dict[str, type[_Group]] = {
    "general": GeneralVariables,
    "database": DatabaseVariables,
    "models": ModelVariables,
    "serving": ServeVariables,
    "http": HttpVariables,
    "web": WebVariables,
    "bench": BenchVariables,
    "eval": EvalVariables,
}


@dataclass(frozen=True)
class Variable:
    """One environment variable: the field that holds it."""

    name: str
    group: str
    field: str
    info: FieldInfo

    @property
    def secret(self) -> bool:
        return "SecretStr" in str(self.info.annotation)

    @property
    def default(self) -> Any:
        return self.info.get_default(call_default_factory=True)


def _variables() -> dict[str, Variable]:
    found: dict[str, Variable] = {}
    for group, model in GROUPS.items():
        for field, info in model.model_fields.items():
            assert isinstance(info.validation_alias, str), f"{group}.{field} names no variable"
            assert info.description, f"{info.validation_alias} has no description"
            found[info.validation_alias] = Variable(info.validation_alias, group, field, info)
    return found


VARIABLES: Mapping[str, Variable] = _variables()


@dataclass(frozen=True)
class Problem:
    """A variable whose value its field does not accept."""

    variable: str
    message: str
    value: str | None  # None for a secret: never shown

    def describe(self, flag: str | None = None) -> str:
        where = f"{flag} / {self.variable}" if flag else self.variable
        got = f" (got {self.value!r})" if self.value is not None else ""
        return f"{where}: {self.message}{got}"


class GlyphoxaSettings(BaseModel):
    """The environment's settings, by group; a bad variable keeps its field's default here
    and is listed in `problems`."""

    model_config = ConfigDict(frozen=True)

    general: GeneralVariables = Field(default_factory=GeneralVariables)
    database: DatabaseVariables = Field(default_factory=DatabaseVariables)
    models: ModelVariables = Field(default_factory=ModelVariables)
    serving: ServeVariables = Field(default_factory=ServeVariables)
    http: HttpVariables = Field(default_factory=HttpVariables)
    web: WebVariables = Field(default_factory=WebVariables)
    bench: BenchVariables = Field(default_factory=BenchVariables)
    eval: EvalVariables = Field(default_factory=EvalVariables)
    # Variables set to a value their field accepts, and those set to one it does not.
    given: frozenset[str] = frozenset()
    problems: Mapping[str, Problem] = Field(default_factory=dict)

    def value(self, variable: str) -> Any:
        """The typed value of `variable` (its default when unset or bad)."""
        found = VARIABLES[variable]
        return getattr(getattr(self, found.group), found.field)


def read_settings(environ: Mapping[str, str] | None = None) -> GlyphoxaSettings:
    """The settings from `environ` (this process's environment by default), each variable
    validated on its own so that one bad value spoils only itself."""
    environ = os.environ if environ is None else environ
    groups: dict[str, _Group] = {}
    given: set[str] = set()
    problems: dict[str, Problem] = {}
    for group, model in GROUPS.items():
        accepted: dict[str, str] = {}
        for variable in _names_of(group):
            if variable not in environ:
                continue
            raw = environ[variable]
            try:
                model.model_validate({variable: raw})
            except ValidationError as exc:
                problems[variable] = _problem(variable, raw, exc)
            else:
                accepted[variable] = raw
        groups[group] = model.model_validate(accepted)
        given.update(accepted)
    return GlyphoxaSettings.model_validate(
        {**groups, "given": frozenset(given), "problems": problems}
    )


def _names_of(group: str) -> Iterator[str]:
    return (v.name for v in VARIABLES.values() if v.group == group)


def _problem(variable: str, raw: str, exc: ValidationError) -> Problem:
    message = "; ".join(rule_of(error) for error in exc.errors())
    return Problem(variable, message, None if VARIABLES[variable].secret else raw)
