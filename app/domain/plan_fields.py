"""A pod shape for the what-if planner from its form's fields (a pasted manifest: ``manifest``)."""

from __future__ import annotations

from collections.abc import Mapping

from app.domain.fit import PodShape
from app.domain.manifest import ManifestError, name_problem, shape_of_spec
from app.domain.names import is_requested_as_extended
from app.domain.numbers import bounded_int
from app.domain.quantity import QuantityError, parse_typed_count, to_amount


def parse_fields(requests: str, selector: str, tolerations: str) -> PodShape:
    """The form: ``requests`` as ``name=quantity`` pairs (commas or new lines), ``selector`` as
    ``key=value`` pairs, ``tolerations`` as ``key=value:Effect``, ``key:Effect`` or ``key``."""
    errors: dict[str, str] = {}
    containers = []
    amounts: dict[str, str] = {}
    for item in _items(requests):
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            errors["requests"] = f"Requests: {item!r} is not name=quantity."
            break
        if problem := name_problem(name):
            errors["requests"] = f"Requests: {name!r} {problem}."
            break
        try:
            parse_typed_count(value) if is_requested_as_extended(name) else to_amount(name, value)
        except QuantityError as exc:
            errors["requests"] = f"Requests: {name}={value}: {exc}"
            break
        amounts[name] = value
    if not amounts and "requests" not in errors:
        errors["requests"] = "Requests: give at least one, e.g. example.com/dongle=2."
    containers.append({"resources": {"requests": amounts}})
    node_selector = {}
    for item in _items(selector):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            errors["selector"] = f"Node selector: {item!r} is not key=value."
            break
        node_selector[key.strip()] = value.strip()
    tols = []
    for item in _items(tolerations):
        kv, _, effect = item.partition(":")
        key, sep, value = kv.partition("=")
        if effect and effect not in ("NoSchedule", "NoExecute", "PreferNoSchedule"):
            errors["tolerations"] = (
                f"Tolerations: effect {effect!r} is not NoSchedule, NoExecute or PreferNoSchedule."
            )
            break
        tols.append(
            {
                "key": key.strip(),
                "operator": "Equal" if sep else "Exists",
                "value": value.strip(),
                "effect": effect,
            }
        )
    if errors:
        raise ManifestError(errors)
    return shape_of_spec({"containers": containers, "nodeSelector": node_selector, "tolerations": tols})


def _items(text: str) -> list[str]:
    return [p.strip() for line in (text or "").splitlines() for p in line.split(",") if p.strip()]


MAX_REPLICAS = 100_000


def count_field(
    values: Mapping[str, str], field: str, label: str, errors: dict[str, str], or_else: str = ""
) -> int | None:
    """An optional count from 1 to MAX_REPLICAS (ASCII digits only); a message naming the field
    in ``errors`` otherwise."""
    text = (values.get(field) or "").strip()
    if not text:
        return None
    count = bounded_int(text, 1, MAX_REPLICAS) if text.isdigit() else None
    if count is None:
        errors[field] = f"{label}: a whole number from 1 to {MAX_REPLICAS}{',' if or_else else ''}{or_else}."
    return count
