"""Server-side pages of a long list, chosen by the ``page`` query argument."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from flask import request

T = TypeVar("T")


def paginate(items: Sequence[T], size: int) -> tuple[Sequence[T], int, int]:
    """The requested page of ``items`` (clamped to the pages there are), its number, and the count."""
    pages = max(1, -(-len(items) // size))
    page = min(max(1, request.args.get("page", 1, type=int) or 1), pages)
    return items[(page - 1) * size : page * size], page, pages


def paged(name: str, items: Sequence[T], size: int) -> dict[str, Any]:
    """A template's view of one page of ``items``: the page's items as ``name``, ``total``, and
    ``page`` of ``pages``."""
    shown, page, pages = paginate(items, size)
    return {name: shown, "total": len(items), "page": page, "pages": pages}
