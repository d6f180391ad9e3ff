"""Browser tests: Playwright driving Debian's Chromium (headless) against the app
served by gunicorn over the real kube-apiserver (and kube-scheduler)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, sync_playwright

from extres_demo import testenv
from tests.browser.pages import AXE
from tests.serving import Server

CHROMIUM = os.environ.get("EXTRES_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="module")
def server(control_plane: testenv.ControlPlane, scheduler: Any) -> Iterator[Server]:
    s = Server(control_plane)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def token_server(control_plane: testenv.ControlPlane, chart_roles: None) -> Iterator[Server]:
    """Token mode, with the chart's roles bound to the test tokens' groups (reads need them too)."""
    s = Server(control_plane, EXTRES_AUTH_MODE="token")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: scripts/dev setup installs Debian's chromium")
    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield b
        b.close()


@pytest.fixture(scope="module")
def axe() -> str:
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: axe-playwright-python is in requirements-dev.lock")
    return str(AXE)
