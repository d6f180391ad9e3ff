"""The Workloads page's query (pure): grouping, resource, namespace and order, parsed from the
request's arguments with a message per bad one (named, and left out: the page shows what it
would without it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace

from app.domain.names import resource_field
from app.domain.workloads import GROUPINGS, SORT_KEYS, WorkloadRow, sort_rows

DESCENDING_FIRST = ("pods", "requested", "share")  # the most first, unless asked otherwise


@dataclass(frozen=True)
class WorkloadsQuery:
    by: str = "workload"
    resource: str = ""
    namespace: str = ""
    sort: str = "requested"
    order: str = "desc"

    def args(self) -> dict[str, str]:
        """The arguments in force, as links carry them."""
        return {k: v for k, v in asdict(self).items() if v}

    def chosen(self, rows: Iterable[WorkloadRow]) -> list[WorkloadRow]:
        """The rows it keeps, in its order."""
        kept = [
            r
            for r in rows
            if (not self.resource or r.resource == self.resource)
            and (not self.namespace or r.namespace == self.namespace)
        ]
        return sort_rows(kept, self.sort, self.order == "desc")


def parse(args: Mapping[str, str], known: Iterable[str]) -> tuple[WorkloadsQuery, dict[str, str]]:
    """``known``: the resource names the reader may pick."""
    errors: dict[str, str] = {}
    by = args.get("by") or "workload"
    if by not in GROUPINGS:
        errors["by"] = f"Group by {by[:40]!r}: choose workload or namespace."
        by = "workload"
    resource, error = resource_field(args.get("resource") or "", known=known)
    if error:
        errors["resource"] = error
    sort = args.get("sort") or "requested"
    if sort not in SORT_KEYS:
        errors["sort"] = f"Sort by {sort[:40]!r}: choose one of {', '.join(SORT_KEYS)}."
        sort = "requested"
    order = args.get("order") or ("desc" if sort in DESCENDING_FIRST else "asc")
    if order not in ("asc", "desc"):
        errors["order"] = "Order: asc or desc."
        order = "desc"
    namespace = (args.get("namespace") or "").strip()[:63]
    return WorkloadsQuery(by, resource, namespace, sort, order), errors


def in_rows(query: WorkloadsQuery, rows: Iterable[WorkloadRow], errors: dict[str, str]) -> WorkloadsQuery:
    """The query without a namespace no row is in (named in ``errors``)."""
    if query.namespace and not any(r.namespace == query.namespace for r in rows):
        errors["namespace"] = f"No pod in namespace {query.namespace!r} requests an extended resource."
        return replace(query, namespace="")
    return query
