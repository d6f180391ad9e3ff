"""The Pending page's query (pure): namespace and resource, parsed from the request's arguments
with a message per bad one (named, and left out)."""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from dataclasses import asdict, dataclass

from app.domain.names import resource_field


@dataclass(frozen=True)
class PendingQuery:
    namespace: str = ""  # exactly
    resource: str = ""  # asked for by the pod

    def selects(self, namespace: str, requests: Container[str]) -> bool:
        """Whether what is in ``namespace`` asking for ``requests`` is among those filtered."""
        return (not self.namespace or namespace == self.namespace) and (
            not self.resource or self.resource in requests
        )

    def args(self) -> dict[str, str]:
        """The arguments in force, as links carry them."""
        return {k: v for k, v in asdict(self).items() if v}


def parse(args: Mapping[str, str], known: Iterable[str]) -> tuple[PendingQuery, dict[str, str]]:
    """``known``: the resource names the reader may pick."""
    errors: dict[str, str] = {}
    resource, error = resource_field(args.get("resource") or "", known=known)
    if error:
        errors["resource"] = error
    return PendingQuery((args.get("namespace") or "").strip()[:63], resource), errors
