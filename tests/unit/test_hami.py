"""HAMi's annotations read as HAMi writes them (app.domain.hami; Project-HAMi/HAMi @4707fb0,
pkg/device/devices.go): the node's GPUs in its JSON and its older ':'-joined form, a pod's
shares per container, the cordon list; one row per physical GPU with its pods, memory and cores;
what does not parse said, never read as 0."""

from __future__ import annotations

import json

from app.domain import hami

UUID_A = "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec"
UUID_B = "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448"


def marshal(*gpus: dict[str, object]) -> str:
    """As MarshalNodeDevices: Go's json.Marshal of DeviceInfo, omitempty (a false health left out)."""
    return json.dumps([{k: v for k, v in g.items() if v not in (0, "", False)} for g in gpus])


def encode_container(*devices: tuple[str, str, int, int]) -> str:
    """As EncodeContainerDevices: ``UUID,type,mem,cores:`` per device."""
    return "".join(f"{u},{t},{m},{c}:" for u, t, m, c in devices)


def test_the_json_register_and_the_older_joined_one_read_alike():
    a = {
        "id": UUID_A,
        "index": 0,
        "count": 10,
        "devmem": 40960,
        "devcore": 100,
        "type": "NVIDIA-A100",
        "numa": 0,
        "mode": "hami-core",
        "health": True,
    }
    b = {
        "id": UUID_B,
        "index": 1,
        "count": 10,
        "devmem": 40960,
        "devcore": 100,
        "type": "NVIDIA-A100",
        "numa": 1,
        "mode": "hami-core",
        "health": False,
    }
    from_json, problem = hami.parse_register(marshal(a, b))
    assert problem == "" and [(g.id, g.index, g.vgpus, g.memory_mib, g.healthy) for g in from_json] == [
        (UUID_A, 0, 10, 40960, True),
        (UUID_B, 1, 10, 40960, False),
    ]
    joined = (
        f"{UUID_A},10,40960,100,NVIDIA-A100,0,true,0,hami-core:"
        f"{UUID_B},10,40960,100,NVIDIA-A100,1,false,1,hami-core:"
    )
    assert hami.parse_register(joined) == (from_json, "")
    seven = f"{UUID_A},10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:"  # the oldest releases: 7 fields
    assert hami.parse_register(seven)[0][0].memory_mib == 32768


def test_what_does_not_parse_is_said_not_read_as_nothing():
    assert hami.parse_register('[{"id": 5}]')[1].startswith("hami.io/node-nvidia-register is not HAMi's JSON")
    assert "neither" in hami.parse_register("GPU-1,2,3")[1]
    assert "a GPU of 3 fields" in hami.parse_register("GPU-1,2,3:")[1]
    assert "not one in" in hami.parse_register(f"{UUID_A},ten,1,1,T,0,true:")[1]
    assert "past the" in hami.parse_register("[" + " " * 70_000 + "]")[1]
    assert "a device of 2 fields" in hami.parse_allocated("GPU-1,NVIDIA:")[1]


def test_one_row_per_physical_gpu_with_its_pods_memory_and_cores():
    gpus, _ = hami.parse_register(
        marshal(
            {
                "id": UUID_A,
                "count": 4,
                "devmem": 40960,
                "devcore": 100,
                "type": "NVIDIA-A100",
                "health": True,
            },
            {
                "id": UUID_B,
                "index": 1,
                "count": 4,
                "devmem": 40960,
                "devcore": 100,
                "type": "NVIDIA-A100",
                "health": True,
            },
        )
    )
    # two containers of one pod (';' between them), the second given parts of both GPUs
    infer = hami.parse_allocated(
        ";".join(
            [
                encode_container((UUID_A, "NVIDIA", 10240, 25)),
                encode_container((UUID_A, "NVIDIA", 10240, 25), (UUID_B, "NVIDIA", 20480, 50)),
            ]
        )
    )[0]
    train = hami.parse_allocated(
        encode_container((UUID_A, "NVIDIA", 30000, 60), ("GPU-gone", "NVIDIA", 1, 1))
    )[0]
    found = {
        r.gpu: r
        for r in hami.rows(
            "n1", gpus, hami.cordoned(f" {UUID_B}, ,"), [("ml/infer", infer), ("ml/train", train)]
        )
    }
    a, b, gone = found[UUID_A], found[UUID_B], found["GPU-gone"]
    assert (a.pods, a.memory_used_mib, a.cores_used, a.over) == (["ml/infer", "ml/train"], 50480, 110, True)
    assert a.problems == ["given more than it has"]
    assert (b.pods, b.memory_used_mib, b.cordoned, b.over) == (["ml/infer"], 20480, True, False)
    assert gone.memory_mib is None and gone.problems == ["not among the GPUs HAMi registers on this node"]
    assert len(found) == 3  # two GPUs, never "8 of 8 vGPUs"; the unknown one said apart


def test_a_pods_parts_are_held_as_the_larger_of_their_cores_and_memory_of_their_gpu():
    gpus, _ = hami.parse_register(
        marshal({"id": UUID_A, "count": 4, "devmem": 40960, "devcore": 100, "health": True})
    )
    part = lambda mem, cores, gpu=UUID_A: hami.HamiShare(gpu, "NVIDIA", mem, cores)  # noqa: E731
    assert hami.held([part(10240, 50)], gpus) == 0.5  # half its cores, a quarter of its memory
    assert hami.held([part(30720, 10)], gpus) == 0.75  # its memory
    assert hami.held([part(0, 0)], gpus) == 0.25  # neither said: one of its 4 vGPUs
    assert hami.held([part(1, 1, "GPU-unregistered")], gpus) == 0.01  # cores known, the GPU not
    assert hami.held([part(99999, 300)], gpus) == 1.0  # at most one GPU a part


def test_a_pods_ask_of_gpu_memory_and_cores_is_checked_against_each_gpus_free_part():
    gpus, _ = hami.parse_register(
        marshal(
            {"id": UUID_A, "count": 4, "devmem": 40960, "devcore": 100, "health": True},
            {"id": UUID_B, "index": 1, "count": 4, "devmem": 40960, "devcore": 100, "health": True},
        )
    )
    given = [
        ("ml/big", hami.parse_allocated(f"{UUID_A},NVIDIA,30720,50:;")[0]),
        ("ml/b", hami.parse_allocated(f"{UUID_B},NVIDIA,28672,90:;")[0]),
    ]
    rows = hami.rows("h1", gpus, frozenset(), given)
    assert hami.asks({"nvidia.com/gpu": 1, "nvidia.com/gpumem": 20480}) and not hami.asks(
        {"nvidia.com/gpu": 1}
    )
    said = hami.fit({"nvidia.com/gpu": 1, "nvidia.com/gpumem": 20480}, rows)
    most = f"12 GiB, {UUID_B[:12]}… on h1"
    assert said == f"HAMi: no node has 1 GPU with 20 GiB free (the most memory free on one GPU: {most})"
    assert hami.fit(
        {"nvidia.com/gpu": 1, "nvidia.com/gpumem": 10240, "nvidia.com/gpucores": 40}, rows
    ).startswith("HAMi: h1 has 1 GPU with that much free")  # A: 10 GiB and 50 % free
    assert "no node has 2 GPUs with 11 GiB free" in hami.fit(
        {"nvidia.com/gpu": 2, "nvidia.com/gpumem": 11264}, rows
    )
    assert "h1 has 2 GPUs" in hami.fit(
        {"nvidia.com/gpu": 2, "nvidia.com/gpumem": 10240}, rows
    )  # 10 and 12 GiB free
