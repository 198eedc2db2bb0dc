"""Screenshots of the question page for docs/: the answer view on a laptop and a phone.

Starts the service on a free loopback port over the bundled sample graph, with scripted
LLM replies (RoK's four calls about Titanic, so every run draws the same answer), asks
"Who directed Titanic?" through the page in headless Chromium (Debian's chromium and
chromium-driver), and writes docs/img/page-1280x800.png and docs/img/page-390x844.png.

    python scripts/page_screenshots.py [--out docs/img]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import threading
from pathlib import Path
from urllib.parse import urlencode

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

from middleware.config import Settings
from middleware.kg.sample import sample_store
from middleware.llm.scripted import ScriptedLLM
from middleware.server import create_app
from middleware.server.connections.loopback_server import LoopbackServer

SIZES = ((1280, 800), (390, 844))
QUESTION = "Who directed Titanic?"


def scripted_llm() -> ScriptedLLM:
    """RoK's replies for the question on the sample graph."""
    return ScriptedLLM(
        [
            ("Key entities:$", "Titanic; Kate Winslet; James Cameron"),
            ("Useful facts:$", "1"),
            ("Answer:$", "James Cameron"),
        ],
        default="James Cameron",
    )


def chromium() -> webdriver.Chrome:
    browser, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not browser or not driver:
        sys.exit(
            "needs Debian's chromium and chromium-driver (apt install chromium chromium-driver)"
        )
    options = Options()
    options.binary_location = browser
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(executable_path=driver))


def shoot(browser: webdriver.Chrome, url: str, width: int, height: int, out: Path) -> Path:
    """Open the page at ``url`` in a ``width``×``height`` viewport, wait for the graph,
    and save the viewport (on a phone, scrolled to the answer)."""
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )
    browser.get(url)
    WebDriverWait(browser, 60).until(lambda d: d.execute_script("return window.kgmwGraphReady"))
    if width < 600:
        browser.execute_script("document.getElementById('result').scrollIntoView()")
    shot = out / f"page-{width}x{height}.png"
    if not browser.save_screenshot(str(shot)):
        sys.exit(f"could not write {shot}")
    return shot


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs/img"), help="folder for the PNGs")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    settings = Settings.load(config_path=None, env={}, overrides={"progress": False})
    app = create_app(settings, llm=scripted_llm(), graphs={"sample": sample_store()})
    server = LoopbackServer("127.0.0.1", 0, app)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/?" + urlencode({"q": QUESTION, "method": "rok"})
    browser = chromium()
    try:
        for width, height in SIZES:
            print(shoot(browser, url, width, height, args.out))
    finally:
        browser.quit()
        server.shutdown()


if __name__ == "__main__":
    main()
