"""Headless Chromium (Debian's `chromium`, driven by Playwright), for tests that look at a page as a person would."""
import contextlib
import os
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def skip_without_chromium():
    """Skip the calling test module, saying why, when Chromium or Playwright is missing; else Playwright's sync API."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium is missing ({CHROMIUM}): `apt-get install chromium` (.ci/run does)", allow_module_level=True)
    return pytest.importorskip("playwright.sync_api", reason="Playwright is missing: `pip install -r requirements.txt`")


@contextlib.contextmanager
def chromium_page(tmp_path, viewport=(1400, 900)):
    """A new page of a fresh headless Chromium profile under tmp_path; the browser closes on leaving. Its home
    (crash reports' settings, dconf, caches) is there too: the user's is shared by every test run on the machine."""
    sync_api = skip_without_chromium()
    home = tmp_path / "chromium-home"
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"))
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, headless=True,
            viewport={"width": viewport[0], "height": viewport[1]}, args=ARGS, env=env)
        try:
            yield browser.new_page()
        finally:
            browser.close()
