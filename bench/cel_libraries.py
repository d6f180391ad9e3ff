"""The CEL libraries for Python side by side, on DeviceClass selectors as clusters write them and
on hostile ones: time per evaluation (compiled once), and whether an evaluation ends.

    python bench/cel_libraries.py [--evaluations 2000] [--limit 20]

Candidates: cel-expr-python (Google's CEL runtime, cel-cpp; the one the app uses), the
Rust-backed common-expression-language (``cel``) and cel-python (``celpy``, pure Python). One
not installed is skipped with the pip line that adds it (the app's lock holds only the first).
Each (library, case) runs in a process of its own, stopped after ``--limit`` seconds: "no end"
is a hang the app could not have survived under its lock. Ratios are against cel-expr-python in
the same run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import textwrap

NUMBERS = ",".join(str(i) for i in range(100))
GPU = "gpu.example.com"
# name, expression, the device's driver; the device has model "h100" and index 3
CASES = [
    ("driver", f'device.driver == "{GPU}"', GPU),
    ("attribute", f'device.attributes["{GPU}"].model == "h100" && device.attributes["{GPU}"].index < 8', GPU),
    ("regex", 'device.driver.matches("^gpu\\\\.[a-z]+\\\\.com$")', GPU),
    ("exists", f'device.attributes["{GPU}"].exists(k, k == "model")', GPU),
    (
        "hostile: 10^6 iterations",
        f"[{NUMBERS}].all(x, [{NUMBERS}].all(y, [{NUMBERS}].all(z, x + y + z >= 0)))",
        GPU,
    ),
    ("hostile: duration of 41 chars", 'duration(device.driver) > duration("1s")', "1" * 40 + "x"),
    ("hostile: (a+)+$ over 41 chars", 'device.driver.matches("^(a+)+$")', "a" * 40 + "b"),
]
LIBRARIES = {  # name: module, pip package
    "cel-expr-python": ("cel_expr_python", "cel-expr-python"),
    "common-expression-language": ("cel", "common-expression-language"),
    "cel-python": ("celpy", "cel-python"),
}

# one evaluation loop per library: compile once, evaluate n times, print JSON
PROBE = textwrap.dedent(
    """
    import json, sys, time
    lib, expression, driver, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    attributes = {"gpu.example.com": {"model": "h100", "index": 3}}
    device = {"driver": driver, "attributes": attributes, "capacity": {}}
    if lib == "cel-expr-python":
        from cel_expr_python import cel
        env = cel.NewEnv(variables={"device": cel.Type.DYN})
        program = env.compile(expression, disable_check=True)  # as the app compiles
        context = env.Activation({"device": device})
        def run():
            r = program.eval(context)
            return "error" if r.type() == cel.Type.ERROR else r.value()
    elif lib == "common-expression-language":
        import cel
        program = cel.compile(expression)
        def run():
            return program.execute({"device": device})
    else:
        import celpy
        env = celpy.Environment()
        program = env.program(env.compile(expression))
        context = {"device": celpy.json_to_cel(device)}
        def run():
            r = program.evaluate(context)
            return "error" if isinstance(r, Exception) else r
    t0 = time.perf_counter()
    try:
        result = run()
    except Exception as exc:
        result = "error: " + type(exc).__name__
    first = time.perf_counter() - t0
    k = 1 if str(result).startswith("error") or first > 0.05 else n
    t0 = time.perf_counter()
    for _ in range(k - 1):
        try:
            run()
        except Exception:
            pass
    each = (first + time.perf_counter() - t0) / k
    print(json.dumps({"result": str(result)[:30], "us": each * 1e6}))
    """
)


def probe(library: str, expression: str, driver: str, n: int, limit: float) -> tuple[str, float | None]:
    try:
        out = subprocess.run(
            [sys.executable, "-c", PROBE, library, expression, driver, str(n)],
            capture_output=True,
            text=True,
            timeout=limit,
        )
    except subprocess.TimeoutExpired:
        return f"no end in {limit:.0f} s", None
    if out.returncode != 0:
        return "error: " + (out.stderr.strip().splitlines() or ["?"])[-1][:40], None
    found = json.loads(out.stdout)
    return found["result"], found["us"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--evaluations", type=int, default=2000)
    ap.add_argument("--limit", type=float, default=20)
    args = ap.parse_args()
    present = {}
    for name, (module, package) in LIBRARIES.items():
        if importlib.util.find_spec(module) is None:
            print(f"{name}: not installed (pip install {package} to compare)")
        else:
            present[name] = module
    print(f"command: python bench/cel_libraries.py {' '.join(sys.argv[1:])}")
    print(f"{'case':32} {'library':28} {'result':26} {'us/eval':>10} {'x cel-expr':>10}")
    for case, expression, driver in CASES:
        base = None
        for name in present:
            result, us = probe(name, expression, driver, args.evaluations, args.limit)
            if name == "cel-expr-python":
                base = us
            ratio = f"{us / base:10.1f}" if us is not None and base else f"{'-':>10}"
            figure = f"{us:10.1f}" if us is not None else f"{'-':>10}"
            print(f"{case:32} {name:28} {result:26} {figure} {ratio}")


if __name__ == "__main__":
    main()
