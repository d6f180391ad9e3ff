"""DRA at the envelope: 5,000 nodes with 8 devices each in ResourceSlices, one DeviceClass
serving ``example.com/gpu`` (with a CEL selector), against a kube-apiserver of its own.

    python bench/dra_bench.py                 # 5,000 nodes x 8 devices, 200 requests a page
    python bench/dra_bench.py --nodes 500 --requests 50
    python bench/dra_bench.py --hostile       # and a DeviceClass whose selector is past the budget
    python bench/dra_bench.py --shared        # each GPU shared (consumable capacity), 4 claims each

Prints: the cache's RSS growth while it lists and projects the DRA objects, per device; the time
to sync them; then p50/p95 of the overview, its fragment and a node page, memoised and right
after a claim event (one device of one node allocated: that node's row, and only it, is
rebuilt), against the same pages with no DRA objects at all (the baseline: the ratio is printed).
Targets: pages p95 < 25 ms after an event. ``--hostile`` adds a second DeviceClass whose
selector the API server accepts (27,000 iterations) and the CEL runtime's budget stops, and gives
every device a serial number, so no two devices share an evaluation: pages stay < 100 ms.
``--shared`` publishes every GPU as one several claims may share (``allowMultipleAllocations``, a
memory capacity a share takes 20 of 80 GiB of), each held by 4 claims' shares (put in the store
as the watch would: 160,000 claims at 5,000 nodes), and the event is a fifth share on a GPU.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubernetes import client  # noqa: E402

from app import create_app  # noqa: E402
from app.domain import device_cel  # noqa: E402
from app.kube.api.client import ClusterConfig, api_client, load_configuration  # noqa: E402
from app.kube.state.sizes import deep_size  # noqa: E402
from app.kube.wire.dra import ClaimView  # noqa: E402
from app.web.process import of as process_of  # noqa: E402
from bench.cache_bench import seed_nodes  # noqa: E402
from extres_demo import testenv  # noqa: E402

DRIVER, R, DEVICES = "gpu.example.com", "example.com/gpu", 8


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


NUMBERS = ",".join(str(i) for i in range(30))
HOSTILE = f"[{NUMBERS}].all(x, [{NUMBERS}].all(y, [{NUMBERS}].all(z, x + y + z >= 0)))"


SHARE = 20 << 30  # what a share takes of a shared GPU's 80 GiB (4 shares a GPU)


def shared_claims(nodes: int, per_device: int = 4) -> list[ClaimView]:
    """Every GPU's shares, ``per_device`` claims each, as the scheduler writes them."""
    return [
        ClaimView(
            "default",
            f"share-{i}-{k}-{c}",
            ((DRIVER, f"n{i:05d}", f"gpu-{k}"),),
            (f"pod-{i}-{k}-{c}",),
            True,
            "",
            (((DRIVER, f"n{i:05d}", f"gpu-{k}"), (("memory", Decimal(SHARE)),)),),
        )
        for i in range(nodes)
        for k in range(DEVICES)
        for c in range(per_device)
    ]


def seed_slices(api: client.ApiClient, nodes: int, hostile: bool = False, shared: bool = False) -> None:
    dra = client.ResourceV1Api(api)
    if hostile:
        dra.create_device_class(
            {
                "metadata": {"name": "hostile"},
                "spec": {
                    "extendedResourceName": "example.com/hostile",
                    "selectors": [{"cel": {"expression": HOSTILE}}],
                },
            }
        )
    dra.create_device_class(
        {
            "metadata": {"name": "gpus"},
            "spec": {
                "extendedResourceName": R,
                "selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "h100"'}}],
            },
        }
    )

    def one(i: int) -> None:
        node = f"n{i:05d}"
        devices = [
            {
                "name": f"gpu-{k}",
                "attributes": {
                    "model": {"string": "h100"},
                    "index": {"int": k},
                    "numa": {"int": k // 4},
                    **({"serial": {"int": i * DEVICES + k}} if hostile else {}),
                },
                "capacity": {
                    "memory": {"value": "80Gi", **({"requestPolicy": {"default": "20Gi"}} if shared else {})}
                },
                **({"allowMultipleAllocations": True} if shared else {}),
            }
            for k in range(DEVICES)
        ]
        spec = {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
        }
        dra.create_resource_slice(
            {"metadata": {"name": f"{node}-gpu"}, "spec": {**spec, "devices": devices}},
            _preload_content=False,
        )

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(one, range(nodes)))


def pages(app, nodes: int, requests: int, event) -> dict[str, tuple[float, float]]:
    web = app.test_client()
    fragment = {"HX-Request": "true", "HX-Target": "grid"}
    out = {}
    for name, path, headers in (
        ("overview", "/", {}),
        ("fragment", "/?q=n0", fragment),
        ("node page", f"/nodes/n{nodes // 2:05d}", {}),
    ):
        for label, before in ((name, None), (f"{name}, changed", event)):
            times = []
            for _ in range(requests):
                if before is not None:
                    before()
                t0 = time.perf_counter()
                resp = web.get(path, headers=headers)
                times.append(time.perf_counter() - t0)
                assert resp.status_code == 200, (path, resp.status_code)
            out[label] = (statistics.median(times), statistics.quantiles(times, n=20)[18])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--hostile", action="store_true")
    ap.add_argument("--shared", action="store_true")
    args = ap.parse_args()
    plane = testenv.start(Path(tempfile.mkdtemp(prefix="extres-dra-")), bare=True)
    try:
        api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
        api.configuration.connection_pool_maxsize = 32
        seed_nodes(client.CoreV1Api(api), args.nodes, {})
        config = {"kubeconfig": str(plane.kubeconfig), "in_cluster": "false", "cookie_secure": False}
        baseline_app = create_app(config)
        state = process_of(baseline_app).local
        state.start()  # as the served worker does (reading the runtime starts nothing)
        assert state.cluster.cache.wait_synced(600)
        churn = iter(range(10**9))

        def node_event(store=state.cluster.store) -> None:
            k = next(churn)
            store.apply_node(
                {
                    "metadata": {"name": f"n{k * 7 % args.nodes:05d}", "resourceVersion": str(10**9 + k),
                                 "labels": {"zone": f"z{k % 3}", "touched": str(k)}},
                    "status": {"capacity": {"cpu": "64"}, "allocatable": {"cpu": "64"}},
                }
            )  # fmt: skip

        baseline = pages(baseline_app, args.nodes, args.requests, node_event)
        state.stop()

        t0 = time.perf_counter()
        seed_slices(api, args.nodes, args.hostile, args.shared)
        print(f"seeded {args.nodes} ResourceSlices of {DEVICES} devices in {time.perf_counter() - t0:.0f}s")
        before = rss_kib()
        app = create_app(config)
        state = process_of(app).local
        t0 = time.perf_counter()
        state.start()  # as the served worker does
        store = state.cluster.store
        assert state.cluster.cache.wait_synced(600)
        want = args.nodes
        while store.devices.read(lambda d: len(d.slices)) < want and time.perf_counter() - t0 < 600:
            time.sleep(0.05)
        synced = time.perf_counter() - t0
        if args.shared:  # each GPU held by 4 shares, as the watch would bring the claims
            store.devices.replace("resourceclaims", shared_claims(args.nodes))
        rows = store.overview_rows()[0]  # every node's DRA usage computed (CEL evaluated)
        computed = time.perf_counter() - t0
        grown = rss_kib() - before
        devices = args.nodes * DEVICES
        dra_rows = sum(1 for r in rows if R in r.usage)
        retained = store.devices.read(lambda d: deep_size(d.slices, set()))
        print(
            f"DRA sync: {want} slices, {devices} devices in {synced:.1f}s; rows with DRA usage after "
            f"{computed:.1f}s: {dra_rows}"
        )
        print(
            f"the slices as kept: {retained / 1024 / 1024:.1f} MiB = {retained / devices:.0f} B per device; "
            f"RSS growth of the second app (nodes and devices; the first app's freed memory reused): "
            f"{grown / 1024:.1f} MiB"
        )

        def claim_event() -> None:
            k = next(churn)
            node = f"n{k * 7 % args.nodes:05d}"
            held = ((DRIVER, node, f"gpu-{k % DEVICES}"),)
            shares = ((held[0], (("memory", Decimal(SHARE)),)),) if args.shared else ()
            view = ClaimView("default", f"claim-{k}", held, (f"pod-{k}",), True, "", shares)
            store.devices.put("resourceclaims", view)

        with_dra = pages(app, args.nodes, args.requests, claim_event)
        print(f"command: python bench/dra_bench.py {' '.join(sys.argv[1:])}")
        if args.hostile:
            print(f"with the hostile class: {device_cel.TOO_COSTLY.count} evaluations stopped by the budget")
        print(
            f"{args.nodes} nodes x {DEVICES} devices; p50 / p95 in ms; baseline: no DRA objects, a node event"
        )
        for name, (p50, p95) in with_dra.items():
            b95 = baseline[name][1]
            ratio = p95 / b95
            times = f"p50 {p50 * 1e3:6.1f}  p95 {p95 * 1e3:6.1f}"
            print(f"{name:22s} {times}   baseline p95 {b95 * 1e3:6.1f} = {ratio:.2f}x")
        state.stop()
        api.close()
    finally:
        plane.stop()


if __name__ == "__main__":
    main()
