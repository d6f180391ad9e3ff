"""One rule decides who sets a resource's amount, and the words advice uses for it."""

from __future__ import annotations

from app.domain.device_plugins import DevicePluginRule
from app.domain.ownership import DEVICE_PLUGIN, DRA, STATIC, ownership_of

plugins = DevicePluginRule().owns
classes = {"example.com/gpu": "gpus", "deviceclass.resource.kubernetes.io/gpus": "gpus"}.get


def test_the_rule_in_order_device_plugin_then_dra_then_static():
    assert ownership_of("nvidia.com/gpu", plugins, classes).kind == DEVICE_PLUGIN
    served = ownership_of("example.com/gpu", plugins, classes)
    assert (served.kind, served.dra_class, served.editable) == (DRA, "gpus", False)
    implicit = ownership_of("deviceclass.resource.kubernetes.io/other", plugins, lambda r: None)
    assert (implicit.kind, implicit.dra_class) == (DRA, "other")  # the implicit name, class not yet seen
    static = ownership_of("example.com/dongle", plugins, classes)
    assert (static.kind, static.editable, static.source) == (STATIC, True, "")


def test_advice_is_an_action_only_for_static_resources():
    static = ownership_of("example.com/dongle", plugins, classes)
    assert static.more_needed("n1", "example.com/dongle", 2) == "n1 would need 2 more example.com/dongle"
    gpu = ownership_of("nvidia.com/gpu", plugins, classes)
    assert gpu.more_needed("n3", "nvidia.com/gpu", 2) == (
        "n3 would need 2 more nvidia.com/gpu; its device plugin advertises them (devices installed there)"
    )
    assert "the kubelet rewrites it" in gpu.source
    dra = ownership_of("example.com/gpu", plugins, classes)
    assert "DeviceClass gpus" in dra.more_needed("n5", "example.com/gpu", 3) and "plugin" not in dra.source
