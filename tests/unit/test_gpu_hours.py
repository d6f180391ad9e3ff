"""GPU-hours as the cache integrates them (app.kube.state.gpu_hours), on a test clock: a node of 8
GPUs and a time-sliced node (2 GPUs x 4 replicas); pod A (team-a) holds 2 GPUs for 3 h, pod B
(team-b) 1 share for 4 h, pod C (team-b) 1 GPU for 20 minutes (between two scrapes): team-a 6.00,
team-b 1.00 + 0.33 GPU-hours. The counters' text is what Prometheus scrapes."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.registry import Collector

from app.domain.gpu_ledger import Account
from app.kube.state.store import Store
from app.metrics import gpu_hours
from tests import builders

GPU = "nvidia.com/gpu"
SLICED = {f"{GPU}.replicas": "4", f"{GPU}.count": "2", f"{GPU}.sharing-strategy": "time-slicing"}
HOUR = 3600.0


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def store_at(clock: Clock) -> Store:
    store = Store(team_label="team")
    store.gpu_hours.clock = clock
    store.apply_node(builders.node("whole", {GPU: "8"}))
    store.apply_node(builders.node("sliced", {GPU: "8"}, labels=SLICED))
    return store


def team_hours(store: Store) -> dict[str, float]:
    out: dict[str, float] = {}
    for account, seconds in store.gpu_hours.held().items():
        out[account.team] = out.get(account.team, 0) + seconds / HOUR
    return out


def gpu(name: str, node: str, n: str, team: str, **kw: object) -> dict[str, object]:
    return builders.pod(name, node, {GPU: n}, labels={"team": team, "kueue.x-k8s.io/queue-name": "q"}, **kw)


def test_the_issues_scenario_on_a_test_clock():
    clock = Clock()
    store = store_at(clock)
    store.apply_pod(gpu("a", "whole", "2", "team-a", owner=("Job", "train")))
    store.apply_pod(gpu("b", "sliced", "1", "team-b"))
    clock.now += HOUR
    store.apply_pod(gpu("c", "whole", "1", "team-b"))
    clock.now += HOUR / 3
    store.apply_pod(gpu("c", "whole", "1", "team-b", phase="Succeeded"))  # completed: its GPU back
    clock.now += 2 * HOUR - HOUR / 3
    store.apply_pod(gpu("a", "whole", "2", "team-a", owner=("Job", "train")), deleted=True)
    clock.now += HOUR
    store.apply_pod(gpu("b", "sliced", "1", "team-b"), deleted=True)
    clock.now += HOUR  # nothing held: nothing grows
    hours = team_hours(store)
    assert hours["team-a"] == pytest.approx(6.0) and hours["team-b"] == pytest.approx(1.0 + 1 / 3)
    [train] = [a for a in store.gpu_hours.held() if a.owner_name == "train"]
    assert train == Account("default", "q", "Job", "train", "team-a")


def test_a_relist_closes_the_holds_of_pods_it_no_longer_has_and_keeps_the_others():
    clock = Clock()
    store = store_at(clock)
    store.apply_pod(gpu("a", "whole", "1", "team-a"))
    store.apply_pod(gpu("b", "whole", "1", "team-b"))
    clock.now += HOUR
    index = store.objects.index
    index.drop(("default", "b"))  # gone while the watch was down
    store.replace_pods(index)
    clock.now += HOUR
    assert team_hours(store) == pytest.approx({"team-a": 2.0, "team-b": 1.0})


def test_pods_asking_for_no_gpu_and_unbound_pods_hold_nothing():
    clock = Clock()
    store = store_at(clock)
    store.apply_pod(builders.pod("d", "whole", {"example.com/dongle": "1"}))
    store.apply_pod(gpu("w", "", "1", "team-a", unschedulable="0/2 nodes are available"))
    clock.now += HOUR
    assert store.gpu_hours.held() == {}


def test_the_counters_are_exported_with_their_labels_and_grow_with_the_clock():
    clock = Clock()
    store = store_at(clock)
    store.apply_pod(gpu("a", "whole", "2", "team-a", owner=("Job", "train")))

    class Families(Collector):
        def collect(self):  # type: ignore[no-untyped-def]
            return gpu_hours.families(store)

    registry = CollectorRegistry()
    registry.register(Families())
    clock.now += 10
    first = generate_latest(registry).decode()
    clock.now += 10
    second = generate_latest(registry).decode()
    labels = 'model="",namespace="default",owner_kind="Job",owner_name="train",queue="q",team="team-a"'
    series = f"extres_gpu_seconds_held_total{{{labels}}}"
    assert f"{series} 20.0" in first and f"{series} 40.0" in second
    assert "extres_gpu_accounts_folded_total 0.0" in second


def test_a_hami_pod_holds_what_its_parts_keep_of_their_gpus_not_a_whole_gpu_per_vgpu():
    """HAMi advertises 10 vGPUs a GPU: a pod given 25 % of a 40 GiB GPU's cores and 20 GiB of its
    memory keeps half of it (its memory), not 1 GPU for its one vGPU."""
    import json

    clock = Clock()
    store = store_at(clock)
    register = json.dumps([{"id": "GPU-a", "count": 10, "devmem": 40960, "devcore": 100, "health": True}])
    store.apply_node(builders.node("h", {GPU: "10"}, annotations={"hami.io/node-nvidia-register": register}))
    pod = gpu("p", "h", "1", "team-a")
    pod["metadata"]["annotations"] = {"hami.io/vgpu-devices-allocated": "GPU-a,NVIDIA,20480,25:;"}
    store.apply_pod(pod)
    clock.now += HOUR
    assert team_hours(store) == pytest.approx({"team-a": 0.5})


def test_kai_fractions_are_charged_their_fraction_and_the_reservation_pod_nothing():
    """KAI's reservation pod holds the GPU (nvidia.com/gpu: 1) that its group's fraction pods share:
    the fractions are charged (0.5 and 0.25), the reservation pod not, the rest held idle."""
    clock = Clock()
    store = store_at(clock)
    group = {"runai-gpu-group": "g1"}
    reservation = builders.pod(
        "gpu-reservation-whole-x", "whole", {GPU: "1"}, namespace="kai-resource-reservation", labels=group
    )
    store.apply_pod(reservation)
    for name, fraction, team in (("half", "0.5", "team-a"), ("quarter", "0.25", "team-b")):
        pod = builders.pod(name, "whole", {"cpu": "1"}, labels={**group, "team": team}, owner=("Job", name))
        pod["metadata"]["annotations"] = {"gpu-fraction": fraction}
        store.apply_pod(pod)
    clock.now += HOUR
    assert team_hours(store) == pytest.approx({"team-a": 0.5, "team-b": 0.25})
    assert {(a.owner_kind, a.owner_name) for a in store.gpu_hours.held()} == {
        ("Job", "half"),
        ("Job", "quarter"),
    }
    done = builders.pod("half", "whole", {"cpu": "1"}, labels={**group, "team": "team-a"}, phase="Succeeded")
    done["metadata"]["annotations"] = {"gpu-fraction": "0.5"}
    store.apply_pod(done)  # completed: its fraction back
    clock.now += HOUR
    assert team_hours(store) == pytest.approx({"team-a": 0.5, "team-b": 0.5})


def test_a_relist_closes_the_hold_of_a_pod_that_completed_meanwhile():
    clock = Clock()
    store = store_at(clock)
    store.apply_pod(gpu("a", "whole", "1", "team-a"))
    clock.now += HOUR
    index = store.objects.index
    index.put(
        store.objects.index.pods[("default", "a")].__class__.from_json(
            gpu("a", "whole", "1", "team-a", phase="Succeeded")
        )
    )
    store.replace_pods(index)
    clock.now += HOUR
    assert team_hours(store) == pytest.approx({"team-a": 1.0})


def test_a_share_of_a_gpu_dra_shares_is_charged_its_part_not_a_whole_gpu():
    """nvidia.com/gpu served by DRA from GPUs several claims share, 4 shares each (as NVIDIA's DRA
    driver names its class's extended resource): a pod holding one share holds a quarter GPU."""
    from decimal import Decimal

    from app.domain.device_cel import Device
    from app.domain.devices import ClassFacts, DeviceFacts, SliceFacts
    from app.domain.shares import Capacity
    from app.kube.wire.dra import ClassView, SliceView

    clock = Clock()
    store = store_at(clock)
    store.apply_node(builders.node("d", {}))
    memory = (Capacity("memory", Decimal(40), Decimal(10)),)
    made = tuple(
        DeviceFacts(f"gpu-{i}", Device("gpu.nvidia.com", (), ()), shared=True, capacities=memory)
        for i in range(2)
    )
    store.devices.put("deviceclasses", ClassView(ClassFacts("gpu.nvidia.com", "t", GPU)))
    store.devices.put("resourceslices", SliceView(SliceFacts("d-s", "gpu.nvidia.com", "d", 1, 1, "d", made)))
    store.apply_pod(gpu("p", "d", "1", "team-a"))
    clock.now += HOUR
    assert team_hours(store) == pytest.approx({"team-a": 0.25})
