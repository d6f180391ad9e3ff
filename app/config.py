"""Settings, read from environment variables prefixed ``EXTRES_``."""

from __future__ import annotations

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

    in_cluster: str = "auto"  # auto | true | false
    kubeconfig: str | None = None  # default: $KUBECONFIG, then ~/.kube/config
    context: str | None = None  # kubeconfig context
    host: str = "127.0.0.1"
    port: int = 8080
    metrics_host: str | None = None  # default: the same address as the dashboard
    metrics_port: int = 9102  # Prometheus metrics, on a port of their own; 0: not served
    secret_key: str = ""  # signs sessions and CSRF tokens; random per process when unset
    # keys replaced by secret_key, still accepted (sessions, CSRF tokens, the sealed token) while
    # sessions made with them may live: rotate by moving the old key here, remove it later
    previous_secret_keys: tuple[str, ...] = ()
    list_page_size: int = 500
    watch_timeout: int = 240
    request_timeout: float = 10.0
    device_plugin_resources: tuple[str, ...] = DEFAULT_DEVICE_PLUGIN_PATTERNS
    max_quantity: int = 1_000_000
    log_level: str = "INFO"
    access_log: bool = False  # a log line per request (every poll of every open tab): off unless set
    auth_mode: str = "service-account"  # service-account | impersonate | token
    read_only: bool = True  # service-account mode: no write route at all unless set to false
    user_header: str = "X-Forwarded-User"  # impersonate mode: set by the trusted auth proxy
    groups_header: str = "X-Forwarded-Groups"
    trusted_proxies: tuple[str, ...] = ()  # addresses/CIDRs allowed to set those headers
    cookie_secure: bool = True
    max_request_bytes: int = 64 * 1024
    event_namespace: str = "default"  # where Events about changes are written
    session_idle_minutes: float = 60.0  # token mode: a session ends after this long unused
    session_max_hours: float = 12.0  # ... and this long after sign-in
    # token mode: the ConfigMap (namespace/name) where sign-outs are kept for every replica; unset,
    # they are kept in this process only (one replica)
    session_store: str | None = None
    # the durable capacity history: namespace/prefix of its day ConfigMaps; "" puts them in
    # event_namespace with the prefix extres-history; "off" keeps none
    history_store: str = ""
    history_days: int = 31  # days of capacity history kept
    replicas: int = 1  # how many copies serve this dashboard (the chart sets it)
    threads: int = 8  # gunicorn's threads in the one worker; changes may hold all but two of them
    start_watches: bool = True  # start the cache's watches on the first request
    extra: Mapping[str, Any] = field(default_factory=dict)

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
