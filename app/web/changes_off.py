"""Read-only (service-account mode without EXTRES_READ_ONLY=false): every /changes/ URL says changes
are off, rather than a stock "Not Found" for a shared link to a form."""

from __future__ import annotations

from flask import abort

from app.web.surface import Page

bp = Page("changes_off", __name__, url_prefix="/changes", reads=(), when="read-only")


def turned_off(rest: str) -> str:
    abort(
        403,
        description="Changes are turned off here: this dashboard runs read-only (EXTRES_READ_ONLY), "
        "so it offers no form and writes nothing. Nothing was changed.",
    )
    return ""  # not reached: abort raises
