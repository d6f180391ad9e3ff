"""The checks of the settings that one field's type does not say (app.settings.config calls ``check``
once a Settings is made): key lengths, trusted proxies, names, selectors, the usage mappings,
the stores' shapes, and what several replicas need. Each message names its variable."""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Protocol

from app.domain.hosts import entry_error
from app.domain.names import is_dns_label, qualified_name_errors
from app.domain.usage_mapping import DCGM, UsageMapping, mappings_from

PREFIX = "EXTRES_"
MIN_KEY_BYTES = 32
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]{0,127}")
SELECTOR = re.compile(r"[A-Za-z0-9._/=!, ()-]{1,256}")


class Checked(Protocol):
    """The settings these rules read (a Settings, named by its fields: the rules import nothing of
    the module that calls them)."""

    @property
    def secret_key(self) -> str: ...
    @property
    def history_key(self) -> str: ...
    @property
    def trusted_proxies(self) -> tuple[str, ...]: ...
    @property
    def forwarders(self) -> tuple[str, ...]: ...
    @property
    def allowed_hosts(self) -> tuple[str, ...]: ...
    @property
    def prometheus_cluster_label(self) -> str: ...
    @property
    def clusters_namespace(self) -> str | None: ...
    @property
    def clusters_selector(self) -> str: ...
    @property
    def cluster_name(self) -> str: ...
    @property
    def usage_mappings(self) -> str: ...
    @property
    def prometheus_url(self) -> str | None: ...
    @property
    def history_store(self) -> str: ...
    @property
    def session_store(self) -> str | None: ...
    @property
    def auth_mode(self) -> str: ...
    @property
    def replicas(self) -> int: ...
    @property
    def team_label(self) -> str: ...
    @property
    def gpu_prices(self) -> str: ...
    @property
    def gpu_price_currency(self) -> str: ...


def check(s: Checked) -> None:
    """Raises ValueError naming the first setting that breaks its rule."""
    for name in ("secret_key", "history_key"):  # a short key can be guessed
        if (key := getattr(s, name)) and len(key.encode()) < MIN_KEY_BYTES:
            raise ValueError(
                f"{PREFIX}{name.upper()}: must be at least {MIN_KEY_BYTES} bytes (e.g. openssl rand -hex "
                "32), or unset"
            )
    for entry in s.trusted_proxies:
        _check_proxy(entry)
    for entry in s.forwarders:
        _network(entry, "FORWARDERS")
    for entry in s.allowed_hosts:
        if error := entry_error(entry):
            raise ValueError(f"{PREFIX}ALLOWED_HOSTS: {error[:200]}")
    if s.prometheus_cluster_label and not LABEL_NAME.fullmatch(s.prometheus_cluster_label):
        raise ValueError(
            f"{PREFIX}PROMETHEUS_CLUSTER_LABEL: a Prometheus label name, "
            f"not {s.prometheus_cluster_label[:60]!r}"
        )
    if s.team_label and (problems := qualified_name_errors(s.team_label)):
        raise ValueError(f"{PREFIX}TEAM_LABEL: a label key (team, example.com/team): {problems[0][:200]}")
    if s.clusters_namespace is not None and not is_dns_label(s.clusters_namespace):
        raise ValueError(f"{PREFIX}CLUSTERS_NAMESPACE: a namespace's name, not {s.clusters_namespace[:60]!r}")
    if not SELECTOR.fullmatch(s.clusters_selector):
        raise ValueError(
            f"{PREFIX}CLUSTERS_SELECTOR: a label selector (e.g. extres.dev/secret-type=cluster), "
            f"not {s.clusters_selector[:60]!r}"
        )
    if not is_dns_label(s.cluster_name):
        raise ValueError(
            f"{PREFIX}CLUSTER_NAME: a DNS label (a-z, 0-9 and -, at most 63), not {s.cluster_name[:60]!r}"
        )
    if s.gpu_prices:
        try:
            gpu_prices(s.gpu_prices)
        except ValueError as exc:
            raise ValueError(f"{PREFIX}GPU_PRICES: {exc}") from None
    if not CURRENCY.fullmatch(s.gpu_price_currency):
        raise ValueError(
            f"{PREFIX}GPU_PRICE_CURRENCY: an ISO 4217 code (USD, EUR), not {s.gpu_price_currency[:20]!r}"
        )
    try:
        usage_mappings(s.usage_mappings)
    except ValueError as exc:
        raise ValueError(f"{PREFIX}USAGE_MAPPINGS: {exc}") from None
    url = s.prometheus_url
    if url is not None and not url.startswith(("http://", "https://")):
        raise ValueError(f"{PREFIX}PROMETHEUS_URL: must start with http:// or https://, not {url[:60]!r}")
    if s.history_store not in ("", "off") and s.history_store.count("/") != 1:
        raise ValueError(f"{PREFIX}HISTORY_STORE must be namespace/prefix or off, not {s.history_store!r}")
    if s.session_store is not None and s.session_store.count("/") != 1:
        raise ValueError(f"{PREFIX}SESSION_STORE must be namespace/name, not {s.session_store!r}")
    if s.auth_mode == "token" and s.replicas > 1 and not s.session_store:
        raise ValueError(
            f"{PREFIX}SESSION_STORE must be set when {PREFIX}REPLICAS is {s.replicas} in token "
            "mode: a sign-out must reach every replica (the chart sets it)"
        )
    if not s.secret_key and s.replicas > 1:
        raise ValueError(
            f"{PREFIX}SECRET_KEY must be set when {PREFIX}REPLICAS is {s.replicas}: every "
            "replica must sign sessions and CSRF tokens with the same key (the chart keeps one in a "
            "Secret)"
        )


MOST_PRICES = 256
CURRENCY = re.compile(r"[A-Z]{3}")


def gpu_prices(text: str) -> dict[str, float]:
    """A JSON object of GPU model -> price per GPU-hour (a number, 0 or more); ValueError naming
    what is wrong."""
    try:
        found = json.loads(text[:65536])
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at {exc.pos})") from None
    if not isinstance(found, dict) or len(found) > MOST_PRICES:
        raise ValueError(f"a JSON object of at most {MOST_PRICES} GPU models to their price per GPU-hour")
    out: dict[str, float] = {}
    for model, price in found.items():
        if not (isinstance(model, str) and 0 < len(model) <= 128):
            raise ValueError(f"a model's name of 1 to 128 characters, not {str(model)[:60]!r}")
        if isinstance(price, bool) or not isinstance(price, int | float) or not 0 <= price < 1e9:
            raise ValueError(f"{model[:60]!r}: a price per GPU-hour of 0 or more, not {str(price)[:20]!r}")
        out[model] = float(price)
    return out


def usage_mappings(text: str) -> tuple[UsageMapping, ...]:
    """The usage mappings of ``EXTRES_USAGE_MAPPINGS`` (dcgm-exporter's when empty)."""
    if not text.strip():
        return (DCGM,)
    try:
        documents = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"is not JSON: {exc}") from None
    if not isinstance(documents, list) or not documents:
        raise ValueError("must be a JSON list of mappings")
    return mappings_from(documents)


def _check_proxy(entry: str) -> None:
    """A trusted proxy is an address or a narrow network: one wider than /24 (/120 for IPv6)
    would trust identity headers from whole networks of clients."""
    net = _network(entry, "TRUSTED_PROXIES")
    narrowest = 24 if net.version == 4 else 120
    if net.prefixlen < narrowest:
        raise ValueError(
            f"{PREFIX}TRUSTED_PROXIES: {entry[:60]} is wider than /{narrowest}: name the proxies' own "
            "addresses (the ingress controller's pods), not a network clients share"
        )


def _network(entry: str, setting: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    try:
        return ipaddress.ip_network(entry.strip(), strict=False)
    except ValueError:
        raise ValueError(f"{PREFIX}{setting}: {entry[:60]!r} is not an address or a network") from None
