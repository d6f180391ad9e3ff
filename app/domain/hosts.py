"""Which Host a request may name (pure): a page on another site whose name is re-pointed at this
dashboard's address (DNS rebinding) reaches it with that site's name as its Host, so only the
names the dashboard is served under are answered. Hand-written rather than werkzeug's
``host_is_trusted``, which lets no IPv6 literal match (``[::1]:8080``) and compares case."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

LOOPBACK = ("localhost", "127.0.0.1", "::1")  # the names a dashboard on this machine is reached by
ANY_ADDRESS = ("", "0.0.0.0", "::")
_HOST = re.compile(
    r"(?:\[(?P<v6>[0-9A-Fa-f:.]{2,45})\]|(?P<name>[A-Za-z0-9._-]{1,253}))(?::(?P<port>\d{1,5}))?"
)


def host_name(value: str) -> str | None:
    """The name a Host header (or an allowed entry) names, lower-cased, without its port or a
    trailing dot; an IPv6 literal in its short form. None when it is not a host."""
    found = _HOST.fullmatch(value.strip())
    if found is None or (found["port"] is not None and not 1 <= int(found["port"]) <= 65535):
        return None
    if found["v6"] is not None:
        try:
            return str(ipaddress.IPv6Address(found["v6"]))
        except ValueError:
            return None
    name = found["name"].lower().removesuffix(".")
    return name or None


def entry_error(entry: str) -> str:
    """Why an allowed-hosts entry is not one ("" when it is): a name or address, ``.example.com``
    or ``*.example.com`` for its subdomains, ``*`` for any host; a bare IPv6 address too."""
    if entry == "*":
        return ""
    bare = entry.removeprefix("*").removeprefix(".") if entry.startswith(("*.", ".")) else entry
    if host_name(bare) is None and host_name(f"[{bare}]") is None:
        return f"{entry!r} is not a host name, an address, .domain, *.domain or *"
    return ""


def _normal(entry: str) -> tuple[str, bool]:
    """(the name, whether subdomains match)."""
    if entry.startswith(("*.", ".")):
        return host_name(entry.removeprefix("*").removeprefix(".")) or "", True
    return host_name(entry) or host_name(f"[{entry}]") or "", False


def allowed(settings_hosts: Iterable[str], listen: str) -> tuple[str, ...]:
    """The hosts answered: those set, else this machine's loopback names and the listen address
    (``extres serve`` and the demo on loopback; a port-forward arrives as localhost)."""
    configured = tuple(settings_hosts)
    if configured:
        return configured
    return LOOPBACK + (() if listen in ANY_ADDRESS else (listen,))


def host_allowed(header: str, hosts: Iterable[str]) -> bool:
    """Whether a request naming ``header`` as its Host is answered."""
    name = host_name(header)
    if name is None:
        return False
    for entry in hosts:
        if entry == "*":
            return True
        ref, subdomains = _normal(entry)
        if ref and (name == ref or (subdomains and name.endswith(f".{ref}"))):
            return True
    return False
