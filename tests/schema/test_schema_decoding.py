"""The slim decoders against the API's own JSON schema, for each tested Kubernetes version.

Objects are generated from the schemas that ``kubernetes-validate`` ships (made from the API
server's OpenAPI) with ``hypothesis-jsonschema``: sparse ones, with ``null`` wherever the schema
allows it, and full ones, with every optional field present (every volume source in one volume,
every probe, every status field). Each must decode, and its view must equal a plain dict reading
of the fields the dashboard uses. The struct field names are checked against the schema's."""

from __future__ import annotations

import contextlib
import json
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

import kubernetes_validate
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from app.domain.accounting import Part, Reported, extended_only, pod_request_amounts
from app.domain.device_cel import Version
from app.domain.quantity import QuantityError, parse_quantity, to_amount
from app.kube.wire.decoders import Node, OwnerRef, Pod, Quota
from app.kube.wire.dra import MAX_DEVICES, DeviceClass, ResourceClaim, ResourceSlice
from app.kube.wire.projections import workload
from app.kube.wire.reading import NODES, PODS, QUOTAS, READERS

SCHEMAS = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
VERSIONS = ("1.35.0", "1.37.0")  # the Kubernetes minors the suite runs against
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
# Names a resource map may hold: native, extended (device plugin or not) and odd ones.
QUANTITY_SCHEMA = {"type": "string", "pattern": r"^(0|[1-9][0-9]{0,3})(m|k|Ki|Mi|Gi)?\Z"}
RESOURCE_NAMES = ["cpu", "memory", "pods", "hugepages-2Mi", "example.com/dongle", "nvidia.com/gpu"]


@cache
def definitions(version: str) -> dict[str, Any]:
    path = SCHEMAS / f"v{version}-local-strict" / "_definitions.json"
    defs: dict[str, Any] = json.loads(path.read_text())["$defs"]
    # A quantity is a string of the quantity syntax; generate valid ones (a subset of the schema).
    defs[QUANTITY] = QUANTITY_SCHEMA
    return defs


def resolved(version: str, name: str, full: bool) -> dict[str, Any]:
    """The schema of ``name`` with every reference inlined. ``full``: every property required and
    non-null, each array of one item and each map of one or two entries."""
    defs = definitions(version)

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return walk(defs[node["$ref"].rsplit("/", 1)[1]])
        out = {k: walk(v) for k, v in node.items() if k not in ("description", "$schema", "$id")}
        # The schema lets array items and map values be null too; Go's slices of structs and maps
        # of strings cannot hold a null, so the API server never sends one.
        for part in ("items", "additionalProperties"):
            if isinstance(out.get(part), dict):
                out[part] = not_null(out[part])
        extra = out.get("additionalProperties")
        if extra == QUANTITY_SCHEMA:  # a map of resource names to quantities
            out["propertyNames"] = {"enum": RESOURCE_NAMES}
        if full:
            out = not_null(out)
            if "properties" in out:
                out["required"] = sorted(out["properties"])
            if out.get("type") == "array":
                out["minItems"] = out["maxItems"] = 1
            if out.get("type") == "object" and isinstance(extra, dict):
                out["minProperties"], out["maxProperties"] = 1, 2
        return out

    root = walk({"$ref": f"#/{name}"})
    root["type"] = "object"  # an object itself is never null
    return root


def not_null(schema: dict[str, Any]) -> dict[str, Any]:
    kinds = schema.get("type")
    if isinstance(kinds, list) and "null" in kinds and len(kinds) > 1:
        kinds = [k for k in kinds if k != "null"]
        return {**schema, "type": kinds[0] if len(kinds) == 1 else kinds}
    return schema


TYPES = {
    "pod": "io.k8s.api.core.v1.Pod",
    "node": "io.k8s.api.core.v1.Node",
    "deviceclass": "io.k8s.api.resource.v1.DeviceClass",
    "resourceslice": "io.k8s.api.resource.v1.ResourceSlice",
    "resourceclaim": "io.k8s.api.resource.v1.ResourceClaim",
}


@cache
def objects(version: str, kind: str, full: bool) -> st.SearchStrategy[Any]:
    return from_schema(resolved(version, TYPES[kind], full))


# ---- a plain dict reading of what the dashboard uses ------------------------------------------
def amounts(raw: dict[str, Any] | None) -> dict[str, int]:
    out = {}
    for name, value in (raw or {}).items():
        with contextlib.suppress(QuantityError):
            out[name] = to_amount(name, str(value))
    return out


def expected_pod(obj: dict[str, Any]) -> dict[str, Any]:
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    containers = spec.get("containers") or []
    init = spec.get("initContainers") or []

    def res(c: dict[str, Any]) -> tuple[Any, Any]:
        r = c.get("resources") or {}
        return (r.get("requests"), r.get("limits"))

    reported = {}
    if spec.get("nodeName"):
        for cs in [*(status.get("containerStatuses") or []), *(status.get("initContainerStatuses") or [])]:
            if cs.get("name") is not None:
                r = cs.get("resources")
                actuated = r.get("requests") if r is not None else None
                reported[cs["name"]] = Reported(cs.get("allocatedResources"), actuated, r is not None)
    parts = [Part(res(c), reported=reported.get(c.get("name") or "")) for c in containers]
    parts += [
        Part(res(c), c.get("restartPolicy") == "Always", True, reported.get(c.get("name") or ""))
        for c in init
    ]
    infeasible = any(
        (c.get("type"), c.get("reason")) == ("PodResizePending", "Infeasible")
        for c in status.get("conditions") or []
    )
    try:
        requests = pod_request_amounts(
            parts, spec.get("overhead"), (spec.get("resources") or {}).get("requests"), infeasible=infeasible
        )
    except QuantityError:
        requests = {}
    unschedulable = None
    if not spec.get("nodeName"):
        for cond in status.get("conditions") or []:
            if (cond.get("type"), cond.get("status"), cond.get("reason")) == (
                "PodScheduled",
                "False",
                "Unschedulable",
            ):
                unschedulable = cond.get("message") or ""
    ports = {
        (p["hostPort"], p.get("protocol") or "TCP", p.get("hostIP") or "")
        for c in [*(c for c in init if c.get("restartPolicy") == "Always"), *containers]
        for p in c.get("ports") or []
        if p.get("hostPort")
    }
    tolerations = [
        (t.get("key") or "", t.get("operator") or "Equal", t.get("value") or "", t.get("effect") or "")
        for t in spec.get("tolerations") or []
    ]
    node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = None
    if required is not None:
        terms = [
            [
                [(r["key"], r["operator"], r.get("values") or []) for r in t.get(part) or []]
                for part in ("matchExpressions", "matchFields")
            ]
            for t in required.get("nodeSelectorTerms") or []
        ]
    refs = [
        OwnerRef(r.get("kind"), r.get("name"), r.get("controller")) for r in meta.get("ownerReferences") or []
    ]
    return {
        "key": (meta.get("namespace") or "", meta.get("name") or ""),
        "node": spec.get("nodeName") or "",
        "phase": status.get("phase") or "Pending",
        "requests": requests,
        "extended": extended_only(requests),
        "unschedulable": unschedulable,
        "owner": workload(refs, meta.get("labels")) if extended_only(requests) else None,
        "ports": sorted(ports),
        "tolerations": tolerations,
        "terms": terms,
        "claims": any(
            v.get("persistentVolumeClaim") is not None or v.get("ephemeral") is not None
            for v in spec.get("volumes") or []
        ),
        "priority": spec.get("priority") or 0,
        "terminating": meta.get("deletionTimestamp") is not None,
    }


def actual_pod(raw: bytes) -> dict[str, Any]:
    view, _, problem = PODS.one(raw)
    assert problem is None, str(problem)
    assert view is not None
    p = view.placement
    return {
        "key": view.key,
        "node": view.node_name,
        "phase": view.phase,
        "requests": view.requests,
        "extended": view.extended_requests,
        "unschedulable": view.unschedulable,
        "owner": view.owner,
        "ports": [(h.port, h.protocol, h.ip) for h in p.host_ports],
        "tolerations": [(t.key, t.operator, t.value, t.effect) for t in p.tolerations],
        "terms": None
        if p.affinity is None
        else [
            [[(r.key, r.operator, list(r.values)) for r in part] for part in (t.expressions, t.fields)]
            for t in p.affinity
        ],
        "claims": any(reason.startswith("persistent volumes") for reason in p.unmodelled),
        "priority": view.priority,
        "terminating": view.terminating,
    }


def expected_node(obj: dict[str, Any]) -> dict[str, Any]:
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    return {
        "name": meta.get("name") or "",
        "labels": meta.get("labels") or {},
        "capacity": amounts(status.get("capacity")),
        "allocatable": amounts(status.get("allocatable")),
        "unschedulable": bool(spec.get("unschedulable")),
        "taints": [(t["key"], t.get("value") or "", t["effect"]) for t in spec.get("taints") or []],
        "ready": next(
            (
                (c.get("status") or "", c.get("reason") or "")
                for c in status.get("conditions") or []
                if c.get("type") == "Ready"
            ),
            ("", ""),
        ),
    }


def actual_node(raw: bytes) -> dict[str, Any]:
    view, _, problem = NODES.one(raw)
    assert problem is None, str(problem)
    assert view is not None
    return {
        "name": view.name,
        "labels": view.labels,
        "capacity": view.capacity,
        "allocatable": view.allocatable,
        "unschedulable": view.unschedulable,
        "taints": [(t.key, t.value, t.effect) for t in view.taints],
        "ready": (view.ready, view.ready_reason),
    }


def expected_class(obj: dict[str, Any]) -> dict[str, Any]:
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    return {
        "name": meta.get("name") or "",
        "created": meta.get("creationTimestamp") or "",
        "extended": spec.get("extendedResourceName") or "",
        "expressions": [
            s["cel"].get("expression") or "" for s in spec.get("selectors") or [] if s.get("cel") is not None
        ],
    }


def actual_class(raw: bytes) -> dict[str, Any]:
    view, _, problem = READERS["deviceclasses"].one(raw)
    assert problem is None and view is not None, str(problem)
    c = view.facts
    return {
        "name": c.name,
        "created": c.created,
        "extended": c.extended_name,
        "expressions": list(c.expressions),
    }


def attribute(a: dict[str, Any]) -> Any:
    for kind in ("bool", "int", "string"):
        if a.get(kind) is not None:
            return a[kind]
    return ("version", a.get("version") or "")


def expected_slice(obj: dict[str, Any]) -> dict[str, Any]:
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    pool = spec.get("pool") or {}
    return {
        "name": meta.get("name") or "",
        "driver": spec.get("driver") or "",
        "pool": (pool.get("name") or "", pool.get("generation") or 0, pool.get("resourceSliceCount", 1)),
        "node": spec.get("nodeName") or "",
        "devices": [
            {
                "name": d.get("name") or "",
                "attributes": sorted((k, attribute(v)) for k, v in (d.get("attributes") or {}).items()),
                "capacity": sorted((k, str(v.get("value"))) for k, v in (d.get("capacity") or {}).items()),
                "taints": [
                    f"{t['key']}={t['value']}:{t['effect']}"
                    if t.get("value")
                    else f"{t['key']}:{t['effect']}"
                    for t in d.get("taints") or []
                ],
                "shared": bool(d.get("allowMultipleAllocations")),
                "consumes": [
                    ((u.get("counterSet") or "", k), counter_amount(c.get("value")))
                    for u in d.get("consumesCounters") or []
                    for k, c in sorted((u.get("counters") or {}).items())
                ],
            }
            for d in (spec.get("devices") or [])[:MAX_DEVICES]
        ],
        "counters": [
            ((cs.get("name") or "", k), counter_amount(c.get("value")))
            for cs in spec.get("sharedCounters") or []
            for k, c in sorted((cs.get("counters") or {}).items())
        ],
    }


def counter_amount(value: Any) -> Decimal:
    """A counter's amount as a quantity; one that is not a quantity never fits (infinite)."""
    try:
        return parse_quantity(str(value if value is not None else 0))
    except QuantityError:
        return Decimal("Infinity")


def actual_slice(raw: bytes) -> dict[str, Any]:
    view, _, problem = READERS["resourceslices"].one(raw)
    assert problem is None and view is not None, str(problem)
    s = view.facts
    return {
        "name": s.name,
        "driver": s.driver,
        "pool": (s.pool, s.generation, s.slice_count),
        "node": s.node,
        "devices": [
            {
                "name": d.name,
                "attributes": [
                    (k, ("version", str(v)) if isinstance(v, Version) else v) for k, v in d.device.attributes
                ],
                "capacity": list(d.device.capacity),
                "taints": list(d.taints),
                "shared": d.shared,
                "consumes": list(d.consumes),
            }
            for d in s.devices
        ],
        "counters": list(s.counters),
    }


def expected_claim(obj: dict[str, Any]) -> dict[str, Any]:
    meta, status = obj.get("metadata") or {}, obj.get("status") or {}
    devices = (status.get("allocation") or {}).get("devices") or {}
    return {
        "key": (meta.get("namespace") or "", meta.get("name") or ""),
        "held": [
            (r.get("driver") or "", r.get("pool") or "", r.get("device") or "")
            for r in devices.get("results") or []
            if not r.get("adminAccess")
        ],
        "pods": [c.get("name") or "" for c in status.get("reservedFor") or [] if c.get("resource") == "pods"],
        "extended": (meta.get("annotations") or {}).get("resource.kubernetes.io/extended-resource-claim")
        == "true",
    }


def actual_claim(raw: bytes) -> dict[str, Any]:
    view, _, problem = READERS["resourceclaims"].one(raw)
    assert problem is None and view is not None, str(problem)
    return {"key": view.key, "held": list(view.held), "pods": list(view.pods), "extended": view.extended}


READ = {
    "pod": (expected_pod, actual_pod),
    "node": (expected_node, actual_node),
    "deviceclass": (expected_class, actual_class),
    "resourceslice": (expected_slice, actual_slice),
    "resourceclaim": (expected_claim, actual_claim),
}
PAGES = {"pod": "pods", "node": "nodes", "deviceclass": "deviceclasses"}
PAGES |= {"resourceslice": "resourceslices", "resourceclaim": "resourceclaims"}
CASES = [(v, kind, full) for v in VERSIONS for kind in TYPES for full in (False, True)]


@pytest.mark.parametrize(("version", "kind", "full"), CASES, ids=lambda x: str(x))
def test_every_schema_valid_object_decodes_and_reads_as_a_dict_reading_does(version, kind, full):
    expected, actual = READ[kind]

    @settings(
        max_examples=4 if full else 40,
        deadline=None,
        database=None,
        derandomize=True,  # the same objects every run: CI stays reproducible
        suppress_health_check=list(HealthCheck),
    )
    @given(objects(version, kind, full))
    def check(obj: dict[str, Any]) -> None:
        raw = json.dumps(obj).encode()
        assert actual(raw) == expected(obj)
        # the same object as an item of a list page, and as one item among others
        page = READERS[PAGES[kind]].page(
            json.dumps({"metadata": {"resourceVersion": "1"}, "items": [obj, obj]}).encode()
        )
        assert (len(page.views), page.unreadable) == (2, [])

    check()


# ---- field names: the API's spelling ----------------------------------------------------------
def struct_fields(t: Any) -> list[tuple[str, Any]]:
    """(encoded name, type) of each field of a struct type."""
    info = msgspec.inspect.type_info(t)
    return [(f.encode_name, f.type) for f in info.fields]


def inner_structs(t: Any) -> list[Any]:
    """The struct types a field's type holds (through unions, lists and maps)."""
    if isinstance(t, msgspec.inspect.StructType):
        return [t.cls]
    found = []
    for attr in ("types", "item_type", "value_type"):
        inner = getattr(t, attr, None)
        for one in inner if isinstance(inner, tuple) else ([inner] if inner is not None else []):
            found.extend(inner_structs(one))
    return found


def schema_of(defs: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """Follow references, arrays and maps to the object schema a struct decodes."""
    while True:
        if "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[1]]
        elif "items" in node:
            node = node["items"]
        elif isinstance(node.get("additionalProperties"), dict) and "properties" not in node:
            node = node["additionalProperties"]
        else:
            return node


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    ("struct", "kind"),
    [
        (Pod, "io.k8s.api.core.v1.Pod"),
        (Node, "io.k8s.api.core.v1.Node"),
        (Quota, "io.k8s.api.core.v1.ResourceQuota"),
        (DeviceClass, "io.k8s.api.resource.v1.DeviceClass"),
        (ResourceSlice, "io.k8s.api.resource.v1.ResourceSlice"),
        (ResourceClaim, "io.k8s.api.resource.v1.ResourceClaim"),
    ],
)
def test_every_decoded_field_is_spelt_as_the_api_spells_it(version, struct, kind):
    defs = json.loads((SCHEMAS / f"v{version}-local-strict" / "_definitions.json").read_text())["$defs"]
    checked = 0

    def check(cls: Any, schema: dict[str, Any], path: str) -> None:
        nonlocal checked
        properties = schema_of(defs, schema).get("properties") or {}
        for name, ftype in struct_fields(cls):
            assert name in properties, f"{path}.{name} is not a field of the API ({sorted(properties)})"
            checked += 1
            for inner in inner_structs(ftype):
                check(inner, properties[name], f"{path}.{name}")

    check(struct, defs[kind], "$")
    assert checked >= 10


def test_a_resource_quota_with_every_field_reads_its_extended_items():
    raw = json.dumps(
        {
            "metadata": {"name": "q", "namespace": "n"},
            "spec": {"hard": {"requests.example.com/dongle": "4", "cpu": "2"}, "scopes": ["NotTerminating"]},
            "status": {
                "hard": {"requests.example.com/dongle": "4"},
                "used": {"requests.example.com/dongle": "1"},
            },
        }
    ).encode()
    view, _, problem = QUOTAS.one(raw)
    assert problem is None and view is not None
    assert view.items == {"example.com/dongle": (4, 1)}
