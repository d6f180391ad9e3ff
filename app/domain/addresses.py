"""Whom a limit per client counts against: an IPv4 address, or an IPv6 address's /64 (one
host is given a whole /64 and can rotate through it at will); an IPv4-mapped IPv6 address is
its IPv4 address. Used by the HTTP intake (connections per client) and the sign-in limits."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def networks(entries: Iterable[str]) -> list[Network]:
    """The networks of settings' entries (addresses or CIDRs; blank ones skipped)."""
    return [ipaddress.ip_network(e.strip(), strict=False) for e in entries if e.strip()]


def ip_of(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``address`` as an IP address (a zone index ignored, an IPv4-mapped one as its IPv4), or
    None when it is not one."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052's well-known prefix
NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215's local-use prefix
COMPATIBLE = ipaddress.IPv6Network("::/96")  # IPv4-compatible (deprecated, still routed by some)


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries to reach (a NAT64 prefix, 6to4, Teredo's client,
    IPv4-compatible), or None: a rule about IPv4 addresses holds for these forms too."""
    if ip in NAT64 or (ip in COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in NAT64_LOCAL:  # RFC 6052's /48 layout: bits 48-63, then 72-87 (past the u octet)
        packed = ip.packed
        return ipaddress.IPv4Address(packed[6:8] + packed[9:11])
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    return None


def limit_key(address: str) -> str | None:
    """The key of ``address``; None when it is not an IP address."""
    ip = ip_of(address)
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return None if ip is None else str(ip)


def trusted(address: str, among: Iterable[Network]) -> bool:
    """Whether ``address`` is in one of the networks ``among``."""
    ip = ip_of(address)
    return ip is not None and any(ip in net for net in among)
