"""HAMi's and KAI Scheduler's GPU sharing through a real API server: the test bed writes what
their components write (extres_demo.gpu_sharing: the register annotation and the node's vGPUs,
HAMi's allocation annotation on a pod its scheduler binds, KAI's reservation pod and fraction pods
bound by its binder; the node's status, the kubelet's part, played by hand) and kwok runs the
pods. The node page and the Devices page show one row per physical GPU with its pods."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from extres_demo import gpu_sharing
from tests.helpers import eventually
from tests.kube_helpers import create_node, ready

pytestmark = [pytest.mark.kube]


def test_hami_and_kai_shares_are_one_row_per_physical_gpu_with_their_pods(core, web, uid):
    hami, kai = f"{uid}-hami", f"{uid}-kai"
    for name, labels in ((hami, {}), (kai, {"nvidia.com/gpu.memory": "40960"})):
        create_node(core, name, {gpu_sharing.GPU: "4"}, labels={"kubernetes.io/hostname": name, **labels})
    ready(core, hami, kai)
    a, b = f"GPU-{uid[-8:]}-a", f"GPU-{uid[-8:]}-b"
    gpu_sharing.hami_node(core, hami, [a, b])  # 2 GPUs, 20 vGPUs
    gpu_sharing.hami_pod(core, f"{uid}-infer", hami, [(a, 10240, 25)])
    gpu_sharing.hami_pod(core, f"{uid}-train", hami, [(a, 10240, 25), (b, 20480, 50)])
    gpu_sharing.reservation_namespace(core)
    group = f"g{uid[-8:]}"
    gpu_sharing.kai_group(
        core, kai, group, {f"{uid}-half": {"gpu-fraction": "0.5"}, f"{uid}-ten": {"gpu-memory": "10240"}}
    )

    def hami_rows() -> dict:
        page = BeautifulSoup(web.get(f"/nodes/{hami}").get_data(as_text=True), "html.parser")
        rows = {r["data-gpu"]: r for r in page.select("#node-hami tr[data-gpu]")}
        assert len(rows[a].select('[data-field="pods"] a')) == 2
        return rows

    rows = eventually(hami_rows, timeout=30)
    assert list(rows) == [a, b]  # two GPUs, whatever the 20 vGPUs advertised
    assert rows[a].select_one('[data-field="memory"]').get_text(" ", strip=True) == "20 GiB of 40 GiB"
    assert rows[a].select_one('[data-field="vgpus"]').get_text(strip=True) == "2 of 10"
    assert rows[b].select_one('[data-field="cores"]').get_text(strip=True) == "50 % of 100 %"

    def kai_row():
        page = BeautifulSoup(web.get(f"/nodes/{kai}").get_data(as_text=True), "html.parser")
        [row] = page.select("#node-kai tr[data-group]")
        assert row.select_one('[data-field="given"]').get_text(strip=True) == "0.75 of 1 GPU"
        return row

    row = eventually(kai_row, timeout=30)  # half, and 10 of 40 GiB
    assert f"gpu-reservation-{kai}-{group}"[:63] in row.select_one('[data-field="reservation"]').get_text()

    devices = BeautifulSoup(web.get("/devices/").get_data(as_text=True), "html.parser")
    assert {r["data-gpu"] for r in devices.select("#shared-hami tr[data-gpu]")} >= {a, b}
    assert group in {r["data-group"] for r in devices.select("#shared-kai tr[data-group]")}
