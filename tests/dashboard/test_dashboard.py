"""The devnet dashboard in a real browser (Debian's headless Chromium, driven by Selenium), against
the devnet binary (``depositkit-devnet serve``) with a depositkit client watching one owner
(``examples/dashboard.py``): a deposit sent from the page's form reaches ``credited`` on the page,
pushed by the server; a sweep fault armed from the page shows the failure, then the recovery;
bad input in the forms shows a clear message and changes nothing; the page has no console error,
fits a phone's screen, works from the keyboard and shows no secret. ``tests/dashboard/run.sh``
runs it; it writes the README's screenshot, ``docs/dashboard.png``."""

from __future__ import annotations

import json
import os
import pathlib
import queue
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any, Callable, Optional

import pytest
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select, WebDriverWait

ROOT = pathlib.Path(__file__).resolve().parents[2]
OWNER = "0x52908400098527886e0f7030069857d2e4169ee7"
SCREENSHOT = ROOT / "docs" / "dashboard.png"
# Flags that work headless, as root, offline.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


class Devnet:
    def __init__(self, base: str, dashboard: str, demo: dict[str, Any]) -> None:
        self.base = base
        self.dashboard = dashboard
        self.demo = demo

    def state(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.base + "/dashboard/api/state", timeout=10) as answer:
            return json.load(answer)  # type: ignore[no-any-return]


def lines_of(process: subprocess.Popen[str]) -> queue.Queue[Optional[str]]:
    """The process's stdout, line by line (``None`` at its end), read on a thread."""
    lines: queue.Queue[Optional[str]] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def next_line(lines: queue.Queue[Optional[str]], deadline: float, what: str) -> str:
    try:
        line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
    except queue.Empty:
        raise AssertionError(f"no {what} in time") from None
    if line is None:
        raise AssertionError(f"the process ended before its {what}")
    return line.strip()


@pytest.fixture(scope="module")
def devnet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Devnet]:
    binary = os.environ.get("DEPOSITKIT_DEVNET_BIN", str(ROOT / "target" / "debug" / "depositkit-devnet"))
    db = tmp_path_factory.mktemp("devnet") / "devnet.sqlite"
    command = [binary, "serve", "--db", str(db), "--listen", "127.0.0.1:0", "--demo", "--enable-fault-injection"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, encoding="utf-8")
    lines = lines_of(process)
    deadline = time.monotonic() + 60
    demo: dict[str, Any] = {}
    base = dashboard = ""
    try:
        while not dashboard:
            line = next_line(lines, deadline, "dashboard line from depositkit-devnet")
            if line.startswith("{"):
                demo = json.loads(line)
            elif line.startswith("depositkit-devnet listening on "):
                base = line.rsplit(" ", 1)[1]
            elif line.startswith("dashboard: "):
                dashboard = line.split(" ", 1)[1]
        assert dashboard == base + "/dashboard/", (base, dashboard)
        yield Devnet(base, dashboard, demo)
    finally:
        process.terminate()
        assert process.wait(timeout=20) == 0


@pytest.fixture(scope="module")
def watcher(devnet: Devnet) -> Iterator[None]:
    """A depositkit client watching OWNER, so that its deposits are swept and credited."""
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "dashboard.py"), devnet.base, OWNER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    lines = lines_of(process)
    try:
        line = next_line(lines, time.monotonic() + 30, "'watching' line from examples/dashboard.py")
        assert line.startswith(f"watching {OWNER}"), line
        yield
    finally:
        assert process.stdin is not None
        process.stdin.close()  # the watcher stops when its stdin closes
        assert process.wait(timeout=20) == 0


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium')}")
    options.add_argument("--window-size=1400,1200")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(browser: WebDriver, check: Callable[[WebDriver], Any], what: str, seconds: float = 20) -> Any:
    """Polls ``check`` until it answers something truthy, up to ``seconds``."""
    # The page rebuilds what changed: an element found a moment ago may be gone.
    wait = WebDriverWait(browser, seconds, poll_frequency=0.1, ignored_exceptions=(StaleElementReferenceException,))
    return wait.until(check, f"{what} within {seconds} s")


def console_errors(browser: WebDriver) -> list[dict[str, Any]]:
    """The console's SEVERE entries since the last call."""
    entries: list[dict[str, Any]] = browser.get_log("browser")  # type: ignore[attr-defined]  # Chrome's only
    return [entry for entry in entries if entry["level"] == "SEVERE"]


def open_dashboard(browser: WebDriver, devnet: Devnet) -> None:
    browser.get(devnet.dashboard)
    wait_for(browser, lambda b: b.find_element(By.ID, "connection").get_attribute("data-state") == "live", "a live event stream")
    wait_for(browser, lambda b: b.find_elements(By.CSS_SELECTOR, f'article[data-owner="{OWNER}"]'), "the owner's card")


def deposit_ids(browser: WebDriver) -> set[str]:
    return {row.get_attribute("data-deposit-id") or "" for row in browser.find_elements(By.CSS_SELECTOR, "#deposit-rows tr[data-deposit-id]")}


def send_deposit(browser: WebDriver, to: str, amount: str, chain_id: int = 8453, token: str = "USDC", by_keyboard: bool = False) -> WebElement:
    """Fills the deposit form and submits it; returns the form's message element."""
    field = browser.find_element(By.ID, "deposit-to")
    field.clear()
    field.send_keys(to)
    Select(browser.find_element(By.ID, "deposit-chain")).select_by_value(str(chain_id))
    Select(browser.find_element(By.ID, "deposit-token")).select_by_value(token)
    amount_field = browser.find_element(By.ID, "deposit-amount")
    amount_field.clear()
    message = browser.find_element(By.ID, "deposit-message")
    browser.execute_script("arguments[0].textContent = ''", message)
    if by_keyboard:
        amount_field.send_keys(amount, Keys.ENTER)
    else:
        amount_field.send_keys(amount)
        browser.find_element(By.CSS_SELECTOR, "#deposit-form button[type=submit]").click()
    wait_for(browser, lambda b: message.text, "an answer to the deposit form")
    return message


def new_deposit(browser: WebDriver, before: set[str], phase: str) -> str:
    """Waits for a deposit not in ``before`` to reach ``phase``; returns its id."""

    def reached(b: WebDriver) -> Optional[str]:
        for row in b.find_elements(By.CSS_SELECTOR, "#deposit-rows tr[data-deposit-id]"):
            deposit = row.get_attribute("data-deposit-id")
            if deposit not in before and row.get_attribute("data-phase") == phase:
                return deposit
        return None

    return wait_for(browser, reached, f"a new deposit in phase {phase}")  # type: ignore[no-any-return]


def row_of(browser: WebDriver, deposit: str) -> WebElement:
    return browser.find_element(By.CSS_SELECTOR, f'#deposit-rows tr[data-deposit-id="{deposit}"]')


def steps_of(browser: WebDriver, deposit: str) -> list[tuple[str, str]]:
    """The deposit's steps (phase, text), its row opened first (with the keyboard)."""
    summary = row_of(browser, deposit).find_element(By.TAG_NAME, "summary")
    if row_of(browser, deposit).find_element(By.TAG_NAME, "details").get_attribute("open") is None:
        summary.send_keys(Keys.ENTER)

    def read(b: WebDriver) -> list[tuple[str, str]]:
        steps = row_of(b, deposit).find_elements(By.CSS_SELECTOR, "ol.steps > li")
        return [(step.get_attribute("data-phase") or "", step.text) for step in steps]

    return wait_for(browser, read, "the deposit's steps")  # type: ignore[no-any-return]


def test_a_deposit_sent_from_the_page_is_credited_live(devnet: Devnet, watcher: None, browser: WebDriver) -> None:
    open_dashboard(browser, devnet)
    assert console_errors(browser) == []
    before = deposit_ids(browser)
    message = send_deposit(browser, OWNER, "25")
    assert "sent on Base" in message.text and "error" not in (message.get_attribute("class") or ""), message.text
    deposit = new_deposit(browser, before, "credited")
    assert "25 USDC on Base" in row_of(browser, deposit).text
    steps = steps_of(browser, deposit)
    assert [phase for phase, _ in steps] == ["detected", "processing", "credited"]
    credited = steps[-1][1]
    delivered = re.search(r"delivered ([0-9.]+) USDC to 0x52908400…169ee7 on Arbitrum", credited)
    assert delivered and 24 < float(delivered[1]) < 25, credited  # 25 USDC less the fees
    # The balance the owner's card shows is pushed too: what reached the destination.
    line = f'article[data-owner="{OWNER}"] table.destinations tr[data-chain="42161"][data-token="USDC"]'
    wait_for(browser, lambda b: f"{delivered[1]} at" in b.find_element(By.CSS_SELECTOR, line).text, "the delivered USDC on the owner's card")
    assert console_errors(browser) == []


def test_a_sweep_fault_armed_from_the_page_fails_then_recovers(devnet: Devnet, watcher: None, browser: WebDriver) -> None:
    Select(browser.find_element(By.ID, "sweep-fault-mode")).select_by_value("fail")
    count = browser.find_element(By.ID, "sweep-fault-count")
    count.clear()
    count.send_keys("1")
    browser.find_element(By.CSS_SELECTOR, "#sweep-fault-form button").click()
    wait_for(browser, lambda b: "Armed" in b.find_element(By.ID, "fault-message").text, "the fault armed")
    wait_for(browser, lambda b: "sweeps: fail × 1" in b.find_element(By.ID, "fault-list").text, "the pending fault listed")
    before = deposit_ids(browser)
    send_deposit(browser, OWNER, "10")
    deposit = new_deposit(browser, before, "credited")
    steps = steps_of(browser, deposit)
    assert [phase for phase, _ in steps] == ["detected", "processing", "failed", "processing", "credited"]
    assert "sweep failed: injected fault: the sweep failed" in steps[2][1]
    wait_for(browser, lambda b: b.find_element(By.ID, "fault-list").text == "None.", "the fault used up")
    # The event log, filtered to failures, shows the failed sweep and nothing else.
    Select(browser.find_element(By.ID, "filter-phase")).select_by_value("failed")
    rows = browser.find_elements(By.CSS_SELECTOR, "#event-rows tr")
    assert len(rows) == 1 and rows[0].get_attribute("data-kind") == "sweep", [r.text for r in rows]
    Select(browser.find_element(By.ID, "filter-phase")).select_by_value("")
    browser.execute_script("window.scrollTo(0, 0)")
    SCREENSHOT.parent.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(SCREENSHOT))
    assert console_errors(browser) == []


def test_bad_input_shows_a_clear_message_and_changes_nothing(devnet: Devnet, watcher: None, browser: WebDriver) -> None:
    before_state = devnet.state()
    before_rows = deposit_ids(browser)
    message = send_deposit(browser, "0xnot-an-address", "5", by_keyboard=True)
    assert "error" in (message.get_attribute("class") or "") and message.get_attribute("role") == "alert"
    assert message.text == 'Not sent: to: "0xnot-an-address" is neither an owner devnet knows nor an address on Base'
    message = send_deposit(browser, OWNER, "-5", by_keyboard=True)
    assert message.text.startswith('Not sent: amount: invalid amount "-5"'), message.text
    message = send_deposit(browser, OWNER, "0")
    assert message.text == 'Not sent: amount: "0" is not positive'
    count = browser.find_element(By.ID, "sweep-fault-count")
    count.clear()
    count.send_keys("-1")
    browser.find_element(By.CSS_SELECTOR, "#sweep-fault-form button").click()
    wait_for(browser, lambda b: "Not armed: count" in b.find_element(By.ID, "fault-message").text, "the refused fault")
    assert browser.find_element(By.ID, "fault-list").text == "None."
    after_state = devnet.state()
    assert after_state["owners"] == before_state["owners"]
    assert after_state["faults"] == before_state["faults"]
    assert [e for e in after_state["events"] if e["kind"] == "deposit"] == [e for e in before_state["events"] if e["kind"] == "deposit"]
    assert deposit_ids(browser) == before_rows
    # The refused requests are the only console entries: the 400 answers of the deposit form.
    errors = console_errors(browser)
    assert len(errors) == 3 and all("/dashboard/api/deposits" in e["message"] and "400" in e["message"] for e in errors), errors


def test_keyboard_small_screen_and_no_secret(devnet: Devnet, watcher: None, browser: WebDriver) -> None:
    browser.set_window_size(390, 844)
    open_dashboard(browser, devnet)
    # The first Tab reaches the skip link; Enter follows it.
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
    skip = browser.switch_to.active_element
    assert skip.text == "Skip to the deposits"
    skip.send_keys(Keys.ENTER)
    assert browser.current_url.endswith("#deposits")
    # Nothing is wider than the phone's screen.
    widths = browser.execute_script("return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert widths[0] <= widths[1], widths
    page = browser.page_source + json.dumps(devnet.state())
    for secret in (devnet.demo["serverKey"], devnet.demo["userToken"], "eyJ"):
        assert secret not in page
    assert console_errors(browser) == []
