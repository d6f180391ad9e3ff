"""A member cluster's kubeconfig, from a Secret or a file an operator put there: read as hostile
and refused with the rule it breaks, before anything connects. What such tools got advisories
for is what is refused here:

* ``exec`` and ``auth-provider`` plugins run a command or a provider's code on this server;
* a file path (``certificate-authority``, ``client-certificate``, ``client-key``, ``tokenFile``)
  reads this server's files (its own service account token, another member's key);
* ``insecure-skip-tls-verify`` hands the token to whoever answers, unless a per-cluster setting
  allows it for that one cluster;
* a server on a loopback, link-local, unspecified or metadata address (the cloud's instance
  credentials at 169.254.169.254 and their names) is this host or its cloud, not a cluster:
  server-side request forgery through the cluster's URL; a ``proxy-url`` the same through a
  proxy. Names are resolved and every address checked (a name resolving to loopback is
  loopback); loopback is allowed only by the test bed's setting;
* credentials: a bearer token or a client certificate with its key, inline, nothing else (no
  username and password, no impersonation fields).

The kubeconfig is reduced to what was checked (``Member``): no other field reaches the client."""

from __future__ import annotations

import base64
import binascii
import ipaddress
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import yaml

from app.domain import safe_yaml
from app.domain.addresses import embedded_ipv4, ip_of
from app.domain.names import is_dns_label

MAX_BYTES = 256 * 1024  # a kubeconfig with a CA bundle and a client certificate is a few KiB
MAX_VALUE = 128 * 1024  # one value's characters (a CA bundle, base64)
METADATA_NAMES = frozenset({"metadata.google.internal", "metadata", "instance-data", "metadata.azure.com"})
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OCI
        "169.254.170.2",  # AWS ECS task metadata
        "100.100.100.200",  # Alibaba
        "fd00:ec2::254",  # AWS over IPv6
        "fd20:ce::254",  # GCP over IPv6
        "192.0.0.192",  # Oracle
        "168.63.129.16",  # Azure's WireServer
    )
)
FILE_FIELDS = ("certificate-authority", "client-certificate", "client-key", "tokenFile", "token-file")
USER_FIELDS = frozenset({"token", "client-certificate-data", "client-key-data"})
CLUSTER_FIELDS = frozenset(
    {"server", "certificate-authority-data", "insecure-skip-tls-verify", "tls-server-name", "extensions"}
)

Resolve = Callable[[str], Iterable[str]]


class Refused(ValueError):
    """A member's kubeconfig breaks ``rule``; the message names the cluster and the rule."""

    def __init__(self, cluster: str, rule: str, detail: str) -> None:
        super().__init__(f"cluster {cluster}: refused ({rule}): {detail}")
        self.cluster, self.rule, self.detail = cluster, rule, detail


@dataclass(frozen=True)
class Member:
    """What was checked, and nothing else; ``repr`` never shows a credential."""

    name: str
    server: str
    ca_data: str | None  # base64 PEM, as the kubeconfig carries it
    tls_server_name: str | None
    insecure: bool
    token: str | None
    cert_data: str | None
    key_data: str | None
    # the address the server's name resolved to when it was checked: connections go there (the
    # name kept for TLS), so a name that later resolves elsewhere (DNS rebinding) is never reached
    pinned: str | None = None

    def __repr__(self) -> str:
        how = "token" if self.token else "client certificate"
        return f"Member({self.name!r}, {self.server!r}, {how})"

    def kubeconfig(self) -> dict[str, Any]:
        """A kubeconfig of the checked fields alone (the client builds its connection from it)."""
        cluster: dict[str, Any] = {"server": self.server}
        tls_name = self.tls_server_name
        if self.pinned is not None:
            parts = urlsplit(self.server)
            address = f"[{self.pinned}]" if ":" in self.pinned else self.pinned
            cluster["server"] = parts._replace(netloc=f"{address}:{parts.port or 443}").geturl()
            tls_name = tls_name or parts.hostname  # the certificate is checked against the name
        if self.ca_data:
            cluster["certificate-authority-data"] = self.ca_data
        if tls_name:
            cluster["tls-server-name"] = tls_name
        if self.insecure:
            cluster["insecure-skip-tls-verify"] = True
        user: dict[str, Any] = (
            {"token": self.token}
            if self.token
            else {"client-certificate-data": self.cert_data, "client-key-data": self.key_data}
        )
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": self.name, "cluster": cluster}],
            "users": [{"name": self.name, "user": user}],
            "contexts": [{"name": self.name, "context": {"cluster": self.name, "user": self.name}}],
            "current-context": self.name,
        }


def resolve_all(host: str) -> list[str]:
    """Every address ``host`` resolves to (the system's resolver)."""
    return sorted({str(info[4][0]) for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)})


def read(
    name: str,
    text: str | bytes,
    *,
    insecure_allowed: bool = False,
    loopback_allowed: bool = False,
    resolve: Resolve = resolve_all,
) -> Member:
    """The member ``name``'s kubeconfig ``text`` checked; Refused naming the first rule broken."""
    if not is_dns_label(name):
        raise Refused(name[:64], "name", "a cluster's name is a DNS label: a-z, 0-9 and -, at most 63")
    if len(text) > MAX_BYTES:
        raise Refused(name, "size", f"the kubeconfig is larger than {MAX_BYTES // 1024} KiB")
    try:
        raw = text.decode() if isinstance(text, bytes) else text
        docs = safe_yaml.load_all(raw, max_scalar=MAX_VALUE)
    except (UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:  # UnsafeYAML is a ValueError
        raise Refused(name, "yaml", f"not a kubeconfig safe to read: {str(exc)[:200]}") from None
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise Refused(name, "yaml", "a kubeconfig is one YAML mapping")
    cluster, user = _current(name, docs[0])
    _no_plugins(name, user)
    _no_files(name, cluster, user)
    server, pinned = _server(name, cluster, loopback_allowed, resolve)
    insecure = cluster.get("insecure-skip-tls-verify") is True
    if insecure and not insecure_allowed:
        raise Refused(
            name,
            "insecure-skip-tls-verify",
            "the server's certificate would not be checked (its token handed to whoever answers); "
            "allow it for this cluster alone in its setting, or give certificate-authority-data",
        )
    if "proxy-url" in cluster:
        raise Refused(name, "proxy-url", "no proxy: the dashboard connects to the server itself")
    extra = set(cluster) - CLUSTER_FIELDS - {"proxy-url"}
    if extra:
        raise Refused(
            name, "cluster fields", f"not accepted here: {', '.join(sorted(map(str, extra)))[:200]}"
        )
    ca = _base64(name, cluster, "certificate-authority-data")
    tls_name = cluster.get("tls-server-name")
    if tls_name is not None and not isinstance(tls_name, str):
        raise Refused(name, "cluster fields", "tls-server-name is a name")
    token, cert, key = _credentials(name, user)
    return Member(name, server, ca, tls_name, insecure, token, cert, key, pinned)


def _current(name: str, doc: dict[Any, Any]) -> tuple[dict[Any, Any], dict[Any, Any]]:
    """The current context's cluster and user."""
    current = doc.get("current-context")
    contexts = _named(doc.get("contexts"))
    if not isinstance(current, str) or current not in contexts:
        raise Refused(name, "context", "current-context must name one of its contexts")
    context = contexts[current]
    clusters, users = _named(doc.get("clusters"), "cluster"), _named(doc.get("users"), "user")
    cluster, user = clusters.get(str(context.get("cluster"))), users.get(str(context.get("user")))
    if cluster is None or user is None:
        raise Refused(name, "context", "the current context must name a cluster and a user it lists")
    if context.get("namespace") is not None and not isinstance(context.get("namespace"), str):
        raise Refused(name, "context", "a context's namespace is a name")
    return cluster, user


def _named(entries: Any, field: str = "context") -> dict[str, dict[Any, Any]]:
    """A kubeconfig list of ``{name, <field>}`` as a mapping (entries that are not, left out)."""
    out: dict[str, dict[Any, Any]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("name"), str)
            and isinstance(entry.get(field), dict)
        ):
            out[entry["name"]] = entry[field]
    return out


def _no_plugins(name: str, user: dict[Any, Any]) -> None:
    for plugin in ("exec", "auth-provider"):
        if plugin in user:
            raise Refused(
                name, plugin, f"an {plugin} plugin would run code on this server; give a token instead"
            )


def _no_files(name: str, cluster: dict[Any, Any], user: dict[Any, Any]) -> None:
    for field in FILE_FIELDS:
        if field in cluster or field in user:
            raise Refused(
                name, "file path", f"{field} names a file on this server; give the -data field inline instead"
            )


def _server(
    name: str, cluster: dict[Any, Any], loopback_allowed: bool, resolve: Resolve
) -> tuple[str, str | None]:
    """The server URL, and the address its name resolved to (None: the URL names an address)."""
    server = cluster.get("server")
    if not isinstance(server, str) or len(server) > 2048:
        raise Refused(name, "server", "the cluster has no server URL")
    parts = urlsplit(server)
    if parts.scheme != "https" or not parts.hostname or parts.username or parts.password:
        raise Refused(name, "server", "the server is an https:// URL with a host and no user in it")
    if parts.query or parts.fragment:
        raise Refused(name, "server", "the server URL has no query or fragment")
    try:
        _ = parts.port
    except ValueError:
        raise Refused(name, "server", "the server URL's port is not a port") from None
    host = parts.hostname.rstrip(".").lower()
    if host in METADATA_NAMES:
        raise Refused(name, "metadata address", f"{host} is the cloud's instance metadata, not a cluster")
    literal = ip_of(host) is not None
    try:
        addresses = [host] if literal else list(resolve(host))
    except OSError as exc:
        raise Refused(
            name, "server", f"{host} does not resolve ({exc.strerror or exc}); asked again later"
        ) from None
    if not addresses:
        raise Refused(name, "server", f"{host} resolves to no address")
    for address in addresses:
        _allowed(name, host, address, loopback_allowed)
    return server, None if literal else str(ip_of(addresses[0]))


def _allowed(name: str, host: str, address: str, loopback_allowed: bool) -> None:
    found = ip_of(address)
    if found is None:
        raise Refused(name, "server", f"{host} resolved to {address[:64]!r}, not an address")
    inner = embedded_ipv4(found) if isinstance(found, ipaddress.IPv6Address) else None
    for ip in (found, inner) if inner is not None else (found,):  # NAT64, 6to4, Teredo: their IPv4 too
        _address_allowed(name, host, ip, loopback_allowed)


def _address_allowed(
    name: str, host: str, ip: ipaddress.IPv4Address | ipaddress.IPv6Address, loopback_allowed: bool
) -> None:
    said = host if host == str(ip) else f"{host} ({ip})"
    if ip in METADATA_ADDRESSES:
        raise Refused(name, "metadata address", f"{said} is the cloud's instance metadata, not a cluster")
    if ip.is_link_local:
        raise Refused(name, "link-local address", f"{said} is link-local (the cloud's metadata lives there)")
    if ip.is_unspecified or ip.is_multicast:
        raise Refused(name, "server", f"{said} is not a host's address")
    if ip.is_loopback and not loopback_allowed:
        raise Refused(name, "loopback address", f"{said} is this host itself, not a member cluster")


def _base64(name: str, fields: dict[Any, Any], field: str) -> str | None:
    value = fields.get(field)
    if value is None:
        return None
    if not isinstance(value, str):
        raise Refused(name, field, "not base64 text")
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise Refused(name, field, "not base64 text") from None
    return value


def _credentials(name: str, user: dict[Any, Any]) -> tuple[str | None, str | None, str | None]:
    extra = set(user) - USER_FIELDS
    if extra:
        kinds = ", ".join(sorted(map(str, extra)))[:200]
        raise Refused(name, "credentials", f"a bearer token or a client certificate only; not {kinds}")
    token = user.get("token")
    cert, key = _base64(name, user, "client-certificate-data"), _base64(name, user, "client-key-data")
    if token is not None:
        if not isinstance(token, str) or not token.strip() or any(c in token for c in "\r\n"):
            raise Refused(name, "credentials", "the token is one line of text")
        if cert or key:
            raise Refused(name, "credentials", "a bearer token or a client certificate, not both")
        return token.strip(), None, None
    if cert and key:
        return None, cert, key
    raise Refused(name, "credentials", "a bearer token, or a client certificate with its key, inline")
