"""Templates stay readable in a diff: no line past 200 characters (a long tag breaks between its
attributes, a long Jinja tag between its tokens; a badge is a macro of its own)."""

from __future__ import annotations

from pathlib import Path

LIMIT = 200


def test_no_template_line_is_longer_than_the_limit():
    root = Path(__file__).resolve().parents[2] / "templates"
    long = [
        f"{path.relative_to(root)}:{n} ({len(line)})"
        for path in sorted(root.rglob("*.html"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if len(line) > LIMIT
    ]
    assert long == []
