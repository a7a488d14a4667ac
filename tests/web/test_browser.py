"""The desk in a real headless Chromium (Debian's `chromium` and `chromium-driver`), served by
`glyphoxa-mcp web` as a DM runs it: screenshots of each page at a laptop's size, the review
flow end to end, a secret toggled on an entity's page, then checked through an NPC-scoped
MCP call, an NPC looked at with the keyboard alone, and the summary box sized to its text.
One browser and one server for the module.

Screenshots go to tests/web/screenshots/; with GLYPHOXA_DOCS_SCREENSHOT=1 the review page's
is also written to docs/images/dm-desk.png, the README's picture of the desk. Without
Chromium at /usr/bin the module is skipped, saying so (.ci/run installs it first).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from mcp.client import Client
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View
from tests.conftest import DatabaseFactory, PostgresForTests, read_only, unhurried
from tests.web.conftest import DIMENSION, DeskDatabases

pytestmark = pytest.mark.e2e

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
LAPTOP = {"width": 1366, "height": 768, "deviceScaleFactor": 1, "mobile": False}
ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(__file__).parent / "screenshots"
DOCS_SHOT = ROOT / "docs" / "images" / "dm-desk.png"
WAIT_S = 20


@dataclass(frozen=True)
class Served:
    base: str
    dsn: str


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def web_env(dsn: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GLYPHOXA_", "OPENAI_"))}
    return env | {"GLYPHOXA_DSN": dsn}


def wait_until_serving(base: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, "glyphoxa-mcp web stopped while starting"
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{base}/", timeout=2).status_code == 200:
                return
        time.sleep(0.1)
    raise AssertionError("glyphoxa-mcp web did not answer within 60 s")


@pytest.fixture(scope="module")
def served(
    test_server: PostgresForTests,
    databases: DatabaseFactory,
    desk_databases: DeskDatabases,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Served]:
    """`glyphoxa-mcp web --auth none` (loopback) over a clone of the seeded campaign."""
    name = asyncio.run(databases.take(desk_databases.template))
    dsn = test_server.dsn(name)
    port = free_port()
    log = tmp_path_factory.mktemp("web") / "web.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "glyphoxa_mcp", "web", "--auth", "none", "--port", str(port)],
            env=web_env(dsn),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until_serving(base, process)
            yield Served(base, dsn)
        finally:
            process.terminate()
            process.wait(timeout=20)
            databases.drop(name)
    text = log.read_text()
    assert "the DM's desk at" in text and "Traceback" not in text, text


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip("needs Debian's chromium and chromium-driver (.ci/install-chromium)")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    # The driver named: Selenium Manager never looks for one on the network.
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", LAPTOP)
    try:
        yield driver
    finally:
        driver.quit()


def shoot(browser: WebDriver, name: str) -> Path:
    SHOTS.mkdir(exist_ok=True)
    path = SHOTS / f"{name}.png"
    assert browser.save_screenshot(str(path))
    return path


def submit(browser: WebDriver, button: WebElement, *, confirm: bool = False) -> None:
    """Press a form's button and wait for the page it leads to."""
    page = browser.find_element(By.TAG_NAME, "html")
    button.click()
    if confirm:
        WebDriverWait(browser, WAIT_S).until(expected_conditions.alert_is_present())
        browser.switch_to.alert.accept()
    WebDriverWait(browser, WAIT_S).until(lambda _: left_behind(page))


def left_behind(page: WebElement) -> bool:
    """Whether the browser has moved on from the document `page` belonged to. Chromium
    reports an element of a discarded document as stale or, when asked mid-navigation, as
    an inspector error that the node belongs to no document."""
    try:
        page.is_enabled()
    except WebDriverException:  # StaleElementReferenceException is one
        return True
    return False


def note(browser: WebDriver) -> str:
    return browser.find_element(By.CSS_SELECTOR, "p.note").text


async def names_found(memory: CampaignMemory, npc_id: str | None, name: str) -> list[str]:
    """What `memory.query_entities(name=...)` answers the NPC, over an in-memory MCP client
    of the server its endpoint runs."""
    state = ServerState(View(memory, npc_id), unhurried(Tier.STANDARD))
    async with Client(build_server(state)) as client:
        result = await client.call_tool("memory.query_entities", {"name": name})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return [entity["name"] for entity in result.structured_content["entities"]]


PAGES = {
    "campaigns": "/",
    "review": "/c/demo/review",
    "entities": "/c/demo/entities",
    "entity": "/c/demo/entities/brannoch",
    "sessions": "/c/demo/sessions",
    "session": "/c/demo/sessions/session-2",
    "as-npc": "/c/demo/as-npc?npc=ysolde&tier=STANDARD&query=caravan",
    "search": "/c/demo/search?q=Brannoch",
}


def test_each_page_at_laptop_size(browser: WebDriver, served: Served) -> None:
    browser.get(f"{served.base}/c/demo/entities/brannoch")
    fact = browser.find_element(By.LINK_TEXT, "history").get_attribute("href")
    assert fact is not None
    for name, path in [*PAGES.items(), ("fact", fact.removeprefix(served.base))]:
        browser.get(served.base + path)
        assert browser.find_element(By.TAG_NAME, "h1").is_displayed()
        assert "Something went wrong" not in browser.page_source
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= LAPTOP["width"], f"{name} scrolls sideways at a laptop's width"
        shot = shoot(browser, name)
        assert shot.stat().st_size < 400_000  # small enough for the README
        if name == "review" and os.environ.get("GLYPHOXA_DOCS_SCREENSHOT") == "1":
            shutil.copyfile(shot, DOCS_SHOT)


async def test_the_review_flow_confirms_and_rejects_in_bulk(
    browser: WebDriver, served: Served
) -> None:
    async with read_only(served.dsn, DIMENSION, "demo") as memory:
        rumour = next(
            r
            for r in (await memory.curation.review_queue(0.7)).relationships
            if r.rel_type == "KNOWS"
        )
        proposal = next(p for p in await memory.pending.list() if p.source == "session")
    wanted = {f"rel:{rumour.id}", f"import:{proposal.id}"}
    browser.get(f"{served.base}/c/demo/review")
    rows = browser.find_elements(By.CSS_SELECTOR, "input[name=items][form=bulk]")
    chosen = [r for r in rows if r.get_attribute("value") in wanted]
    assert len(chosen) == 2, [r.get_attribute("value") for r in rows]

    for box in chosen:
        box.click()
    submit(browser, browser.find_element(By.CSS_SELECTOR, "#bulk button[value=confirm]"))
    confirmed = note(browser)
    browser.find_element(By.CSS_SELECTOR, "input[data-select-all=items]").click()
    submit(
        browser,
        browser.find_element(By.CSS_SELECTOR, "#bulk button[value=reject]"),
        confirm=True,
    )

    assert confirmed == f"Confirmed 2: rel:{rumour.id}, import:{proposal.id}."
    assert note(browser).startswith("Rejected (deleted) 4:")
    assert "No items waiting." in browser.page_source
    async with read_only(served.dsn, DIMENSION, "demo") as memory:
        queue = await memory.curation.review_queue(0.7)
        assert queue.relationships == () and queue.facts == ()
        assert await memory.pending.list() == []
        assert (await memory.graph.get_relationship(rumour.id)).provenance.dm_confirmed
        assert (await memory.graph.get_entity("the-ferryman")).name == "The Ferryman"


async def test_a_secret_set_on_an_entitys_page_is_hidden_from_an_npc_until_cleared(
    browser: WebDriver, served: Served
) -> None:
    async with read_only(served.dsn, DIMENSION, "demo") as memory:
        before = await names_found(memory, "ysolde", "Red Kettle")

        browser.get(f"{served.base}/c/demo/entities/red-kettle")
        browser.find_element(By.CSS_SELECTOR, "section details.visibility summary").click()
        form = browser.find_element(By.CSS_SELECTOR, "section details.visibility form")
        form.find_element(By.NAME, "secret").click()
        shoot(browser, "entity-secret")
        submit(browser, form.find_element(By.TAG_NAME, "button"))
        made_secret = note(browser)
        hidden = await names_found(memory, "ysolde", "Red Kettle")
        dm_sees = await names_found(memory, None, "Red Kettle")

        browser.find_element(By.CSS_SELECTOR, "section details.visibility summary").click()
        form = browser.find_element(By.CSS_SELECTOR, "section details.visibility form")
        form.find_element(By.NAME, "secret").click()
        submit(browser, form.find_element(By.TAG_NAME, "button"))
        after = await names_found(memory, "ysolde", "Red Kettle")

    assert "Red Kettle" in before
    assert made_secret == "red-kettle is now secret, known by the DM only."
    # Hidden, and so is the session named after it ("Rumours at the Red Kettle").
    assert hidden == [] and dm_sees == before
    assert note(browser) == "red-kettle is now known by everyone."
    assert after == before


def test_an_npc_is_picked_and_asked_about_with_the_keyboard_alone(
    browser: WebDriver, served: Served
) -> None:
    browser.get(f"{served.base}/c/demo/as-npc")
    page = browser.find_element(By.TAG_NAME, "html")
    body = browser.find_element(By.TAG_NAME, "body")
    # Tab from the top of the page to the picker, as a DM without a mouse would.
    body.send_keys(Keys.TAB)
    for _ in range(20):
        focused = browser.switch_to.active_element
        if focused.get_attribute("name") == "npc":
            break
        focused.send_keys(Keys.TAB)
    assert focused.tag_name == "select", "the NPC picker is not reached by Tab"
    focused.send_keys("Old B")  # a select picks the option typed
    focused.send_keys(Keys.TAB, Keys.TAB)  # past the tier, to the question
    asking = browser.switch_to.active_element
    assert asking.get_attribute("name") == "query"
    asking.send_keys("lantern", Keys.ENTER)
    WebDriverWait(browser, WAIT_S).until(lambda _: left_behind(page))

    assert browser.find_element(By.ID, "hot").text == "What Old Berrit reads first: its hot context"
    assert "lantern" in browser.current_url and "npc=berrit" in browser.current_url
    raw = browser.find_element(By.CSS_SELECTOR, "article.answer details pre")
    assert not raw.is_displayed()  # the JSON waits behind its summary
    shoot(browser, "as-npc-berrit")


def test_the_summary_box_shows_the_whole_summary_and_can_be_made_taller(
    browser: WebDriver, served: Served
) -> None:
    session = f"{served.base}/c/demo/sessions/session-1"
    browser.get(session)
    box = browser.find_element(By.CSS_SELECTOR, "textarea[name=summary]")
    longer = " ".join([box.get_attribute("value") or ""] * 6)
    # Pasted in and saved: the page that shows it next sizes the box to it.
    browser.execute_script("arguments[0].value = arguments[1]", box, longer)
    submit(browser, box.find_element(By.XPATH, "following-sibling::button"))
    box = browser.find_element(By.CSS_SELECTOR, "textarea[name=summary]")

    seen, needed = browser.execute_script(
        "return [arguments[0].clientHeight, arguments[0].scrollHeight]", box
    )
    assert box.get_attribute("value") == longer.strip() and len(longer) > 1_500
    assert needed <= seen, "the summary scrolls inside its box"
    assert box.value_of_css_property("resize") == "vertical"
