"""The question page in headless Chromium: ask, see the answer and the evidence graph.

The screenshot is kept in tests/artifacts/ (or $KGMW_ARTIFACTS) for people to look at.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from tests.server.conftest import LiveServer

ARTIFACTS = Path(os.environ.get("KGMW_ARTIFACTS") or Path(__file__).parents[1] / "artifacts")


def _binaries() -> tuple[str, str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        message = (
            "Debian chromium and chromium-driver are needed (apt install chromium chromium-driver)"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return browser, driver


@pytest.fixture
def browser() -> Iterator[webdriver.Chrome]:
    binary, driver_path = _binaries()
    options = Options()
    options.binary_location = binary
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1200,1400"):
        options.add_argument(flag)
    # the driver is given, so Selenium Manager never tries to download one
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    try:
        yield driver
    finally:
        driver.quit()


def open_page(browser: webdriver.Chrome, server: LiveServer) -> WebDriverWait[webdriver.Chrome]:
    """Load the page and wait until it has listed the methods; returns the waiter."""
    browser.get(server.url + "/")
    wait = WebDriverWait(browser, 30)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#method option"))
    return wait


@pytest.mark.slow
def test_page_asks_and_draws_the_evidence_graph(
    browser: webdriver.Chrome, scripted_server: LiveServer
) -> None:
    wait = open_page(browser, scripted_server)
    methods = [o.text for o in browser.find_elements(By.CSS_SELECTOR, "#method option")]
    assert methods == [
        "rok",
        "pg",
        "qsm",
        "plan",
        "ksl",
        "ksl+plan",
        "reach",
        "io",
        "cot",
        "sc",
        "rok+plan",
        "pg+plan",
        "qsm+plan",
    ]
    browser.find_element(By.ID, "question").send_keys("Who directed Titanic?")
    browser.find_element(By.ID, "ask").click()
    wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "answer"), "James"))
    assert browser.find_element(By.ID, "answer").text == "James Cameron"
    nodes = browser.find_elements(By.CSS_SELECTOR, "#graph g.node")
    labels = {n.find_element(By.TAG_NAME, "text").text for n in nodes}
    assert {"Titanic", "James Cameron", "Kate Winslet"} <= labels
    answer_nodes = browser.find_elements(By.CSS_SELECTOR, "#graph g.node.answer text")
    assert [n.text for n in answer_nodes] == ["James Cameron"]
    edge_labels = {e.text for e in browser.find_elements(By.CSS_SELECTOR, "#graph g.edge text")}
    assert "directed by" in edge_labels
    usage = browser.find_element(By.ID, "usage").text
    assert "LLM calls 4" in usage and "SPARQL queries" in usage
    evidence = browser.find_elements(By.CSS_SELECTOR, "#evidence li")
    assert any("directed by" in li.text for li in evidence)
    steps = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#timeline li")]
    assert steps[0].startswith("expand done (") and "1 LLM call" in steps[0]
    assert all(" done (" in step for step in steps)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "answer-page.png"
    assert browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000


@pytest.mark.slow
def test_page_shows_errors_from_the_service(
    browser: webdriver.Chrome, scripted_server: LiveServer
) -> None:
    wait = open_page(browser, scripted_server)
    browser.execute_script("document.getElementById('question').removeAttribute('maxlength')")
    browser.find_element(By.ID, "question").send_keys("x" * 2100)
    browser.find_element(By.ID, "ask").click()
    wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "status"), "400"))
    assert "more than 2000" in browser.find_element(By.ID, "status").text
    assert browser.find_element(By.ID, "result").get_attribute("hidden") is not None
