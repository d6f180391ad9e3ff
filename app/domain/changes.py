"""Changes to extended resources on nodes: validation, JSON Patch, desired state, drift.

Every write is a JSON Patch (a list) against ``nodes/{name}/status``. It carries
a ``test`` op on the value that was read (``/status/capacity/<resource>``), or,
when the resource was absent, on the node's resourceVersion (JSON Patch cannot
test for absence). A failed test (422) or a stale resourceVersion (409) means
the node changed under the user: nothing is written, and nothing is retried.

The desired amount of each resource managed here is kept on the node itself,
in the annotation ``extres.dev/desired-capacity`` (a JSON object of resource ->
count), updated in the same patch. A node whose capacity no longer matches it
(for instance after it re-registered and lost patched capacity) has drifted.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from app.domain.names import escape_json_pointer, extended_resource_name_errors, is_standard_resource
from app.domain.numbers import INT64_MAX
from app.domain.quantity import QuantityError, parse_count, parse_typed_count

DESIRED_ANNOTATION = "extres.dev/desired-capacity"
MAX_DESIRED = 65_536  # characters of the annotation read

Patch = list[dict[str, object]]


def parse_desired(value: str | None) -> dict[str, int]:
    """The desired-state annotation; malformed content (anyone may write an annotation: arrays
    nested thousands deep, megabytes) counts as no desired state."""
    if not value or len(value) > MAX_DESIRED:
        return {}
    try:
        data = json.loads(value)
        return {str(k): parse_count(str(v)) for k, v in data.items()} if isinstance(data, dict) else {}
    except (ValueError, QuantityError, AttributeError, RecursionError):
        return {}


def format_desired(desired: Mapping[str, int]) -> str:
    return json.dumps({k: str(v) for k, v in sorted(desired.items())}, separators=(",", ":"))


@dataclass(frozen=True)
class Drift:
    resource: str
    desired: int
    actual: int | None  # None: the resource is gone from capacity


def drift(desired: Mapping[str, int], capacity: Mapping[str, int]) -> list[Drift]:
    return [
        Drift(name, want, capacity.get(name))
        for name, want in sorted(desired.items())
        if capacity.get(name) != want
    ]


class ChangeError(ValueError):
    """Bad input: ``errors`` maps each offending form field to a message."""

    def __init__(self, errors: Mapping[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = dict(errors)


def validate_resource(resource: str, owner: Callable[[str], str | None]) -> str | None:
    """A message for the ``resource`` field, or None when it may be changed here. ``owner``
    says what else sets the resource's amount (a device plugin, DRA devices), if anything."""
    if is_standard_resource(resource):
        return f"{resource!r} is a standard resource, not an extended resource; it cannot be changed here."
    problems = extended_resource_name_errors(resource)
    if problems:
        return f"Resource name {resource!r} {problems[0]}."
    if (owned := owner(resource)) is not None:
        return f"{resource} is {owned}, so it is read-only here."
    return None


def validate_quantity(text: str, maximum: int) -> tuple[int | None, str | None]:
    text = (text or "").strip()
    if not text:
        return None, "Quantity is required."
    try:
        count = parse_typed_count(text, maximum=maximum)
    except QuantityError as exc:
        return None, f"Quantity: {exc}."
    if count == 0:
        return None, "Quantity must be at least 1; to take a resource away, remove it instead of setting 0."
    return count, None


def validate_expected(text: str | None) -> tuple[int | None, str | None]:
    """The value the user saw: empty means "absent"."""
    text = (text or "").strip()
    if not text:
        return None, None
    try:
        return parse_count(text, maximum=INT64_MAX), None  # no node holds more
    except QuantityError as exc:
        return None, f"Expected value {exc}."


def validate_remove(
    resource: str, expected: str | None, owner: Callable[[str], str | None]
) -> tuple[str, int]:
    """Validate a remove; returns (resource, expected) or raises ChangeError. The expected value
    (the amount the user saw) is required: a remove is never blind."""
    resource = (resource or "").strip()
    errors: dict[str, str] = {}
    if msg := validate_resource(resource, owner):
        errors["resource"] = msg
    seen, msg = validate_expected(expected)
    if msg:
        errors["expected"] = msg
    elif seen is None:
        errors["expected"] = "Expected value is required: the amount you saw before removing."
    if errors or seen is None:
        raise ChangeError(errors)
    return resource, seen


def validate_set(
    resource: str, quantity: str, expected: str | None, *, maximum: int, owner: Callable[[str], str | None]
) -> tuple[str, int, int | None]:
    """Validate an add/change; returns (resource, count, expected) or raises ChangeError."""
    resource = (resource or "").strip()
    errors: dict[str, str] = {}
    if msg := validate_resource(resource, owner):
        errors["resource"] = msg
    count, msg = validate_quantity(quantity, maximum)
    if msg:
        errors["quantity"] = msg
    want, msg = validate_expected(expected)
    if msg:
        errors["expected"] = msg
    if errors:
        raise ChangeError(errors)
    assert count is not None
    return resource, count, want


def moved(resource: str, node: str, expected: int | None, now: int | None, by: str = "", at: str = "") -> str:
    """What a change refused because the value moved since the form was read says; ``by`` and
    ``at``: the field manager that made the move and when (its managedFields entry), if known."""
    who = f" (by {by}{', ' + at.replace('T', ' ').removesuffix('Z') + ' UTC' if at else ''})" if by else ""
    return (
        f"{resource} on {node} changed since you loaded it{who}: you saw {_shown(expected)}, it is now "
        f"{_shown(now)}. Nothing was changed; review and try again."
    )


def _shown(value: int | None) -> str:
    return "absent" if value is None else str(value)


def capacity_path(resource: str) -> str:
    return "/status/capacity/" + escape_json_pointer(resource)


def guard(resource: str, raw_current: str | None, resource_version: str) -> dict[str, object]:
    """The ``test`` op: on the value read, or on the resourceVersion when the resource was absent."""
    if raw_current is None:
        return {"op": "test", "path": "/metadata/resourceVersion", "value": resource_version}
    return {"op": "test", "path": capacity_path(resource), "value": raw_current}


def desired_ops(annotations: Mapping[str, str] | None, desired: Mapping[str, int]) -> Patch:
    if annotations is None:
        return [
            {
                "op": "add",
                "path": "/metadata/annotations",
                "value": {DESIRED_ANNOTATION: format_desired(desired)},
            }
        ]
    path = "/metadata/annotations/" + escape_json_pointer(DESIRED_ANNOTATION)
    if not desired:
        return [{"op": "remove", "path": path}] if DESIRED_ANNOTATION in annotations else []
    return [{"op": "add", "path": path, "value": format_desired(desired)}]


def set_patch(
    resource: str,
    count: int,
    *,
    raw_current: str | None,
    resource_version: str,
    annotations: Mapping[str, str] | None,
) -> Patch:
    desired = {**parse_desired((annotations or {}).get(DESIRED_ANNOTATION)), resource: count}
    return [
        guard(resource, raw_current, resource_version),
        {"op": "add", "path": capacity_path(resource), "value": str(count)},
        *desired_ops(annotations, desired),
    ]


def remove_patch(
    resource: str, *, raw_current: str, resource_version: str, annotations: Mapping[str, str] | None
) -> Patch:
    desired = parse_desired((annotations or {}).get(DESIRED_ANNOTATION))
    desired.pop(resource, None)
    return [
        guard(resource, raw_current, resource_version),
        {"op": "remove", "path": capacity_path(resource)},
        *desired_ops(annotations, desired),
    ]


@dataclass(frozen=True)
class Impact:
    """What a remove or a decrease of ``resource`` on ``node`` leaves: the pods there that
    request it, and by how much they would over-commit what remains (running pods are not
    evicted; the scheduler places no new pod asking for it)."""

    node: str
    resource: str
    after: int  # allocatable after the change, as far as the form sets it (0 once removed)
    holders: tuple[tuple[str, int], ...]  # ("namespace/name", amount requested), as listed

    @property
    def requested(self) -> int:
        return sum(amount for _, amount in self.holders)

    @property
    def over(self) -> int:
        return max(0, self.requested - self.after)


def impact(node: str, resource: str, after: int | None, holders: Iterable[tuple[str, int]]) -> Impact:
    """The impact of setting ``resource`` on ``node`` to ``after`` (None: removing it)."""
    return Impact(node, resource, after or 0, tuple((k, n) for k, n in holders if n > 0))
