"""Write README.md's configuration table from ``app.settings.config.Settings``: each field's comment,
environment variable and default.

    python scripts/settings_table.py          # rewrite the table in README.md
    python scripts/settings_table.py --check  # exit 1 when it is out of date (the tests run this)

A field's comment is the comment on its line, after the comment lines just above it. A field
without one stops the script: every setting says what it is for.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
CONFIG = ROOT / "app" / "settings" / "config.py"
START, END = "<!-- settings table: scripts/settings_table.py -->", "<!-- end of settings table -->"


def comments() -> dict[str, str]:
    """Each Settings field's comment, from the source."""
    lines = CONFIG.read_text().splitlines()
    tree = ast.parse(CONFIG.read_text())
    [cls] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Settings"]
    found = {}
    for node in cls.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        above = []
        i = node.lineno - 2
        while i >= 0 and lines[i].strip().startswith("#"):
            above.insert(0, lines[i].strip().lstrip("#").strip())
            i -= 1
        line = lines[node.lineno - 1]
        trailing = line.split("  # ", 1)[1].strip() if "  # " in line else ""
        found[node.target.id] = " ".join(p for p in (*above, trailing) if p)
    return found


def shown(value: object) -> str:
    if value is None:
        return "unset"
    if isinstance(value, tuple):
        return ", ".join(map(str, value)) if value else "none"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value) if value != "" else '""'


def table() -> str:
    sys.path.insert(0, str(ROOT))
    from app.settings.config import PREFIX, Settings

    said = comments()
    rows = ["| variable | default | meaning |", "| --- | --- | --- |"]
    defaults = Settings()  # every default (a Settings made directly keeps an unset secret key unset)
    for name in Settings.names():
        if not said.get(name):
            raise SystemExit(
                f"app/settings/config.py: the setting {name!r} has no comment saying what it is for"
            )
        default: object = getattr(defaults, name)
        if name == "device_plugin_resources":
            default = "well-known plugins"
        text = shown(default).replace("|", "\\|")
        rows.append(f"| `{PREFIX}{name.upper()}` | `{text}` | {said[name].replace('|', chr(92) + '|')} |")
    return "\n".join(rows)


def rewritten(readme: str) -> str:
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{table()}\n{END}{tail}"


def main(argv: list[str]) -> int:
    text = README.read_text()
    new = rewritten(text)
    if "--check" in argv:
        if new != text:
            print("README.md's settings table is out of date: run python scripts/settings_table.py")
            return 1
        return 0
    README.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
