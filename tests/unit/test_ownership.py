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


def test_on_one_node_the_status_comes_first_then_dra_devices_there():
    """nvidia.com/gpu is a device plugin's where the kubelet advertises it, DRA's where only a
    DeviceClass's devices serve it, and the name's owner where neither does."""
    from app.domain.ownership import DRA_HERE, STATUS, ownership_on

    plugin = lambda r: r.startswith("nvidia.com/")  # noqa: E731
    classes = {"nvidia.com/gpu": "gpu.nvidia.com", "example.com/gpu": "example-gpu"}.get
    gpu = "nvidia.com/gpu"
    assert ownership_on(gpu, STATUS, None, plugin, classes).kind == "device plugin"
    dra = ownership_on(gpu, DRA_HERE, "gpu.nvidia.com", plugin, classes)
    assert dra.kind == "DRA" and dra.dra_class == "gpu.nvidia.com" and "device plugin" not in dra.source
    assert "DeviceClass gpu.nvidia.com" in dra.more_needed("n1", gpu, 2)
    assert ownership_on(gpu, None, None, plugin, classes).kind == "device plugin"  # the name's owner
    # a static name in the status is static there, even where a class also names it
    assert ownership_on("example.com/gpu", STATUS, None, plugin, classes).editable
    assert ownership_on("example.com/gpu", DRA_HERE, "example-gpu", plugin, classes).kind == "DRA"


def test_a_column_says_what_serves_it_node_by_node():
    from app.domain.ownership import sources

    assert sources(["static", "static"]) == ""
    assert sources(["device plugin", "device plugin"]) == "device plugin"
    assert sources(["DRA"]) == "DRA"
    assert sources(["device plugin", "DRA", "DRA"]) == "DRA on 2 nodes, device plugin on 1 node"


def test_a_mig_profile_is_advised_as_instances_of_its_profile_not_whole_gpus():
    from app.domain.ownership import mig_profile

    assert mig_profile("nvidia.com/mig-1g.10gb") == "1g.10gb" and mig_profile("nvidia.com/gpu") is None
    mig = ownership_of("nvidia.com/mig-3g.40gb", plugins, classes)
    said = mig.more_needed("n2", "nvidia.com/mig-3g.40gb", 1)
    assert said.startswith("n2 would need 1 more nvidia.com/mig-3g.40gb;") and "MIG 3g.40gb instances" in said
