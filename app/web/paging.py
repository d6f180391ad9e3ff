"""Server-side pages of a long list, chosen by the ``page`` query argument."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from flask import request

T = TypeVar("T")


def paginate(items: Sequence[T], size: int) -> tuple[Sequence[T], int, int]:
    """The requested page of ``items`` (clamped to the pages there are), its number, and the count."""
    pages = max(1, -(-len(items) // size))
    page = min(max(1, request.args.get("page", 1, type=int) or 1), pages)
    return items[(page - 1) * size : page * size], page, pages
