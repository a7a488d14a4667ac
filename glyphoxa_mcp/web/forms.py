"""Reading what a page sends: query strings and forms checked by pydantic models, every
problem named by its field and rule, and the form token every POST must carry."""

from __future__ import annotations

import types
import typing
from typing import Any, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.datastructures import FormData, QueryParams
from starlette.requests import Request

from glyphoxa_mcp.domain.wording import rule_of
from glyphoxa_mcp.errors import FormInvalid
from glyphoxa_mcp.web.browser_sessions import BrowserSession

M = TypeVar("M", bound=BaseModel)

FORM_TOKEN_FIELD = "form_token"
NEXT_FIELD = "next"
MAX_FIELDS = 1_100  # a bulk action of 500 items is 500 fields; far less than a page holds
MAX_FIELD_BYTES = 64 * 1024
MAX_NEXT = 2_000


class Form(BaseModel):
    """A form's fields (the form token and `next` are taken out before)."""

    model_config = ConfigDict(frozen=True, extra="ignore", str_strip_whitespace=True)


class NoFields(Form):
    """A form that is only a button (and its form token)."""


class FormTokenMismatch(Exception):
    """A POST without this browser session's form token: another site's form, or a page
    from before the session ended."""


def problems_of(exc: ValidationError) -> list[str]:
    problems = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"]) or "form"
        problems.append(f"{field}: {rule_of(error)}")
    return problems


def _is_list(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin in (list, tuple):
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_is_list(arg) for arg in typing.get_args(annotation))
    return False


def _fields(model: type[BaseModel], source: FormData | QueryParams) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        values = source.getlist(name)
        if _is_list(info.annotation):
            data[name] = list(values)
        elif values:
            data[name] = values[-1]
    return data


def checked(model: type[M], data: dict[str, Any]) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise FormInvalid(problems_of(exc)) from None


def query_of(request: Request, model: type[M]) -> M:
    """The page's query string as `model`; an empty value counts as not given."""
    params = QueryParams([(k, v) for k, v in request.query_params.multi_items() if v != ""])
    return checked(model, _fields(model, params))


async def read_form(
    request: Request, model: type[M], session: BrowserSession
) -> tuple[M, str | None]:
    """The POSTed form as `model`, and where to go back to (`next`, when it is a page of
    this site). Raises FormTokenMismatch without the session's form token."""
    async with request.form(max_files=0, max_fields=MAX_FIELDS, max_part_size=MAX_FIELD_BYTES) as (
        form
    ):
        given = form.get(FORM_TOKEN_FIELD)
        if not isinstance(given, str) or not session.form_token_matches(given):
            raise FormTokenMismatch()
        back = form.get(NEXT_FIELD)
        return checked(model, _fields(model, form)), local_path(
            back if isinstance(back, str) else None
        )


def local_path(path: str | None) -> str | None:
    """`path` when it is a page of this site ('/c/demo/review?page=2'), else None: a form
    never sends the browser elsewhere."""
    if not path or len(path) > MAX_NEXT or not path.startswith("/") or path.startswith("//"):
        return None
    parts = urlsplit(path)
    if parts.scheme or parts.netloc or "\\" in path or any(ord(c) < 32 for c in path):
        return None
    return path
