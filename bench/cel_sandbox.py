"""What evaluating DeviceClass selectors in a child process costs (app/sandbox/cel_sandbox.py), against
evaluating them in the worker, in the same run, at a GPU cluster's size.

    python bench/cel_sandbox.py [--nodes 5000] [--gpus 8] [--rounds 3]

The devices are shaped as NVIDIA's DRA driver publishes them (driver gpu.nvidia.com, a uuid per
GPU, so no two devices share an answer; productName, architecture, driverVersion as a version,
memory as a capacity), and the classes as clusters write them: the driver's own class, one by
product and memory, one by driver version. Each round decides every class over every device
from empty (the cold start, and what a DeviceClass change costs), then reads every answer
again (what pages do). Prints the median of each and the ratio sandbox/worker.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.domain import device_cel, selector_answers
from app.domain.device_cel import Device, Version
from app.sandbox import cel_sandbox

DRIVER = "gpu.nvidia.com"
CLASSES = [
    (f'device.driver == "{DRIVER}"',),
    (
        f'device.driver == "{DRIVER}"',
        f'device.attributes["{DRIVER}"].productName == "NVIDIA H100 80GB HBM3"',
        f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0',
    ),
    (f'device.attributes["{DRIVER}"].driverVersion.isGreaterThan(semver("550.0.0"))',),
]


def devices(nodes: int, gpus: int) -> list[Device]:
    return [
        Device(
            DRIVER,
            (
                ("uuid", f"GPU-{n:05d}-{g}-5f1c-4e2a-9b7d-{n * gpus + g:012x}"),
                ("productName", "NVIDIA H100 80GB HBM3"),
                ("architecture", "Hopper"),
                ("type", "gpu"),
                ("index", g),
                ("driverVersion", Version("560.35.3")),
                ("cudaComputeCapability", Version("9.0.0")),
            ),
            (("memory", "80Gi"),),
        )
        for n in range(nodes)
        for g in range(gpus)
    ]


def timed(evaluate: device_cel.Evaluate, pairs: device_cel.Pairs) -> tuple[float, float]:
    answers = selector_answers.Answers("measured", evaluate)
    t0 = time.perf_counter()
    for expressions in CLASSES:
        answers.decide([expressions], [d for e, d in pairs if e == expressions])
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    for expressions, device in pairs:
        with contextlib.suppress(device_cel.Unknown):
            answers.matches(expressions, device)
    return cold, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    found = devices(args.nodes, args.gpus)
    pairs = [(c, d) for c in CLASSES for d in found]
    print(f"command: python bench/cel_sandbox.py {' '.join(sys.argv[1:])}")
    print(f"{args.nodes} nodes x {args.gpus} GPUs = {len(found)} devices, {len(CLASSES)} classes: ", end="")
    print(f"{len(pairs)} answers kept (of {selector_answers.Answers.SIZE} at most)")
    sandbox = cel_sandbox.Sandbox()
    sandbox.evaluate(pairs[:1])  # the child started (once per worker), not part of a round
    results: dict[str, list[tuple[float, float]]] = {"worker": [], "sandbox": []}
    for _ in range(args.rounds):
        results["worker"].append(timed(device_cel.evaluate_here, pairs))
        results["sandbox"].append(timed(sandbox.evaluate, pairs))
    sandbox.close()
    med = {
        k: (statistics.median(c for c, _ in v), statistics.median(r for _, r in v))
        for k, v in results.items()
    }
    for name, (cold, read) in med.items():
        print(f"{name:8s} decide every answer: {cold:6.2f} s   read them all again: {read:6.3f} s")
    print(
        f"ratio sandbox/worker: decide {med['sandbox'][0] / med['worker'][0]:.2f}x, "
        f"read {med['sandbox'][1] / med['worker'][1]:.2f}x (answers kept in the worker either way)"
    )


if __name__ == "__main__":
    main()
