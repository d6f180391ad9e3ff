"""The overview grid's columns per resource, as data: one definition drives the headers, the
cells, the sort links and keys, the totals row, the exports, the compact view, the colspans and
the per-node metric families.

Adding a column is one ``Column`` here with the number it shows (a function of a node's
``ResourceUsage``); a cell with more than a number (a badge, a bar) names its macro in
``templates/overview/_usage_cells.html``; a column exported as ``extres_node_<field>`` says what
the family means."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.domain.accounting import ResourceUsage


@dataclass(frozen=True)
class Column:
    field: str  # its name: the cells' data-field, ?sort=<field>:<resource>, the exports' key
    heading: str  # the header's word
    value: Callable[[ResourceUsage], int] | None  # the number, sorted on and exported; None: not a number
    compact: bool = False  # shown in the compact view too (the full view shows every column)
    cell: str = ""  # its cell's macro in templates/overview/_usage_cells.html; "": its number
    metric: str = ""  # the help of its per-node family (app/metrics/families.py); "": not exported


COLUMNS: tuple[Column, ...] = (
    Column(
        "capacity",
        "capacity",
        lambda u: u.capacity,
        cell="capacity_cell",
        metric="Extended resource capacity advertised by a node.",
    ),
    Column(
        "allocatable",
        "allocatable",
        lambda u: u.allocatable,
        metric="Extended resource allocatable on a node.",
    ),
    Column(
        "requested",
        "requested",
        lambda u: u.requested,
        cell="requested_cell",
        metric="Extended resource requested by the non-terminated pods bound to a node.",
    ),
    # not a family of its own: allocatable - requested in a query
    Column("free", "free", lambda u: u.free, compact=True, cell="free_cell"),
    # the bar: a share, or "over-committed by N"; not a family (a share of two that are)
    Column("usage", "usage", None, compact=True, cell="usage_cell"),
)


def shown(compact: bool = False) -> tuple[Column, ...]:
    """The columns of each resource in the full view, or the compact one."""
    return tuple(c for c in COLUMNS if c.compact or not compact)


def exported() -> tuple[Column, ...]:
    """The columns exported as per-node metric families."""
    return tuple(c for c in COLUMNS if c.metric)


def numbers() -> tuple[Column, ...]:
    """The columns that are numbers: what a grid sorts on and an export holds."""
    return tuple(c for c in COLUMNS if c.value is not None)


def number(field: str) -> Callable[[ResourceUsage], int]:
    """The number a grid sorts on for ``field`` (one of ``numbers()``), found once per sort."""
    column = next(c for c in COLUMNS if c.field == field)
    assert column.value is not None
    return column.value
