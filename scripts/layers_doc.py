"""Write docs/development.md's map of the layers from pyproject.toml's import-linter contract (the one
place the layering is stated): each top-level package of app, top to bottom, with its comment and
its modules. ``--check`` fails, changing nothing, when the page is not what this writes."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "development.md"
BEGIN = "<!-- layers: written by scripts/layers_doc.py from pyproject.toml -->"
END = "<!-- /layers -->"


def layers() -> list[tuple[str, str]]:
    """(layer, its comment) top to bottom, as pyproject.toml states them (comments included)."""
    text = (ROOT / "pyproject.toml").read_text()
    config = tomllib.loads(text)
    [contract] = [c for c in config["tool"]["importlinter"]["contracts"] if c.get("id") == "layers"]
    comments = dict(re.findall(r'^\s+"([^"]+)",\s*#\s*(.+)$', text, re.M))
    return [(layer, comments.get(layer, "")) for layer in contract["layers"]]


def modules(package: str) -> str:
    """A package's modules (its subpackages with a slash), or "" for a module."""
    folder = ROOT / "app" / package
    if not folder.is_dir():
        return ""
    names = sorted(
        p.stem if p.is_file() else p.name + "/"
        for p in folder.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    )
    return ", ".join(f"`{n}`" for n in names)


def written() -> str:
    lines = [BEGIN, "", "| layer | what | modules |", "|---|---|---|"]
    for layer, comment in layers():
        cells = [f"`app/{p.strip()}{'' if (ROOT / 'app' / p.strip()).is_dir() else '.py'}`" for p in layer.split("|")]
        mods = "; ".join(m for p in layer.split("|") if (m := modules(p.strip())))
        lines.append(f"| {' · '.join(cells)} | {comment} | {mods} |")
    lines += ["", END]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    page = DOC.read_text()
    start, end = page.index(BEGIN), page.index(END) + len(END)
    new = page[:start] + written() + page[end:]
    if "--check" in argv:
        if new != page:
            print("docs/development.md's map of the layers is stale: run scripts/layers_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
