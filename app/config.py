"""Settings, read from environment variables prefixed ``EXTRES_``, typed and checked by pydantic:
the environment's strings and ``create_app``'s overrides go through the same conversions (a
comma-separated list, "true", "80"), and an unknown key or a wrong value stops the start with a
message naming the setting."""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from app.domain.device_plugins import DEFAULT_DEVICE_PLUGIN_PATTERNS
from app.domain.gpu_usage import DCGM, UsageMapping, mappings_from

PREFIX = "EXTRES_"
AUTH_MODES = ("service-account", "impersonate", "token")
LISTS = ("previous_secret_keys", "device_plugin_resources", "trusted_proxies", "previous_history_keys")
OPTIONAL = (
    "kubeconfig",
    "context",
    "metrics_host",
    "session_store",
    "prometheus_url",
    "prometheus_token_file",
    "prometheus_ca_file",
)
MIN_KEY_BYTES = 32


class Settings(BaseModel):
    """Every setting, its environment variable is ``EXTRES_`` + the upper-cased name."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # auto: the in-cluster config when running in a pod; true/false force it
    in_cluster: Literal["auto", "true", "false"] = "auto"
    kubeconfig: str | None = None  # the kubeconfig outside a cluster; unset: $KUBECONFIG, then ~/.kube/config
    context: str | None = None  # the kubeconfig context (extres serve --context); unset: the current one
    host: str = "127.0.0.1"  # the dashboard's listen address
    port: int = Field(8080, ge=1, le=65535)  # the dashboard's listen port
    metrics_host: str | None = None  # the metrics' listen address; unset: the dashboard's
    # Prometheus metrics, on a port of their own; 0: not served
    metrics_port: int = Field(9102, ge=0, le=65535)
    secret_key: str = ""  # signs sessions and CSRF tokens; random per process when unset
    # keys replaced by secret_key, still accepted (sessions, CSRF tokens, the sealed token) while
    # sessions made with them may live: rotate by moving the old key here, remove it later
    previous_secret_keys: tuple[str, ...] = ()
    # page size of the cache's lists (where they are not streamed)
    list_page_size: int = Field(500, ge=1, le=10_000)
    # list by streaming (a watch's initial events, served since Kubernetes 1.34) where the API
    # server offers it; false (the default, measured: docs/performance.md "Pages or streamed"):
    # in pages
    stream_lists: bool = False
    watch_timeout: int = Field(240, ge=1, le=3600)  # seconds a watch stays open before it is renewed
    request_timeout: float = Field(10.0, gt=0, le=300, allow_inf_nan=False)  # seconds an API call may take
    # glob patterns of resources owned by device plugins (read-only here); the default lists
    # well-known plugins (nvidia.com/*, amd.com/*, gpu.intel.com/*, ...)
    device_plugin_resources: tuple[str, ...] = DEFAULT_DEVICE_PLUGIN_PATTERNS
    max_quantity: int = Field(1_000_000, ge=1, le=2**62)  # the largest device count a form accepts
    # DEBUG, INFO, WARNING or ERROR; every line is JSON
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    access_log: bool = False  # a log line per request (every poll of every open tab): off unless set
    # service-account | impersonate | token
    auth_mode: Literal["service-account", "impersonate", "token"] = "service-account"
    read_only: bool = True  # service-account mode: no write route at all unless set to false
    user_header: str = "X-Forwarded-User"  # impersonate mode: set by the trusted auth proxy
    groups_header: str = "X-Forwarded-Groups"  # impersonate mode: the user's groups, comma-separated
    # addresses/CIDRs (none wider than /24, /120 for IPv6) of the proxies trusted to set the
    # identity headers, X-Forwarded-For and X-Request-Id
    trusted_proxies: tuple[str, ...] = ()
    cookie_secure: bool = True  # mark the session cookie Secure (keep it on behind TLS)
    max_request_bytes: int = Field(64 * 1024, ge=1024, le=16 << 20)  # the largest request body accepted
    event_namespace: str = "default"  # where Events about changes are written
    # token mode: a session ends after this long unused
    session_idle_minutes: float = Field(60.0, gt=0, le=10_080, allow_inf_nan=False)
    # token mode: a session ends this long after sign-in, used or not
    session_max_hours: float = Field(12.0, gt=0, le=720, allow_inf_nan=False)
    # token mode: TokenReviews per minute of tokens not seen lately, from every path together
    # (sign-in form, Authorization headers); past it a new token waits, known ones pass
    token_reviews_per_minute: int = Field(120, ge=1)
    # token mode: the ConfigMap (namespace/name) where sign-outs are kept for every replica; unset,
    # they are kept in this process only (one replica)
    session_store: str | None = None
    # the durable capacity history: namespace/prefix of its 32 ConfigMaps (prefix-00 to -31);
    # "" puts them in event_namespace with the prefix extres-history; "off" keeps none
    history_store: str = ""
    history_days: int = Field(31, ge=1, le=31)  # days of capacity history kept (1 to 31)
    # seals the capacity history's records; its own key, never rotated with secret_key (the chart
    # makes one and keeps it); unset: no history is written
    history_key: str = ""
    # history keys replaced by history_key: records sealed with them are still read
    previous_history_keys: tuple[str, ...] = ()
    # What-if plans one user may ask for in a minute (each weighs every node)
    plans_per_minute: int = Field(30, ge=1)
    replicas: int = Field(1, ge=1)  # how many copies serve this dashboard (the chart sets it)
    # gunicorn's threads in the one worker; changes may hold all but two of them
    threads: int = Field(8, ge=4, le=256)
    start_watches: bool = True  # start the cache's watches on the first request
    # GPU usage: the Prometheus that scrapes the GPUs' exporter (http(s)://host:port); unset: no
    # usage is shown anywhere. Only the operator sets it; no user ever sends a query
    prometheus_url: str | None = None
    prometheus_token_file: str | None = None  # a bearer token for it, read again at each refresh
    prometheus_ca_file: str | None = None  # the CA that signed its certificate; unset: the system's
    # the usage mappings, a JSON list of objects (pattern, utilization, memory_used, memory_free
    # and the label names: docs/usage.md); unset: NVIDIA's dcgm-exporter for nvidia.com/*
    usage_mappings: str = ""
    usage_window_minutes: int = Field(60, ge=5, le=10_080)  # "busy" and "idle" are means over this
    idle_threshold_percent: float = Field(5.0, ge=0, le=100, allow_inf_nan=False)  # idle: under this
    usage_refresh_seconds: int = Field(60, ge=10, le=3600)  # how often usage is asked for
    usage_timeout: float = Field(5.0, gt=0, le=60, allow_inf_nan=False)  # seconds a usage query may take
    usage_max_series: int = Field(100_000, ge=1, le=1_000_000)  # devices read per mapping, at most

    @property
    def capacity_log(self) -> str | None:
        """namespace/prefix of the capacity history's ConfigMaps, or None when kept nowhere."""
        if self.history_store == "off":
            return None
        return self.history_store or f"{self.event_namespace}/extres-history"

    @field_validator(*LISTS, mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        """``a,b`` (as an environment variable holds a list) or a list."""
        if isinstance(value, str):
            return tuple(p.strip() for p in value.split(",") if p.strip())
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("secret_key", "history_key")
    @classmethod
    def _long_enough(cls, value: str) -> str:
        """A key signs sessions, CSRF tokens or history records: a short one can be guessed."""
        if value and len(value.encode()) < MIN_KEY_BYTES:
            raise ValueError(f"must be at least {MIN_KEY_BYTES} bytes (e.g. openssl rand -hex 32), or unset")
        return value

    @field_validator(*OPTIONAL, mode="before")
    @classmethod
    def _empty_is_unset(cls, value: Any) -> Any:
        return None if value == "" else value

    @field_validator("trusted_proxies")
    @classmethod
    def _narrow(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for entry in value:
            _check_proxy(entry)
        return value

    @field_validator("usage_mappings")
    @classmethod
    def _mappings(cls, value: str) -> str:
        usage_mappings(value)  # raises ValueError naming what is wrong
        return value

    @field_validator("prometheus_url")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https://, not {value[:60]!r}")
        return value.rstrip("/") if value else value

    @property
    def mappings(self) -> tuple[UsageMapping, ...]:
        return usage_mappings(self.usage_mappings)

    @model_validator(mode="after")
    def _coherent(self) -> Settings:
        if self.history_store not in ("", "off") and self.history_store.count("/") != 1:
            raise ValueError(
                f"{PREFIX}HISTORY_STORE must be namespace/prefix or off, not {self.history_store!r}"
            )
        if self.session_store is not None and self.session_store.count("/") != 1:
            raise ValueError(f"{PREFIX}SESSION_STORE must be namespace/name, not {self.session_store!r}")
        if self.auth_mode == "token" and self.replicas > 1 and not self.session_store:
            raise ValueError(
                f"{PREFIX}SESSION_STORE must be set when {PREFIX}REPLICAS is {self.replicas} in token "
                "mode: a sign-out must reach every replica (the chart sets it)"
            )
        if not self.secret_key and self.replicas > 1:
            raise ValueError(
                f"{PREFIX}SECRET_KEY must be set when {PREFIX}REPLICAS is {self.replicas}: every "
                "replica must sign sessions and CSRF tokens with the same key (the chart keeps one in a "
                "Secret)"
            )
        return self

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """The settings of ``env`` (the process's environment by default), then ``overrides``;
        raises ValueError naming the setting that is wrong. Without a secret key, one random
        key for this process (one replica only)."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {
            name: env[PREFIX + name.upper()] for name in cls.model_fields if PREFIX + name.upper() in env
        }
        values.update(overrides)
        try:
            settings = cls(**values)
        except ValidationError as exc:
            raise ValueError(_readable(exc)) from None
        if not settings.secret_key:
            settings = settings.model_copy(update={"secret_key": secrets.token_hex(32)})
        return settings

    def replaced(self, **changes: Any) -> Settings:
        """These settings with ``changes``, checked as any settings are."""
        try:
            return type(self)(**{**self.model_dump(), **changes})
        except ValidationError as exc:
            raise ValueError(_readable(exc)) from None


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


def _readable(exc: ValidationError) -> str:
    """Each problem with the environment variable it concerns, in pydantic's words."""
    parts = []
    for err in exc.errors():
        where = f"{PREFIX}{str(err['loc'][0]).upper()}" if err["loc"] else ""
        message = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "is not a setting"
        parts.append(f"{where}: {message}" if where and not message.startswith(where) else message)
    return "; ".join(parts)


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
