"""Who may use the desk: a DM token signs a browser in (or, on loopback, no sign-in); every
form carries the session's form token; Host and Origin are checked as for the MCP server;
what goes wrong is a page that says so, never a traceback."""

from __future__ import annotations

import html

import anyio
import pytest

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.providers.embeddings import Embedder
from glyphoxa_mcp.server.token_gate import RECHECK_S, TokenGate
from glyphoxa_mcp.storage.access_tokens import AccessTokens
from glyphoxa_mcp.web.browser_sessions import COOKIE, SignInLimits
from tests.web.conftest import FORM_TOKEN, DeskClient, desk_over


async def dm_token(desk: DeskClient, campaign: str = "demo") -> str:
    _, token = await AccessTokens(desk.db).create(Viewer.dm(campaign))
    return token.token


async def sign_in(desk: DeskClient, token: str) -> str:
    """Sign in with the token alone; the page the browser lands on."""
    found = FORM_TOKEN.search((await desk.get("/login")).text)
    assert found
    page = await desk.http.post(
        "/login",
        data={"form_token": found.group(1), "token": token, "next": ""},
        follow_redirects=True,
    )
    return html.unescape(page.text)


async def test_without_signing_in_a_page_sends_the_browser_to_sign_in_and_back(
    token_desk: DeskClient,
) -> None:
    page = await token_desk.get("/c/demo/entities/brannoch")

    assert page.status_code == 303
    assert page.headers["location"] == "/login?next=/c/demo/entities/brannoch"
    form = (await token_desk.get(page.headers["location"])).text
    assert 'name="next" value="/c/demo/entities/brannoch"' in form
    assert 'type="password" name="token"' in form
    assert 'name="campaign"' not in form  # the token names its campaign


async def test_a_dm_token_signs_in_with_a_new_http_only_strict_cookie(
    token_desk: DeskClient,
) -> None:
    await token_desk.get("/login")
    before = token_desk.http.cookies[COOKIE]
    token = await dm_token(token_desk)
    found = FORM_TOKEN.search((await token_desk.get("/login")).text)
    assert found

    response = await token_desk.http.post(
        "/login", data={"form_token": found.group(1), "token": token}
    )

    assert response.status_code == 303 and response.headers["location"] == "/c/demo/review"
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert token_desk.http.cookies[COOKIE] != before
    page = await token_desk.get("/c/demo/review")
    assert page.status_code == 200 and "Signed in as the DM of &#39;demo&#39;." in page.text
    assert page.headers["cache-control"] == "no-store"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]


@pytest.mark.parametrize(
    ("token_of", "refusal"),
    [
        ("npc", "token: Forbidden: this token is for NPC &#39;ysolde&#39;"),
        ("made-up", "token: Unknown token."),
        ("revoked", "token: Refused: the token was revoked."),
    ],
)
async def test_a_token_that_is_not_the_campaigns_dms_is_refused_with_the_reason(
    token_desk: DeskClient, token_of: str, refusal: str
) -> None:
    tokens = AccessTokens(token_desk.db)
    if token_of == "npc":
        token = (await tokens.create(Viewer.npc("demo", "ysolde")))[1].token
    elif token_of == "revoked":
        grant, new = await tokens.create(Viewer.dm("demo"))
        await tokens.revoke(grant.id)
        token = new.token
    else:
        token = "gxm_000000000000_" + "a" * 43

    page = await sign_in(token_desk, token)

    assert html.unescape(refusal) in page and 'type="password"' in page
    assert (await token_desk.get("/c/demo/review")).status_code == 303


async def test_a_sign_in_opens_the_campaign_its_token_names_and_no_other(
    token_desk: DeskClient,
) -> None:
    await token_desk.db.pool.execute("INSERT INTO campaigns (id, name) VALUES ('x', 'X')")

    landed = await sign_in(token_desk, await dm_token(token_desk, "x"))

    assert "Signed in as the DM of 'x'." in landed
    page = await token_desk.get("/c/demo/review")

    assert page.status_code == 403
    assert "You signed in for campaign &#39;x&#39;" in page.text


@pytest.mark.slow
async def test_a_revoked_token_sends_the_browser_to_sign_in_again(
    token_desk: DeskClient,
) -> None:
    _, token = await AccessTokens(token_desk.db).create(Viewer.dm("demo"))
    await sign_in(token_desk, token.token)
    assert (await token_desk.get("/c/demo/review")).status_code == 200

    await AccessTokens(token_desk.db).revoke(token.id)
    await anyio.sleep(RECHECK_S * 2)
    page = await token_desk.get("/c/demo/review", follow_redirects=True)

    assert "Refused: the token was revoked." in html.unescape(page.text)
    assert 'type="password"' in page.text


async def test_signing_out_ends_the_session(token_desk: DeskClient) -> None:
    await sign_in(token_desk, await dm_token(token_desk))

    page = await token_desk.post("/logout", {}, page="/c/demo/review")

    assert "Signed out." in page.text and 'type="password"' in page.text
    assert (await token_desk.get("/c/demo/review")).status_code == 303


async def test_a_form_without_the_sessions_form_token_changes_nothing(
    reading_desk: DeskClient,
) -> None:
    await reading_desk.get("/c/demo/review")
    queue = await reading_desk.memory.curation.review_queue(0.7)
    item = f"fact:{queue.facts[0].id}"

    for token in ("", "a" * 43):
        page = await reading_desk.http.post(
            "/c/demo/review", data={"form_token": token, "items": item, "action": "reject"}
        )
        assert page.status_code == 403 and "This form has expired" in page.text

    assert await reading_desk.memory.curation.review_queue(0.7) == queue


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "evil.example"}, 421),
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "null"}, 403),
        ({"Origin": "http://127.0.0.1:8766"}, 303),
    ],
)
async def test_host_and_origin_are_checked_before_any_form(
    desk: DeskClient, headers: dict[str, str], status: int
) -> None:
    token = await desk.form_token()
    queue = await desk.memory.curation.review_queue(0.7)
    item = f"fact:{queue.facts[0].id}"

    response = await desk.http.post(
        "/c/demo/review",
        data={"form_token": token, "items": item, "action": "confirm"},
        headers=headers,
    )

    assert response.status_code == status
    assert (await desk.memory.curation.review_queue(0.7) == queue) == (status != 303)


@pytest.mark.parametrize(
    ("path", "status", "says"),
    [
        ("/c/demo/entities?page=0", 400, "page: Input should be greater than or equal to 1"),
        ("/c/demo/entities?type=dragon", 400, "type: Input should be"),
        ("/c/demo/entities/nobody", 404, "No entity &#39;nobody&#39; in campaign"),
        ("/c/nowhere/review", 404, "No campaign &#39;nowhere&#39;."),
        ("/c/demo/facts/99999", 404, "No fact 99999"),
        ("/no/such/page", 404, "No such page."),
    ],
)
async def test_what_goes_wrong_is_a_page_in_words(
    reading_desk: DeskClient, path: str, status: int, says: str
) -> None:
    page = await reading_desk.get(path)

    assert page.status_code == status
    assert says in page.text
    assert "Traceback" not in page.text and "File " not in page.text


async def test_without_auth_the_desk_lists_the_campaigns(reading_desk: DeskClient) -> None:
    page = await reading_desk.get("/")

    assert 'href="/c/demo/review">demo</a>' in page.text
    assert (await reading_desk.get("/login")).headers["location"] == "/"


@pytest.mark.slow
async def test_requests_without_a_cookie_never_sign_the_dm_out(token_desk: DeskClient) -> None:
    """Issue 27: the desk kept 2,000 browser sessions and dropped the oldest, so 2,001
    requests without a cookie signed the DM out. A visitor is stored nowhere now."""
    await sign_in(token_desk, await dm_token(token_desk))

    async with token_desk.stranger() as stranger:
        for _ in range(2_001):
            stranger.cookies.clear()
            assert (await stranger.get("/c/demo/review")).status_code == 303

    page = await token_desk.get("/c/demo/review")
    assert page.status_code == 200 and 'action="/logout"' in page.text


async def test_a_full_desk_refuses_a_new_sign_in_and_keeps_the_ones_it_has(
    desk_db: Database, desk_embedder: Embedder
) -> None:
    gate = TokenGate(AccessTokens(desk_db))
    async with desk_over(desk_db, desk_embedder, gate, SignInLimits(max_sign_ins=1)) as first:
        token = await dm_token(first)
        await sign_in(first, token)

        async with first.stranger() as other:
            second = DeskClient(other, first.db, first.desk)
            refused = await sign_in(second, token)
            assert (await other.get("/c/demo/review")).status_code == 303

        assert "The desk holds 1 sign-in, its most; none was ended to make room." in refused
        assert "--max-sign-ins" in refused and 'type="password"' in refused
        assert (await first.get("/c/demo/review")).status_code == 200


async def test_a_desk_for_one_campaign_refuses_another_campaigns_dm_token(
    desk_db: Database, desk_embedder: Embedder
) -> None:
    gate = TokenGate(AccessTokens(desk_db))
    async with desk_over(desk_db, desk_embedder, gate, only_campaign="demo") as only_demo:
        await desk_db.pool.execute("INSERT INTO campaigns (id, name) VALUES ('x', 'X')")
        login = (await only_demo.get("/login")).text
        assert "Campaign <strong>demo</strong>" in login and 'name="campaign"' not in login

        page = await sign_in(only_demo, await dm_token(only_demo, "x"))
        assert "This desk serves campaign 'demo' only; the token is the DM's of 'x'." in page
        assert "Signed in as the DM of 'demo'." in await sign_in(
            only_demo, await dm_token(only_demo)
        )
