"""KAI Scheduler's GPU fractions read as KAI writes them (app.domain.kai; NVIDIA/KAI-Scheduler
@72de64f): a fraction or memory per pod, for one or more GPUs; a group per physical GPU with its
reservation pod; what does not parse said."""

from __future__ import annotations

import pytest

from app.domain import kai


def pod(key: str, labels: dict[str, str], **annotations: str) -> kai.KaiPod:
    return kai.KaiPod(key, key.split("/")[0], labels, kai.asked(annotations))


def test_a_fraction_or_memory_for_one_or_more_gpus():
    assert kai.asked({}) is None
    half = kai.asked({"gpu-fraction": "0.5"})
    assert half == kai.Asked(0.5, None, 1) and kai.held(half, 40960) == 0.5
    two = kai.asked({"gpu-fraction": "0.25", "gpu-fraction-num-devices": "2"})
    assert kai.held(two, None) == 0.5
    memory = kai.asked({"gpu-memory": "10240"})
    assert kai.held(memory, 40960) == 0.25 and kai.held(memory, None) is None  # the GPU's memory not known
    assert "not a fraction" in kai.asked({"gpu-fraction": "1.5"}).problem
    assert "not a number of MiB" in kai.asked({"gpu-memory": "10Gi"}).problem


def test_a_group_per_gpu_with_its_reservation_pod_and_fractions():
    pods = [
        pod("kai-resource-reservation/gpu-reservation-n1-abcde", {"runai-gpu-group": "g1"}),
        pod("ml/a", {"runai-gpu-group": "g1"}, **{"gpu-fraction": "0.5"}),
        pod("ml/b", {"runai-gpu-group": "g1"}, **{"gpu-fraction": "0.75"}),
        pod(
            "ml/multi",
            {"runai-gpu-group/g2": "g2"},
            **{"gpu-fraction": "0.5", "gpu-fraction-num-devices": "2"},
        ),
    ]
    g1, g2 = kai.groups("n1", pods, 40960)
    assert (g1.group, g1.reservation, g1.given) == (
        "g1",
        "kai-resource-reservation/gpu-reservation-n1-abcde",
        1.25,
    )
    assert g1.problems == ["fractions of 1.25 GPUs given of one"]
    assert g2.pods == [("ml/multi", pytest.approx(0.5))] and g2.problems == [
        "no reservation pod holds its GPU"
    ]


def test_a_waiting_fraction_is_told_whether_a_gpu_group_has_room():
    pods = [
        pod("kai-resource-reservation/r1", {"runai-gpu-group": "g1"}),
        pod("ml/a", {"runai-gpu-group": "g1"}, **{"gpu-fraction": "0.75"}),
    ]
    groups = kai.groups("n1", pods, None)
    assert kai.fit(kai.asked({"gpu-fraction": "0.25"}), groups, None) == (
        "KAI: GPU group g1 on n1 has 0.25 of its GPU left, enough for its 0.25"
    )
    assert kai.fit(kai.asked({"gpu-fraction": "0.5"}), groups, None).startswith(
        "KAI: no GPU group has 0.5 of its GPU left"
    )
    assert "memory is not known" in kai.fit(kai.asked({"gpu-memory": "1024"}), groups, None)
