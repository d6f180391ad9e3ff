"""The overview grid's columns per resource, as data: one definition drives the headers, the
cells, the sort links and keys, the totals row, the exports, the compact view and the colspans.

Adding a column is one ``Column`` here with the number it shows (a function of a node's
``ResourceUsage``); a cell with more than a number (a badge, a bar) gets a macro of its own in
``templates/overview/_usage_cells.html``, named by the column's field."""

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


COLUMNS: tuple[Column, ...] = (
    Column("capacity", "capacity", lambda u: u.capacity),
    Column("allocatable", "allocatable", lambda u: u.allocatable),
    Column("requested", "requested", lambda u: u.requested),
    Column("free", "free", lambda u: u.free, compact=True),
    Column("usage", "usage", None, compact=True),  # the bar: a share, or "over-committed by N"
)


def shown(compact: bool = False) -> tuple[Column, ...]:
    """The columns of each resource in the full view, or the compact one."""
    return tuple(c for c in COLUMNS if c.compact or not compact)


def numbers() -> tuple[Column, ...]:
    """The columns that are numbers: what a grid sorts on and an export holds."""
    return tuple(c for c in COLUMNS if c.value is not None)


def number(field: str) -> Callable[[ResourceUsage], int]:
    """The number a grid sorts on for ``field`` (one of ``numbers()``), found once per sort."""
    column = next(c for c in COLUMNS if c.field == field)
    assert column.value is not None
    return column.value
