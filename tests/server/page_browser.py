"""Headless Chromium for the page tests, and what a person would see, measured.

``label_boxes`` reads the evidence graph's label boxes from Cytoscape (the page keeps
its instance as ``window.kgmwGraph``); ``overlaps`` pairs boxes that share any area;
``small_text`` lists visible text set smaller than ``MIN_FONT_PX``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.server.conftest import LiveServer

MIN_FONT_PX = 12.0

_LABELS_JS = """
const cy = window.kgmwGraph;
if (!cy) return null;
const box = (b) => [b.x1, b.y1, b.x2, b.y2];
const only = {includeNodes: false, includeEdges: false, includeLabels: true, includeOverlays: false};
return {
  zoom: cy.zoom(),
  nodes: cy.nodes().map((n) => ({
    label: n.data("label"),
    font: parseFloat(n.style("font-size")) * cy.zoom(),
    box: box(n.renderedBoundingBox({includeLabels: true, includeOverlays: false})),
  })),
  edges: cy.edges().filter((e) => e.pstyle("label").strValue !== "").map((e) => ({
    label: e.data("label"),
    font: parseFloat(e.style("font-size")) * cy.zoom(),
    box: box(e.renderedBoundingBox(only)),
  })),
};
"""

_SMALL_TEXT_JS = """
const small = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
while (walker.nextNode()) {
  const text = walker.currentNode.textContent.trim();
  const element = walker.currentNode.parentElement;
  if (!text || !element.checkVisibility() || !element.getClientRects().length) continue;
  const size = parseFloat(getComputedStyle(element).fontSize);
  if (size < arguments[0]) small.push(`${element.tagName}#${element.id} ${size}px: ${text.slice(0, 40)}`);
}
return small;
"""


@dataclass(frozen=True)
class Label:
    """One label on screen: its text, its font size in CSS pixels, its box."""

    text: str
    font_px: float
    box: tuple[float, float, float, float]  # x1, y1, x2, y2 in rendered pixels


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
    """Headless Chromium with a 1280×800 viewport."""
    binary, driver_path = _binaries()
    options = Options()
    options.binary_location = binary
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,800"):
        options.add_argument(flag)
    # the driver is given, so Selenium Manager never tries to download one
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    set_viewport(driver, 1280, 800)
    try:
        yield driver
    finally:
        driver.quit()


def set_viewport(driver: webdriver.Chrome, width: int, height: int) -> None:
    """The page's viewport in CSS pixels (a phone's when narrow)."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )


def open_page(
    browser: webdriver.Chrome, server: LiveServer, query: str = ""
) -> WebDriverWait[webdriver.Chrome]:
    """Load the page (``query``: its URL's query string) and wait until it has listed the
    methods; returns the waiter."""
    browser.get(server.url + "/" + (f"?{query}" if query else ""))
    wait = WebDriverWait(browser, 30)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#method option"))
    return wait


def wait_for_graph(wait: WebDriverWait[webdriver.Chrome]) -> None:
    """Until the evidence graph is drawn and laid out."""
    wait.until(lambda d: d.execute_script("return window.kgmwGraphReady === true"))


def labels(browser: webdriver.Chrome) -> tuple[list[Label], list[Label]]:
    """The node labels (node and label box together) and the edge labels, as drawn."""
    found: dict[str, Any] | None = browser.execute_script(_LABELS_JS)
    assert found is not None, "no evidence graph on the page"

    def read(items: list[dict[str, Any]]) -> list[Label]:
        return [Label(i["label"], float(i["font"]), tuple(i["box"])) for i in items]

    return read(found["nodes"]), read(found["edges"])


def overlaps(boxes: list[Label]) -> list[tuple[str, str]]:
    """Pairs of labels whose boxes share some area."""
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            ax1, ay1, ax2, ay2 = a.box
            bx1, by1, bx2, by2 = b.box
            if ax1 < bx2 and bx1 < ax2 and ay1 < by2 and by1 < ay2:
                found.append((a.text, b.text))
    return found


def small_text(browser: webdriver.Chrome) -> list[str]:
    """Visible page text under ``MIN_FONT_PX``, and graph labels drawn smaller than it."""
    small: list[str] = browser.execute_script(_SMALL_TEXT_JS, MIN_FONT_PX)
    if browser.execute_script("return !!window.kgmwGraph"):
        nodes, edges = labels(browser)
        small += [
            f"graph {x.text!r} {x.font_px:.1f}px" for x in nodes + edges if x.font_px < MIN_FONT_PX
        ]
    return small


def screenshot(browser: webdriver.Chrome, folder: Path, name: str) -> Path:
    """A PNG of the viewport, kept in ``folder`` for people to look at."""
    shot = folder / f"{name}.png"
    assert browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 5_000, "the screenshot is blank"
    return shot
