"""A node's ``managedFields`` read from its raw JSON: who owns which extended amounts of its
status (the capacity history names the manager that made a change). Only the fields needed are
decoded, and only for the node events whose extended amounts moved."""

from __future__ import annotations

from typing import Any

import msgspec

from app.domain.capacity_log import Managed
from app.domain.names import is_native_resource


class _Entry(msgspec.Struct, rename="camel"):
    manager: str = ""
    time: str = ""
    fields_v1: dict[str, Any] | None = None


class _Meta(msgspec.Struct, rename="camel"):
    managed_fields: list[_Entry] | None = None


class _Node(msgspec.Struct):
    metadata: _Meta | None = None


MANAGED = msgspec.json.Decoder(_Node)


def managed(raw: bytes) -> list[Managed]:
    """Who owns which extended amounts of a node's status, from its ``managedFields``."""
    try:
        node = MANAGED.decode(raw)
    except msgspec.DecodeError:
        return []
    out = []
    for e in (node.metadata.managed_fields if node.metadata else None) or ():
        status = (e.fields_v1 or {}).get("f:status")
        if not isinstance(status, dict):
            continue
        owns = {}
        for field in ("capacity", "allocatable"):
            held = status.get(f"f:{field}")
            if isinstance(held, dict):
                owns[field] = frozenset(
                    k[2:] for k in held if k.startswith("f:") and not is_native_resource(k[2:])
                )
        if owns:
            out.append(Managed(e.manager[:128], e.time, owns))
    return out
