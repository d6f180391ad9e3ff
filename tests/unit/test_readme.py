"""README.md is an entry page: short, its settings table made from Settings, its links alive, and
the test command CI runs the one it gives."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def test_the_readme_is_an_entry_page_of_at_most_300_lines():
    assert len(README.read_text().splitlines()) <= 300


def test_the_settings_table_is_made_from_settings():
    script = runpy.run_path(str(ROOT / "scripts" / "settings_table.py"))
    assert script["main"](["--check"]) == 0, "run python scripts/settings_table.py"
    from app.settings.config import Settings

    text = README.read_text()
    for name in Settings.names():
        assert f"`EXTRES_{name.upper()}`" in text, name


def test_every_local_link_of_the_readme_and_docs_leads_somewhere():
    for page in (README, *(ROOT / "docs").glob("*.md")):
        for target in re.findall(r"\]\(([^)#\s]+)", page.read_text()):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.name}: {target}"


def test_ci_runs_the_test_command_the_readme_gives():
    commands = re.findall(r"^(scripts/dev \w+)\s+#", README.read_text(), re.M)
    assert "scripts/dev test" in commands and "scripts/dev run" in commands
    assert "scripts/dev test" in (ROOT / ".ci" / "run").read_text()
