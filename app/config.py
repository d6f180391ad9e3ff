"""Settings, read from environment variables prefixed ``EXTRES_``."""

from __future__ import annotations

import ipaddress
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from app.domain.device_plugins import DEFAULT_DEVICE_PLUGIN_PATTERNS

PREFIX = "EXTRES_"
AUTH_MODES = ("service-account", "impersonate", "token")


@dataclass(frozen=True)
class Settings:
    """Every setting, its environment variable is ``EXTRES_`` + the upper-cased name."""

    in_cluster: str = "auto"  # auto: the in-cluster config when running in a pod; true/false force it
    kubeconfig: str | None = None  # the kubeconfig outside a cluster; unset: $KUBECONFIG, then ~/.kube/config
    context: str | None = None  # the kubeconfig context (extres serve --context); unset: the current one
    host: str = "127.0.0.1"  # the dashboard's listen address
    port: int = 8080  # the dashboard's listen port
    metrics_host: str | None = None  # the metrics' listen address; unset: the dashboard's
    metrics_port: int = 9102  # Prometheus metrics, on a port of their own; 0: not served
    secret_key: str = ""  # signs sessions and CSRF tokens; random per process when unset
    # keys replaced by secret_key, still accepted (sessions, CSRF tokens, the sealed token) while
    # sessions made with them may live: rotate by moving the old key here, remove it later
    previous_secret_keys: tuple[str, ...] = ()
    list_page_size: int = 500  # page size of the cache's lists
    watch_timeout: int = 240  # seconds a watch stays open before it is renewed
    request_timeout: float = 10.0  # seconds an API call may take
    # glob patterns of resources owned by device plugins (read-only here); the default lists
    # well-known plugins (nvidia.com/*, amd.com/*, gpu.intel.com/*, ...)
    device_plugin_resources: tuple[str, ...] = DEFAULT_DEVICE_PLUGIN_PATTERNS
    max_quantity: int = 1_000_000  # the largest device count a form accepts
    log_level: str = "INFO"  # DEBUG, INFO, WARNING or ERROR; every line is JSON
    access_log: bool = False  # a log line per request (every poll of every open tab): off unless set
    auth_mode: str = "service-account"  # service-account | impersonate | token
    read_only: bool = True  # service-account mode: no write route at all unless set to false
    user_header: str = "X-Forwarded-User"  # impersonate mode: set by the trusted auth proxy
    groups_header: str = "X-Forwarded-Groups"  # impersonate mode: the user's groups, comma-separated
    # addresses/CIDRs (none wider than /24, /120 for IPv6) of the proxies trusted to set the
    # identity headers, X-Forwarded-For and X-Request-Id
    trusted_proxies: tuple[str, ...] = ()
    cookie_secure: bool = True  # mark the session cookie Secure (keep it on behind TLS)
    max_request_bytes: int = 64 * 1024  # the largest request body accepted
    event_namespace: str = "default"  # where Events about changes are written
    session_idle_minutes: float = 60.0  # token mode: a session ends after this long unused
    session_max_hours: float = 12.0  # token mode: a session ends this long after sign-in, used or not
    # token mode: TokenReviews per minute of tokens not seen lately, from every path together
    # (sign-in form, Authorization headers); past it a new token waits, known ones pass
    token_reviews_per_minute: int = 120
    # token mode: the ConfigMap (namespace/name) where sign-outs are kept for every replica; unset,
    # they are kept in this process only (one replica)
    session_store: str | None = None
    # the durable capacity history: namespace/prefix of its 32 ConfigMaps (prefix-00 to -31);
    # "" puts them in event_namespace with the prefix extres-history; "off" keeps none
    history_store: str = ""
    history_days: int = 31  # days of capacity history kept (1 to 31)
    # seals the capacity history's records; its own key, never rotated with secret_key (the chart
    # makes one and keeps it); unset: no history is written
    history_key: str = ""
    # history keys replaced by history_key: records sealed with them are still read
    previous_history_keys: tuple[str, ...] = ()
    replicas: int = 1  # how many copies serve this dashboard (the chart sets it)
    threads: int = 8  # gunicorn's threads in the one worker; changes may hold all but two of them
    start_watches: bool = True  # start the cache's watches on the first request
    extra: Mapping[str, Any] = field(default_factory=dict)  # not a setting: create_app's other keys

    @property
    def capacity_log(self) -> str | None:
        """namespace/prefix of the capacity history's ConfigMaps, or None when kept nowhere."""
        if self.history_store == "off":
            return None
        return self.history_store or f"{self.event_namespace}/extres-history"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name == "extra":
                continue
            raw = env.get(PREFIX + f.name.upper())
            if raw is None:
                continue
            values[f.name] = _convert(f.name, f.type, raw)
        values.update(overrides)
        settings = cls(**values)
        if settings.auth_mode not in AUTH_MODES:
            raise ValueError(
                f"{PREFIX}AUTH_MODE must be one of {', '.join(AUTH_MODES)}, not {settings.auth_mode!r}"
            )
        if settings.history_store not in ("", "off") and settings.history_store.count("/") != 1:
            raise ValueError(
                f"{PREFIX}HISTORY_STORE must be namespace/prefix or off, not {settings.history_store!r}"
            )
        for entry in settings.trusted_proxies:
            _check_proxy(entry)
        if not 1 <= settings.history_days <= 31:  # app.domain.capacity_log.MAX_DAYS
            raise ValueError(f"{PREFIX}HISTORY_DAYS must be 1 to 31, not {settings.history_days}")
        if settings.token_reviews_per_minute < 1:
            raise ValueError(f"{PREFIX}TOKEN_REVIEWS_PER_MINUTE must be at least 1")
        if settings.session_store is not None and settings.session_store.count("/") != 1:
            raise ValueError(f"{PREFIX}SESSION_STORE must be namespace/name, not {settings.session_store!r}")
        if settings.auth_mode == "token" and settings.replicas > 1 and not settings.session_store:
            raise ValueError(
                f"{PREFIX}SESSION_STORE must be set when {PREFIX}REPLICAS is {settings.replicas} in token "
                "mode: a sign-out must reach every replica (the chart sets it)"
            )
        if not settings.secret_key:
            if settings.replicas > 1:
                raise ValueError(
                    f"{PREFIX}SECRET_KEY must be set when {PREFIX}REPLICAS is {settings.replicas}: every "
                    "replica must sign sessions and CSRF tokens with the same key (the chart keeps one in a "
                    "Secret)"
                )
            settings = cls(**{**vars(settings), "secret_key": secrets.token_hex(32)})
        return settings


def _check_proxy(entry: str) -> None:
    """A trusted proxy is an address or a narrow network: one wider than /24 (/120 for IPv6)
    would trust identity headers from whole networks of clients."""
    try:
        net = ipaddress.ip_network(entry.strip(), strict=False)
    except ValueError:
        raise ValueError(f"{PREFIX}TRUSTED_PROXIES: {entry[:60]!r} is not an address or a network") from None
    narrowest = 24 if net.version == 4 else 120
    if net.prefixlen < narrowest:
        raise ValueError(
            f"{PREFIX}TRUSTED_PROXIES: {entry[:60]} is wider than /{narrowest}: name the proxies' own "
            "addresses (the ingress controller's pods), not a network clients share"
        )


def _convert(name: str, typ: Any, raw: str) -> Any:
    typ = str(typ)
    try:
        if typ == "int":
            return int(raw)
        if typ == "float":
            return float(raw)
        if typ == "bool":
            if raw.lower() not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                raise ValueError(raw)
            return raw.lower() in ("1", "true", "yes", "on")
        if typ.startswith("tuple"):
            return tuple(p.strip() for p in raw.split(",") if p.strip())
    except ValueError as exc:
        raise ValueError(f"{PREFIX}{name.upper()}={raw!r} is not a valid {typ}") from exc
    return raw or None
