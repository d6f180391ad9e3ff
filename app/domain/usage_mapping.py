"""Where GPU usage is read from (pure): a usage mapping says, per extended resource pattern, which
series tell a device's utilization, memory and last XID error, and how their labels name the
device, its node and the pod holding it. The default is NVIDIA's dcgm-exporter:
``DCGM_FI_DEV_GPU_UTIL`` (percent), ``DCGM_FI_DEV_FB_USED``/``_FREE`` (MiB),
``DCGM_FI_DEV_XID_ERRORS``, labels ``Hostname``, ``gpu``, ``UUID``, ``modelName`` and, from its
Kubernetes pod mapping, ``namespace`` and ``pod``.

Three queries a mapping per refresh, whatever the cluster's size: each device's mean utilization
over the window, and its memory used and free now, each reduced in Prometheus to the labels read
here; a fourth where the mapping names an XID metric (the code of a device's last XID error: the
highest seen within the window). Nothing asks per node or per pod (app.usage polls); the answers
are made a reading by app.domain.gpu_usage.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

Sample = tuple[str, float]  # a series' key (its KEY label) and value, as app.usage decodes them


@dataclass(frozen=True)
class UsageMapping:
    pattern: str  # extended resource names it covers (a glob)
    utilization: str  # the metric of a device's utilization, in percent
    memory_used: str = ""  # the metric of its memory used (MiB), if any
    memory_free: str = ""
    xid_errors: str = ""  # the metric of its last XID error's code (0: none), if any
    node_label: str = "Hostname"
    device_label: str = "UUID"
    index_label: str = "gpu"
    model_label: str = "modelName"
    namespace_label: str = "namespace"
    pod_label: str = "pod"
    # (label, another spelling of it): where a series has the other, it is read as the label.
    # dcgm-exporter's newer releases write "hostname"; a Prometheus that scrapes it keeping its own
    # target labels renames the exporter's "namespace" and "pod" to "exported_namespace" and
    # "exported_pod" (honor_labels: false), and those name the pod holding the GPU
    aliases: tuple[tuple[str, str], ...] = ()
    # label matchers every series must have (one cluster's, in a Prometheus several clusters share:
    # 'cluster="b"'); empty: every series
    selector: str = ""

    def narrowed(self, label: str, value: str) -> UsageMapping:
        """This mapping reading only the series whose ``label`` is ``value`` (a cluster's name, a
        DNS label: nothing to escape)."""
        return replace(self, selector=f'{label}="{value}"')

    def _series(self, metric: str) -> str:
        return f"{metric}{{{self.selector}}}" if self.selector else metric

    def covers(self, resource: str) -> bool:
        return fnmatch.fnmatchcase(resource, self.pattern)

    @property
    def labels(self) -> tuple[str, ...]:
        """The labels a device's key joins, in order (the free-form model name last)."""
        return (
            self.node_label,
            self.device_label,
            self.index_label,
            self.namespace_label,
            self.pod_label,
            self.model_label,
        )

    def utilization_query(self, window: timedelta) -> str:
        """Each device's mean utilization over ``window``, its labels joined into one (``KEY``):
        one short label a series is all that crosses the wire and is decoded."""
        minutes = max(1, int(window.total_seconds() // 60))
        expr = f"avg_over_time({self._series(self.utilization)}[{minutes}m])"
        return _keyed(self._aliased(expr), self.labels)

    def memory_query(self, metric: str) -> str:
        """Each device's memory ``metric`` now, keyed by node and device."""
        return _keyed(self._aliased(self._series(metric)), (self.node_label, self.device_label))

    def xid_query(self, window: timedelta) -> str:
        """Each device's highest XID error code within ``window``, keyed by node and device."""
        minutes = max(1, int(window.total_seconds() // 60))
        expr = self._aliased(f"max_over_time({self._series(self.xid_errors)}[{minutes}m])")
        return _keyed(expr, (self.node_label, self.device_label))

    def _aliased(self, expr: str) -> str:
        for label, other in self.aliases:
            expr = f'label_replace({expr}, "{label}", "$1", "{other}", "(.+)")'
        return expr


KEY = "extres_key"  # the one label of every answer: the labels read, joined by SEPARATOR
SEPARATOR = "|"


def _keyed(expr: str, labels: Sequence[str]) -> str:
    joined = ", ".join(f'"{label}"' for label in labels)
    return f'max by ({KEY}) (label_join({expr}, "{KEY}", "{SEPARATOR}", {joined}))'


DCGM = UsageMapping(
    "nvidia.com/*",
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_FB_FREE",
    xid_errors="DCGM_FI_DEV_XID_ERRORS",
    aliases=(("Hostname", "hostname"), ("namespace", "exported_namespace"), ("pod", "exported_pod")),
)
MAPPING_KEYS = frozenset(UsageMapping.__dataclass_fields__) - {
    "aliases",
    "selector",
}  # an operator names its labels


def mappings_from(documents: Sequence[Mapping[str, Any]]) -> tuple[UsageMapping, ...]:
    """Usage mappings from the operator's settings (a list of objects with UsageMapping's keys);
    raises ValueError naming the first wrong one."""
    out = []
    for i, doc in enumerate(documents):
        if not isinstance(doc, Mapping):
            raise ValueError(f"usage mapping {i + 1}: an object with pattern and utilization")
        unknown = set(doc) - MAPPING_KEYS
        if unknown:
            raise ValueError(f"usage mapping {i + 1}: unknown key {sorted(unknown)[0]!r}")
        if not all(isinstance(v, str) for v in doc.values()):
            raise ValueError(f"usage mapping {i + 1}: every value is a string")
        if not doc.get("pattern") or not doc.get("utilization"):
            raise ValueError(f"usage mapping {i + 1}: pattern and utilization are required")
        for key, value in doc.items():
            if key != "pattern" and value and not _metric_name(value):
                raise ValueError(f"usage mapping {i + 1}: {key} {value!r} is not a metric or label name")
        out.append(UsageMapping(**doc))
    return tuple(out)


def _metric_name(text: str) -> bool:
    """Prometheus' metric and label name syntax (ASCII letters, digits, ``_`` and ``:``)."""
    first_ok = text[0].isalpha() or text[0] in "_:"
    return text.isascii() and first_ok and all(c.isalnum() or c in "_:" for c in text)
