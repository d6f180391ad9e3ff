"""Settings, read from environment variables prefixed ``EXTRES_``, typed and checked by msgspec
(already the app's decoder; pydantic cost the start ~0.1 s of imports in gunicorn's master,
docs/performance.md): the environment's strings and ``create_app``'s overrides go through the
same conversions (a comma-separated list, "true", "80"), and an unknown key or a wrong value
stops the start with a message naming the setting."""

from __future__ import annotations

import os
import re
import secrets
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from app.domain.device_plugins import DEFAULT_DEVICE_PLUGIN_PATTERNS
from app.domain.usage_mapping import UsageMapping
from app.settings import rules as settings_rules
from app.settings.rules import PREFIX

LISTS = (
    "previous_secret_keys",
    "device_plugin_resources",
    "trusted_proxies",
    "forwarders",
    "allowed_hosts",
    "previous_history_keys",
    "clusters_insecure",
)
OPTIONAL = (
    "kubeconfig",
    "context",
    "metrics_host",
    "session_store",
    "prometheus_url",
    "prometheus_token_file",
    "prometheus_ca_file",
    "clusters_dir",
    "clusters_namespace",
)


class Settings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Every setting, its environment variable is ``EXTRES_`` + the upper-cased name."""

    # auto: the in-cluster config when running in a pod; true/false force it
    in_cluster: Literal["auto", "true", "false"] = "auto"
    kubeconfig: str | None = None  # the kubeconfig outside a cluster; unset: $KUBECONFIG, then ~/.kube/config
    context: str | None = None  # the kubeconfig context (extres serve --context); unset: the current one
    host: str = "127.0.0.1"  # the dashboard's listen address
    port: Annotated[int, Meta(ge=1, le=65535)] = 8080  # the dashboard's listen port
    metrics_host: str | None = None  # the metrics' listen address; unset: the dashboard's
    # Prometheus metrics, on a port of their own; 0: not served
    metrics_port: Annotated[int, Meta(ge=0, le=65535)] = 9102
    secret_key: str = ""  # signs sessions and CSRF tokens; random per process when unset
    # keys replaced by secret_key, still accepted (sessions, CSRF tokens, the sealed token) while
    # sessions made with them may live: rotate by moving the old key here, remove it later
    previous_secret_keys: tuple[str, ...] = ()
    # page size of the cache's lists (where they are not streamed)
    list_page_size: Annotated[int, Meta(ge=1, le=10_000)] = 500
    # DeviceClass selectors evaluated in a child process (a crash or a runaway in the native CEL
    # runtime costs one evaluation, never the worker) or in this process
    selector_evaluator: Literal["sandboxed", "in-process"] = "sandboxed"
    # list by streaming (a watch's initial events, served since Kubernetes 1.34) where the API
    # server offers it; false (the default, measured: docs/performance.md "Pages or streamed"):
    # in pages
    stream_lists: bool = False
    # seconds a watch stays open before it is renewed
    watch_timeout: Annotated[int, Meta(ge=1, le=3600)] = 240
    request_timeout: Annotated[float, Meta(gt=0, le=300)] = 10.0  # seconds an API call may take
    # glob patterns of resources owned by device plugins (read-only here); the default lists
    # well-known plugins (nvidia.com/*, amd.com/*, gpu.intel.com/*, ...)
    device_plugin_resources: tuple[str, ...] = DEFAULT_DEVICE_PLUGIN_PATTERNS
    max_quantity: Annotated[int, Meta(ge=1, le=2**62)] = 1_000_000  # the largest device count a form accepts
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
    # addresses/CIDRs (any width) of peers believed for the one X-Forwarded-For entry they add,
    # the client's address (its sign-in and connection budgets' key), never for identity
    # headers; their connections are not limited per address. The chart sets 0.0.0.0/0,::/0
    # when its NetworkPolicy admits only the ingress controller (docs/deploy.md "Sign-in limits")
    forwarders: tuple[str, ...] = ()
    # the Host names the dashboard answers to (a page on another site whose name points at it, by
    # DNS rebinding, is refused): names, addresses, .domain or *.domain for subdomains, * for any;
    # unset: this machine's loopback names and the listen address (the chart sets the ingress host)
    allowed_hosts: tuple[str, ...] = ()
    cookie_secure: bool = True  # mark the session cookie Secure (keep it on behind TLS)
    # the largest request body accepted
    max_request_bytes: Annotated[int, Meta(ge=1024, le=16 << 20)] = 64 * 1024
    event_namespace: str = "default"  # where Events about changes are written
    # token mode: a session ends after this long unused
    session_idle_minutes: Annotated[float, Meta(gt=0, le=10_080)] = 60.0
    # token mode: a session ends this long after sign-in, used or not
    session_max_hours: Annotated[float, Meta(gt=0, le=720)] = 12.0
    # token mode: TokenReviews per minute of tokens not seen lately, from every path together
    # (sign-in form, Authorization headers); past it a new token waits, known ones pass
    token_reviews_per_minute: Annotated[int, Meta(ge=1)] = 120
    # token mode: the ConfigMap (namespace/name) where sign-outs are kept for every replica; unset,
    # they are kept in this process only (one replica)
    session_store: str | None = None
    # the durable capacity history: namespace/prefix of its 32 ConfigMaps (prefix-00 to -31);
    # "" puts them in event_namespace with the prefix extres-history; "off" keeps none
    history_store: str = ""
    history_days: Annotated[int, Meta(ge=1, le=31)] = 31  # days of capacity history kept (1 to 31)
    # seals the capacity history's records; its own key, never rotated with secret_key (the chart
    # makes one and keeps it); unset: no history is written
    history_key: str = ""
    # history keys replaced by history_key: records sealed with them are still read
    previous_history_keys: tuple[str, ...] = ()
    # What-if plans one user may ask for in a minute (each weighs every node)
    plans_per_minute: Annotated[int, Meta(ge=1)] = 30
    replicas: Annotated[int, Meta(ge=1)] = 1  # how many copies serve this dashboard (the chart sets it)
    # gunicorn's threads in the one worker; changes may hold all but two of them
    threads: Annotated[int, Meta(ge=4, le=256)] = 8
    # connections open at once (gunicorn's worker_connections); at the limit the oldest one with
    # no request in a thread is closed to make room
    connections: Annotated[int, Meta(ge=16, le=65_536)] = 1000
    # connections open at once from one client address (an IPv6 /64); the trusted proxies are not
    # limited
    connections_per_client: Annotated[int, Meta(ge=1, le=65_536)] = 64
    # MiB of requests arriving and answers leaving held at once, every connection's together
    intake_mib: Annotated[int, Meta(ge=1, le=4096)] = 32
    start_watches: bool = True  # start the cache's watches on the first request
    # compiled templates kept between starts (a directory); "" the user's cache directory
    # (~/.cache/extres/templates), "off" none: compiled at each start
    template_cache: str = ""
    # GPU usage: the Prometheus that scrapes the GPUs' exporter (http(s)://host:port); unset: no
    # usage is shown anywhere. Only the operator sets it; no user ever sends a query
    prometheus_url: str | None = None
    prometheus_token_file: str | None = None  # a bearer token for it, read again at each refresh
    prometheus_ca_file: str | None = None  # the CA that signed its certificate; unset: the system's
    # the usage mappings, a JSON list of objects (pattern, utilization, memory_used, memory_free,
    # xid_errors and the label names: docs/usage.md); unset: NVIDIA's dcgm-exporter for nvidia.com/*
    usage_mappings: str = ""
    usage_window_minutes: Annotated[int, Meta(ge=5, le=10_080)] = 60  # "busy" and "idle" are means over this
    idle_threshold_percent: Annotated[float, Meta(ge=0, le=100)] = 5.0  # idle: under this
    usage_refresh_seconds: Annotated[int, Meta(ge=10, le=3600)] = 60  # how often usage is asked for
    usage_timeout: Annotated[float, Meta(gt=0, le=60)] = 5.0  # seconds a usage query may take
    usage_max_series: Annotated[int, Meta(ge=1, le=1_000_000)] = 100_000  # devices read per mapping, at most
    # the pod label whose value is the team GPU-hours are charged to (extres_gpu_seconds_held's
    # team label); unset: no team, by namespace, queue and workload alone
    team_label: str = ""
    # GPU-hours' prices: a JSON object of a GPU model (GPU feature discovery's nvidia.com/gpu.product)
    # to its price per GPU-hour, "*" for any other, e.g. {"NVIDIA-A100-SXM4-80GB": 2.5, "*": 1};
    # unset: no cost column
    gpu_prices: str = ""
    gpu_price_currency: str = "USD"  # the prices' currency (ISO 4217), said beside every cost
    # the cluster this dashboard runs in (or its kubeconfig names): its name beside the members'
    cluster_name: str = "local"
    # a directory of member clusters' kubeconfigs, one file each, named by the cluster (the chart
    # mounts the member Secrets there); unset: this cluster alone
    clusters_dir: str | None = None
    # a namespace of this cluster whose Secrets labelled clusters_selector are member clusters (each
    # one's kubeconfig in its "kubeconfig" entry, named by its "name" entry or the Secret's name);
    # the dashboard's account lists Secrets there; unset: none read
    clusters_namespace: str | None = None
    clusters_selector: str = "extres.dev/secret-type=cluster"  # the label of member Secrets there
    # members whose kubeconfig may skip TLS verification (insecure-skip-tls-verify), by name
    clusters_insecure: tuple[str, ...] = ()
    clusters_loopback: bool = False  # members may be on this host's loopback (the test bed only)
    # the label that tells clusters apart in a Prometheus (or Thanos) they share (an external label,
    # e.g. cluster): every usage query selects this cluster's series, and members read usage there
    # too; unset: the Prometheus is this cluster's alone, members read no usage
    prometheus_cluster_label: str = ""

    @property
    def capacity_log(self) -> str | None:
        """namespace/prefix of the capacity history's ConfigMaps, or None when kept nowhere."""
        if self.history_store == "off":
            return None
        return self.history_store or f"{self.event_namespace}/extres-history"

    @property
    def prices(self) -> dict[str, float] | None:
        """GPU-hours' prices by GPU model ("*": any other); None when none are set."""
        return settings_rules.gpu_prices(self.gpu_prices) if self.gpu_prices else None

    @property
    def mappings(self) -> tuple[UsageMapping, ...]:
        """The usage mappings, each narrowed to this cluster's series where the Prometheus is shared."""
        found = settings_rules.usage_mappings(self.usage_mappings)
        label = self.prometheus_cluster_label
        return tuple(m.narrowed(label, self.cluster_name) for m in found) if label else found

    def __post_init__(self) -> None:
        """The checks one field's type does not say (app.settings.rules); each names its variable."""
        settings_rules.check(self)

    def __repr__(self) -> str:
        """Every setting but the keys' values (a repr may reach a log)."""
        shown = (
            f"{n}={'<set>' if 'key' in n and getattr(self, n) else repr(getattr(self, n))}"
            for n in self.names()
        )
        return f"Settings({', '.join(shown)})"

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """Every setting's name, in order."""
        return cls.__struct_fields__

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """The settings of ``env`` (the process's environment by default), then ``overrides``;
        raises ValueError naming the setting that is wrong. Without a secret key, one random
        key for this process (one replica only)."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {
            name: env[PREFIX + name.upper()] for name in cls.names() if PREFIX + name.upper() in env
        }
        values.update(overrides)
        settings = _checked(values)
        if not settings.secret_key:
            settings = msgspec.structs.replace(settings, secret_key=secrets.token_hex(32))
        return settings

    def replaced(self, **changes: Any) -> Settings:
        """These settings with ``changes``, checked as any settings are."""
        return _checked({**msgspec.structs.asdict(self), **changes})


WORDS = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "text"}
_BOOLS = frozenset(name for name, kind in Settings.__annotations__.items() if kind == "bool")
_BOOL_WORDS = {w: True for w in ("yes", "on", "y", "t")} | {w: False for w in ("no", "off", "n", "f")}


def _checked(values: Mapping[str, Any]) -> Settings:
    """``values`` (strings from the environment, or Python values) as Settings, converted the same
    way: a list from "a,b", None from "", a log level in any case; ValueError naming the setting."""
    prepared = dict(values)
    for name, value in values.items():
        if not isinstance(value, str):
            continue
        if name in LISTS:
            prepared[name] = tuple(p.strip() for p in value.split(",") if p.strip())
        elif name in OPTIONAL and value == "":
            prepared[name] = None
        elif name == "log_level":
            prepared[name] = value.strip().upper()
        elif name == "prometheus_url":
            prepared[name] = value.rstrip("/")
        elif name in _BOOLS:  # the words pydantic took too (msgspec takes true/false/1/0)
            prepared[name] = _BOOL_WORDS.get(value.strip().lower(), value)
    try:
        return msgspec.convert(prepared, Settings, strict=False)
    except msgspec.ValidationError as exc:
        raise ValueError(_readable(exc)) from None


def _readable(exc: msgspec.ValidationError) -> str:
    """The problem with the environment variable it concerns, in plain words: msgspec says
    "Expected `int` <= 65535 - at `$.port`"; this says "EXTRES_PORT: expected an integer <= 65535"."""
    text = str(exc)
    unknown = re.fullmatch(r"Object contains unknown field `(.+)`", text)
    if unknown:
        return f"{PREFIX}{unknown.group(1).upper()}: is not a setting"
    found = re.fullmatch(r"(.*) - at `\$\.(\w+)`", text)
    if not found:
        return text  # a check of __post_init__, which names its variables itself
    said, name = found.groups()
    for kind, word in WORDS.items():
        said = said.replace(f"Expected `{kind}`", f"expected {word}")
    if said.startswith("Invalid enum value"):  # a Literal setting: its choices, from its annotation
        choices = typing.get_args(typing.get_type_hints(Settings)[name])
        given = said.removeprefix("Invalid enum value ")
        given = given if len(given) <= 62 else f"{given[:60]}…'"  # msgspec echoes the whole value
        said = f"{given} is not one of {', '.join(choices)}"
    elif said.startswith("Expected `array`"):
        said = "expected a comma-separated list"
    return f"{PREFIX}{name.upper()}: {said.replace(', got `str`', '')}"
