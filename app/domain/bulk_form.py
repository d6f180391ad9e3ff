"""The bulk change form (pure): the action, the resource and count, and the nodes it targets
(chosen by name, or by a label selector), each bad field named; nothing is read but what the
caller hands in."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from app.domain.changes import ChangeError, validate_resource, validate_set
from app.domain.selectors import SelectorError, parse_selector


class Form(Protocol):
    def get(self, key: str, default: str = ...) -> str: ...
    def getlist(self, key: str) -> list[str]: ...


@dataclass(frozen=True)
class BulkChange:
    action: str  # set | remove
    resource: str
    count: int | None  # None: a remove
    targets: tuple[str, ...]  # node names, each once, as chosen (or by name, for a selector)


def parse_bulk(
    form: Form,
    labels: Mapping[str, Mapping[str, str]],
    read_only: Callable[[str, str | None], str | None],
    maximum: int,
) -> BulkChange:
    """``labels``: every node's labels, by name, in name order; ``read_only(resource, node)``:
    what serves the resource instead of this dashboard on that node (None: the name's owner), if
    anything. Raises ChangeError naming each bad field."""
    errors: dict[str, str] = {}
    action = form.get("action", "set")
    if action not in ("set", "remove"):
        errors["action"] = "Action must be 'set' or 'remove'."
    targets = _targets(form, labels, errors)

    def owner(r: str) -> str | None:
        """What serves ``r`` instead of this dashboard on the first target where something does
        (each node as the scheduler decides there), else the name's owner."""
        for name in targets:
            if (source := read_only(r, name)) is not None:
                return f"{source} on {name}"
        return None if targets else read_only(r, None)

    count = None
    resource = form.get("resource", "").strip()
    if action == "set":
        try:
            resource, count, _ = validate_set(
                resource, form.get("quantity", ""), None, maximum=maximum, owner=owner
            )
        except ChangeError as exc:
            errors.update(exc.errors)
    elif msg := validate_resource(resource, owner):
        errors["resource"] = msg
    if errors:
        raise ChangeError(errors)
    return BulkChange(action, resource, count, targets)


def _targets(form: Form, labels: Mapping[str, Mapping[str, str]], errors: dict[str, str]) -> tuple[str, ...]:
    names: Sequence[str] = [n for n in form.getlist("nodes") if n]
    selector_text = form.get("selector", "").strip()
    if names and selector_text:
        errors["nodes"] = "Choose nodes or give a label selector, not both."
        return ()
    if names:
        unknown = sorted({n for n in names if n not in labels})
        if unknown:
            errors["nodes"] = f"Unknown node{'s' if len(unknown) != 1 else ''}: {', '.join(unknown)}."
        return tuple(n for n in dict.fromkeys(names) if n in labels)
    if selector_text:
        try:
            selector = parse_selector(selector_text)
        except SelectorError as exc:
            errors["selector"] = f"Label selector: {exc}."
            return ()
        targets = tuple(name for name, node_labels in labels.items() if selector.matches(node_labels))
        if not targets:
            errors["selector"] = f"No node matches the label selector {selector_text!r}."
        return targets
    errors["nodes"] = "Choose at least one node, or give a label selector."
    return ()
