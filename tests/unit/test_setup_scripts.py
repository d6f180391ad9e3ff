"""Set-up by package name only: the project's own scripts fetch no URL (packages come through
pip, apt, the Go module proxy and npm by name; axe-core comes with axe-playwright-python)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = [
    ROOT / "scripts" / "dev",
    ROOT / ".ci" / "run",
    ROOT / "demo" / "extres_demo" / "kube-testenv",
    ROOT / "Dockerfile",
]
FETCH = re.compile(r"\b(curl|wget)\b[^\n]*https?://(?!127\.0\.0\.1|localhost)", re.I)
URL = re.compile(r"https?://(?!127\.0\.0\.1|localhost|kubernetes\.default\.svc)[^\s\"')]+")


def test_no_script_fetches_a_url():
    for script in SCRIPTS:
        text = script.read_text()
        assert not FETCH.search(text), script
        assert not URL.findall(text), (script, URL.findall(text))


def test_axe_core_comes_from_a_locked_package():
    lock = (ROOT / "requirements-dev.lock").read_text()
    assert re.search(r"^axe-playwright-python==[\d.]+ \\$", lock, re.M)
    assert "axe" not in (ROOT / "scripts" / "dev").read_text()
