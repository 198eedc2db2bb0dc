"""The question page in headless Chromium, state by state: empty, answering (the steps
as they come), the answer with its evidence graph, and an error. Each state is
screenshot into the test's tmp folder and checked for what a person sees: labels that
do not overlap, no text under 12 px, links and URLs that work."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from flask import Flask
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from middleware.kg.backends.local import LocalStore
from middleware.methods.registry import METHODS
from middleware.server import create_app
from tests.cli_helpers import rok_script
from tests.server.conftest import LiveServer, settings
from tests.server.page_browser import (
    browser,
    labels,
    open_page,
    overlaps,
    screenshot,
    set_viewport,
    small_text,
    wait_for_graph,
)

__all__ = ["browser"]  # the fixture
QUESTION = "Who directed Titanic?"


def ask(browser: webdriver.Chrome, question: str) -> None:
    browser.find_element(By.ID, "question").send_keys(question)
    browser.find_element(By.ID, "ask").click()


def wait_for_answer(wait: WebDriverWait[webdriver.Chrome], text: str = "James Cameron") -> None:
    wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "answer"), text))
    wait_for_graph(wait)


def assert_readable_graph(browser: webdriver.Chrome) -> None:
    nodes, edges = labels(browser)
    assert nodes and edges
    assert overlaps(nodes) == [], "node labels overlap"
    assert overlaps(edges) == [], "edge labels overlap"
    assert overlaps(nodes + edges) == [], "edge labels cover node labels"
    assert small_text(browser) == []


@pytest.mark.slow
def test_empty_page(browser: webdriver.Chrome, scripted_server: LiveServer, tmp_path: Path) -> None:
    open_page(browser, scripted_server)
    screenshot(browser, tmp_path, "empty")
    methods = [
        o.get_attribute("value") for o in browser.find_elements(By.CSS_SELECTOR, "#method option")
    ]
    assert methods == list(METHODS)
    assert browser.find_element(By.ID, "method").get_attribute("value") == "rok"
    titles = [
        o.get_attribute("title") for o in browser.find_elements(By.CSS_SELECTOR, "#method option")
    ]
    assert all(titles), "each method says what it does"
    assert browser.find_element(By.ID, "result").get_attribute("hidden") is not None
    assert browser.find_element(By.ID, "graph-box").get_attribute("hidden") is not None
    assert browser.find_element(By.ID, "status").text == ""
    assert small_text(browser) == []


@pytest.mark.slow
def test_answering_shows_the_steps_as_they_come(
    browser: webdriver.Chrome,
    serve: Callable[[Flask], LiveServer],
    sample_graph: LocalStore,
    tmp_path: Path,
) -> None:
    release = threading.Event()

    def held_answer(prompt: str) -> str:  # the answer step waits until the test has looked
        release.wait(60)
        return "James Cameron"

    app = create_app(
        settings(), llm=rok_script(answer=held_answer), graphs={"sample": sample_graph}
    )
    server = serve(app)
    wait = open_page(browser, server)
    try:
        ask(browser, QUESTION)
        wait.until(
            lambda d: any(
                li.text.startswith("answer …")
                for li in d.find_elements(By.CSS_SELECTOR, "#timeline li.running")
            )
        )
        steps = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#timeline li")]
        assert steps[0].startswith("expand done (") and "1 LLM call" in steps[0]
        assert steps[-1].startswith("answer …")
        assert browser.find_element(By.ID, "ask").get_attribute("disabled") is not None
        assert "Working" in browser.find_element(By.ID, "status").text
        screenshot(browser, tmp_path, "answering")
        assert small_text(browser) == []
    finally:
        release.set()
    wait_for_answer(wait)
    steps = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#timeline li")]
    assert all(" done (" in step for step in steps)


@pytest.mark.slow
def test_answer_view_with_a_readable_graph(
    browser: webdriver.Chrome, scripted_server: LiveServer, tmp_path: Path
) -> None:
    wait = open_page(browser, scripted_server)
    ask(browser, QUESTION)
    wait_for_answer(wait)
    screenshot(browser, tmp_path, "answer")
    assert browser.find_element(By.ID, "answer").text == "James Cameron"
    nodes, edges = labels(browser)
    assert {"Titanic", "James Cameron", "Kate Winslet"} <= {n.text for n in nodes}
    assert any("directed by" in e.text.split("\n") for e in edges)
    answer_nodes = browser.execute_script(
        "return window.kgmwGraph.nodes('.answer').map((n) => n.data('label'))"
    )
    assert answer_nodes == ["James Cameron"]
    assert_readable_graph(browser)
    answer, graph = (browser.find_element(By.ID, i).rect for i in ("result", "graph-box"))
    assert graph["x"] >= answer["x"] + answer["width"], "on a wide screen the graph is beside"
    assert graph["y"] + graph["height"] <= 800, "the whole graph is in view"
    usage = browser.find_element(By.ID, "usage").text
    assert "4 LLM calls" in usage and "tokens" in usage and " s" in usage
    evidence = browser.find_elements(By.CSS_SELECTOR, "#evidence li")
    assert any("directed by" in li.text for li in evidence)
    problems = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert problems == [], "the console shows errors (a CSP violation, a failed load)"
    query = parse_qs(urlsplit(browser.current_url).query)
    assert query == {"q": [QUESTION], "method": ["rok"], "source": ["sample"]}


@pytest.mark.slow
def test_the_answer_shows_what_supports_it(
    browser: webdriver.Chrome, scripted_server: LiveServer
) -> None:
    wait = open_page(browser, scripted_server)
    ask(browser, QUESTION)
    wait_for_answer(wait)
    support = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#support li")]
    assert support == ["Titanic | directed by | James Cameron"]
    assert browser.find_element(By.ID, "support-box").is_displayed()
    assert not browser.find_element(By.ID, "guess").is_displayed()
    assert "confidence 1" in browser.find_element(By.ID, "grounding").text


@pytest.mark.slow
def test_an_answer_the_graph_does_not_hold(
    browser: webdriver.Chrome,
    serve: Callable[[Flask], LiveServer],
    sample_graph: LocalStore,
    tmp_path: Path,
) -> None:
    """RoK answers "Ridley Scott", whom nothing in the evidence joins to Titanic: the
    page says the graph does not hold the answer and shows the guess beneath, as such."""
    app = create_app(
        settings(), llm=rok_script(answer="Ridley Scott"), graphs={"sample": sample_graph}
    )
    wait = open_page(browser, serve(app))
    ask(browser, QUESTION)
    wait_for_answer(wait, "The graph does not hold the answer.")
    screenshot(browser, tmp_path, "not-found")
    assert browser.find_element(By.ID, "answer").text == "The graph does not hold the answer."
    guess = browser.find_element(By.ID, "guess")
    assert guess.is_displayed()
    assert guess.text == "Best guess (not supported by the graph): Ridley Scott, confidence 0.2"
    assert not browser.find_element(By.ID, "support-box").is_displayed()
    result = browser.find_element(By.ID, "result").text
    assert "null" not in result and "(no answer)" not in result
    evidence = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#evidence li")]
    assert evidence, "the evidence is still shown"
    answer_nodes = browser.execute_script(
        "return window.kgmwGraph.nodes('.answer').map((n) => n.data('label'))"
    )
    assert answer_nodes == [], "no node is drawn as the answer"
    assert small_text(browser) == []


@pytest.mark.slow
def test_hovering_shows_iris_and_sources(
    browser: webdriver.Chrome, scripted_server: LiveServer
) -> None:
    wait = open_page(browser, scripted_server, "q=Who+directed+Titanic%3F")
    wait_for_answer(wait)
    tip = browser.find_element(By.ID, "graph-tip")
    browser.execute_script(
        "window.kgmwGraph.nodes().filter((n) => n.data('label') === 'James Cameron').emit('mouseover')"
    )
    assert tip.is_displayed()
    assert "https://kgmw.dev/metaqa/entity/James%20Cameron" in tip.text
    assert "source: sample" in tip.text
    browser.execute_script(
        "window.kgmwGraph.edges().filter((e) => e.data('label').split('\\n').includes('directed by')).emit('mouseover')"
    )
    assert "https://kgmw.dev/metaqa/relation/directed_by" in tip.text
    assert "source: sample" in tip.text
    browser.execute_script("window.kgmwGraph.edges().emit('mouseout')")
    assert not tip.is_displayed()


@pytest.mark.slow
def test_the_json_link_opens_the_answer(
    browser: webdriver.Chrome, scripted_server: LiveServer
) -> None:
    wait = open_page(browser, scripted_server)
    ask(browser, QUESTION)
    wait_for_answer(wait)
    page = browser.current_window_handle
    browser.find_element(By.ID, "answer-json").click()
    wait.until(lambda d: len(d.window_handles) == 2)
    browser.switch_to.window(next(h for h in browser.window_handles if h != page))
    body = json.loads(browser.find_element(By.TAG_NAME, "body").text)
    assert body["question"] == QUESTION and body["answer"] == "James Cameron"
    assert body["evidence_graph"]["nodes"] and body["usage"]["llm_calls"] == 4


@pytest.mark.slow
def test_the_url_asks_again_on_reload(
    browser: webdriver.Chrome, scripted_server: LiveServer
) -> None:
    wait = open_page(browser, scripted_server, "q=Who+directed+Titanic%3F&method=io")
    wait_for_answer(wait)
    assert browser.find_element(By.ID, "question").get_attribute("value") == QUESTION
    assert browser.find_element(By.ID, "method").get_attribute("value") == "io"
    assert browser.find_element(By.ID, "grounding").text.startswith("io ")
    # io answers from the LLM alone: no graph evidence, and the page says so
    assert browser.find_element(By.ID, "graph-note").text == "No graph evidence for this answer."
    assert not browser.find_element(By.ID, "graph").is_displayed()
    browser.execute_script("document.getElementById('answer').textContent = ''")
    browser.refresh()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#method option"))
    wait_for_answer(wait)
    assert browser.find_element(By.ID, "grounding").text.startswith("io ")


@pytest.mark.slow
def test_a_larger_graph_stays_readable_on_a_phone(
    browser: webdriver.Chrome, rich_server: LiveServer, tmp_path: Path
) -> None:
    set_viewport(browser, 390, 844)
    wait = open_page(browser, rich_server)
    ask(browser, QUESTION)
    wait_for_answer(wait)
    screenshot(browser, tmp_path, "answer-phone")
    nodes, _ = labels(browser)
    assert len(nodes) >= 10
    assert_readable_graph(browser)
    answer = browser.find_element(By.ID, "result").rect
    graph = browser.find_element(By.ID, "graph-box").rect
    # Selenium rounds a box's height to whole pixels (its top keeps fractions): 1 px slack
    assert graph["y"] >= answer["y"] + answer["height"] - 1, "the graph comes below the answer"
    assert graph["x"] >= 0 and graph["x"] + graph["width"] <= 390
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 390


@pytest.mark.slow
def test_errors_from_the_service(
    browser: webdriver.Chrome, scripted_server: LiveServer, tmp_path: Path
) -> None:
    wait = open_page(browser, scripted_server)
    browser.execute_script("document.getElementById('question').removeAttribute('maxlength')")
    ask(browser, "x" * 2100)
    wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "status"), "400"))
    screenshot(browser, tmp_path, "error")
    assert "more than 2000" in browser.find_element(By.ID, "status").text
    assert browser.find_element(By.ID, "result").get_attribute("hidden") is not None
    assert small_text(browser) == []
