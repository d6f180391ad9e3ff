"""What every route for editors goes through before its view (the single-node forms, the bulk
forms, re-apply: the rows of app/web/routes.py marked ``editors``): a write slot, the user's right
to patch nodes/status checked again, every pod counted, no field sent twice, in that order
(``init_app`` runs them after the request pipeline, for those routes alone)."""

from __future__ import annotations

from flask import Flask, abort, g, request

from app.web import process
from app.web.security import identity, refused
from app.web.surface import row
from app.web.viewer import refuse_until_counted, viewer

REPEATABLE = frozenset({"nodes"})  # the bulk form's node list; every other field is given once
BUSY = "Too many changes are waiting on the API server; nothing was changed. Try again."
UNTIL_COUNTED = "Changes open once every pod is counted{so_far}; nothing was changed. Try again shortly."


def hold_a_write_slot() -> None:
    """Changes wait on the API server; they may hold all but two of the worker's threads, so a
    slow or stalled API server never starves the pages and the health checks. A change beyond
    that is refused at once (nothing is sent; the user retries), never queued or retried."""
    if request.method == "POST":
        if not process.of().limits.write_slots.acquire(blocking=False):
            refused("too many changes waiting on the API server", 503)
            abort(503, description=BUSY)
        g.write_slot = True


def release_write_slot(_exc: BaseException | None) -> None:
    if g.pop("write_slot", False):
        process.of().limits.write_slots.release()


def require_edit_right() -> None:
    """Re-checked on every write: the acting user must be allowed to patch nodes/status."""
    who = identity()
    if not viewer().runtime.cluster.access.can_edit(who):
        if request.method == "POST":
            refused("may not patch nodes/status", 403)
        abort(
            403, description=f"{who.label} may view but not change nodes (patch nodes/status is not allowed)."
        )


def require_every_pod_counted() -> None:
    """A change is checked against the pods that request it: none is offered or taken while the
    first list of pods is under way (or nothing is known yet)."""
    if request.method == "POST" and not viewer().freshness.synced:
        refused("pods still being counted", 503)
    refuse_until_counted(UNTIL_COUNTED)


def refuse_repeated_fields() -> None:
    """A field sent twice (``quantity=3&quantity=5``) is ambiguous: refuse it, change nothing."""
    if request.method == "POST":
        for name in request.form:
            count = len(request.form.getlist(name))
            if count > 1 and name not in REPEATABLE:
                abort(422, description=f"The field {name!r} was sent {count} times; send it once.")


GUARDS = (hold_a_write_slot, require_edit_right, require_every_pod_counted, refuse_repeated_fields)


def guard() -> None:
    """The guards, in order, where the route's row says it is for editors."""
    found = row(request.endpoint)
    if found is not None and found.editors:
        for check in GUARDS:
            check()


def init_app(app: Flask) -> None:
    app.before_request(guard)
    app.teardown_request(release_write_slot)
