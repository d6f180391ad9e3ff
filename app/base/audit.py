"""The audit trail: one structured line per decision, in one format, on the ``extres.audit`` logger.

A decision is a change made, refused or failed on a node, a bulk job started, cancelled or
finished, a sign-in (made or refused) and a sign-out. Every line carries the same fixed fields,
``None`` where one does not apply, so a log pipeline can rely on them:

time, outcome, request_id, user, groups, client, cluster, node, resource, old, new

(``cluster``: the name of the cluster the decision was about, ``EXTRES_CLUSTER_NAME`` for the
dashboard's own one, a member's name for a member's.)

plus a few details (the action, the HTTP status, a reason). ``app.base.logs`` writes it as one JSON
line (control characters escaped by the encoder, whatever a node or a user name holds).

Who and from where come from the web layer as a ``Who``: the user and groups as verified (never
as merely claimed), the client address as seen through the trusted proxies only, and the
request id (a trusted proxy's, or one made here).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

LOGGER = logging.getLogger("extres.audit")
OUTCOMES = frozenset(
    {
        "changed",  # a write the API server accepted
        "refused",  # not allowed (by this dashboard or by the API server)
        "failed",  # a conflict, invalid or the API server did not answer: nothing written
        "bulk_started",
        "bulk_cancelled",
        "bulk_finished",
        "signed_in",
        "sign_in_refused",
        "signed_out",
    }
)
FIELDS = ("outcome", "request_id", "user", "groups", "client", "cluster", "node", "resource", "old", "new")
DETAILS = frozenset({"action", "status", "reason", "method", "path", "job", "nodes", "counts"})
_WARN = frozenset({"refused", "failed", "sign_in_refused"})


@dataclass(frozen=True)
class Who:
    """Who acted and from where, as far as this dashboard could verify it."""

    user: str | None = None  # None: the dashboard's own service account, or nobody verified
    groups: tuple[str, ...] = ()
    client: str = ""
    request_id: str = ""
    cluster: str | None = None  # the cluster acted on, by name


def record(
    outcome: str,
    who: Who,
    *,
    node: str | None = None,
    resource: str | None = None,
    old: int | None = None,
    new: int | None = None,
    **details: Any,
) -> dict[str, Any]:
    """Write one audit line; returns the fields written (the line without its time)."""
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown audit outcome {outcome!r}")
    unknown = set(details) - DETAILS
    if unknown:
        raise ValueError(f"unknown audit details {sorted(unknown)}")
    line: dict[str, Any] = {
        "outcome": outcome,
        "request_id": who.request_id or None,
        "user": who.user,
        "groups": list(who.groups),
        "client": who.client or None,
        "cluster": who.cluster,
        "node": node,
        "resource": resource,
        "old": old,
        "new": new,
        **details,
    }
    LOGGER.log(logging.WARNING if outcome in _WARN else logging.INFO, outcome, extra={"audit": line})
    return line
