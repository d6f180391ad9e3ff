"""Browser tests: Playwright driving Debian's Chromium (headless) against the app
served by gunicorn over the real kube-apiserver (and kube-scheduler)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from app import testenv
from tests.conftest import eventually, repo_root

CHROMIUM = os.environ.get("EXTRES_CHROMIUM", "/usr/bin/chromium")
DOCS = repo_root() / "docs"


class Server:
    def __init__(self, plane: testenv.ControlPlane, **env: str) -> None:
        self.port = testenv.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        full = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            "EXTRES_HOST": "127.0.0.1",
            "EXTRES_PORT": str(self.port),
            "EXTRES_KUBECONFIG": str(plane.kubeconfig),
            "EXTRES_IN_CLUSTER": "false",
            "EXTRES_COOKIE_SECURE": "false",  # plain http on loopback
            "EXTRES_READ_ONLY": "false",  # service-account mode writes only when asked to
            **env,
        }
        self.proc = subprocess.Popen(
            ["gunicorn", "--config", "app/gunicorn_conf.py", "app:create_app()"],
            cwd=repo_root(),
            env=full,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

        def up() -> bool:
            assert self.proc.poll() is None, "gunicorn exited"
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=3) as resp:
                    return resp.status == 200
            except OSError as exc:
                raise AssertionError(str(exc)) from exc

        eventually(up, timeout=30)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def server(control_plane: testenv.ControlPlane, scheduler: Any) -> Iterator[Server]:
    s = Server(control_plane)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def token_server(control_plane: testenv.ControlPlane) -> Iterator[Server]:
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


class Watched:
    """A page whose console errors, page errors and CSP violations are collected."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.problems: list[str] = []
        page.on("console", lambda m: self.problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.problems.append(str(e)))


def open_page(browser: Browser, js: bool = True, headers: dict[str, str] | None = None) -> Watched:
    context = browser.new_context(
        java_script_enabled=js, viewport={"width": 1366, "height": 800}, extra_http_headers=headers or {}
    )
    return Watched(context.new_page())
