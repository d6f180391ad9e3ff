"""Write helm/extres/README.md from values.yaml: each key's `# --` comment, type and default.

    python scripts/chart_readme.py          # rewrite the README
    python scripts/chart_readme.py --check  # exit 1 when it is out of date (the tests run this)

The format follows helm-docs: a comment starting `# --` just above a key describes it; the
lines after it that start with `#` continue it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

CHART = Path(__file__).resolve().parent.parent / "helm" / "extres"
KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][\w.-]*):")
HEAD = """# extres Helm chart

A web dashboard for Kubernetes extended resources. This README is generated from `values.yaml`
by `python scripts/chart_readme.py`; edit the comments there.

```sh
helm install extres helm/extres --namespace extres --create-namespace
helm test extres --namespace extres   # asks the dashboard's /readyz
```

Needs Kubernetes {kube}. The values are checked by `values.schema.json`: a value of the wrong
type stops the install with the key named. The alerts (`files/extres-alerts.yaml`) and the
Grafana dashboard (`files/extres-dashboard.json`) also work without the chart.

## Values

| Key | Type | Default | Description |
|-----|------|---------|-------------|
"""


def described(text: str) -> list[tuple[str, str]]:
    """(dotted key, description) for each key with a `# --` comment, in file order."""
    out: list[tuple[str, str]] = []
    path: list[tuple[int, str]] = []
    pending: list[str] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("# --"):
            pending = [stripped[4:].strip()]
            continue
        if stripped.startswith("#") and pending is not None:
            pending.append(stripped[1:].strip())
            continue
        m = KEY.match(line)
        if m is None:
            if stripped and not stripped.startswith("-"):
                pending = None
            continue
        indent = len(m["indent"])
        path = [(i, k) for i, k in path if i < indent] + [(indent, m["key"])]
        if pending is not None:
            out.append((".".join(k for _, k in path), " ".join(p for p in pending if p)))
            pending = None
    return out


def lookup(values: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        values = values[part]
    return values


def kind(value: Any) -> str:
    return {bool: "bool", int: "int", float: "float", str: "string", list: "list", dict: "object"}.get(
        type(value), "string"
    )


def readme() -> str:
    text = (CHART / "values.yaml").read_text()
    values = yaml.safe_load(text)
    kube = yaml.safe_load((CHART / "Chart.yaml").read_text())["kubeVersion"]
    rows = []
    for key, description in described(text):
        value = lookup(values, key)
        default = json.dumps(value, separators=(", ", ": "))
        cell = description.replace("|", "\\|")
        rows.append(f"| `{key}` | {kind(value)} | `{default}` | {cell} |")
    return HEAD.format(kube=kube) + "\n".join(rows) + "\n"


def main() -> int:
    target = CHART / "README.md"
    made = readme()
    if "--check" in sys.argv:
        if not target.exists() or target.read_text() != made:
            print(f"{target} is out of date: run python scripts/chart_readme.py", file=sys.stderr)
            return 1
        return 0
    target.write_text(made)
    return 0


if __name__ == "__main__":
    sys.exit(main())
