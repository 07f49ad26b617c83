"""The guest's side of ``slogqual lab powercut`` as a library module: ``python -m slogqual.lab.powercut_writers
--plan JSON``, the command the guest's job runs (slogqual.lab.powercut.writers_command). It identifies every
lab device, starts one powercut writer per device and waits for them; the cut ends them, and the guest with
them (run_writers). A module of its own rather than a hidden CLI subcommand: the
command line is the user's door, and library code never starts it (tests/test_layering.py).

Exit status: 0 when every writer filled its area (no cut came), 1 otherwise, 2 for a plan that is not one
(one line), 130 interrupted (slogqual.process)."""

from __future__ import annotations

import argparse
import json
import os
from typing import Callable, Dict, List, Optional

from slogqual import process
from slogqual.errors import UsageError
from slogqual.results import write_json_atomic

MODULE = "slogqual.lab.powercut_writers"


def parse_plan(text: str) -> dict:
    """``--plan``: the JSON object writers_command built (UsageError otherwise)."""
    try:
        plan = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"--plan: not JSON ({exc})") from None
    if not isinstance(plan, dict):
        raise UsageError("--plan: not a powercut plan")
    return plan


def run_writers(plan: Dict, device_paths: Callable[[List[str]], List[str]]) -> int:
    """The guest's side: identify every device, start one writer per
    device (``python -m slogqual.powercut.writer`` in this interpreter; journal on the share), wait for
    them (the cut ends them, and the guest with them). Exit status: 0 when every writer filled its area
    (no cut came), else 1."""
    from slogqual import device
    from slogqual.powercut import writer
    from slogqual.tools import pymodule

    try:
        cycle, sizes, out = int(plan["cycle"]), [int(s) for s in plan["sizes"]], str(plan["out"])
        entries = [(int(e["index"]), str(e["run_id"]), str(e["journal"])) for e in plan["devices"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"--plan: not a powercut plan ({exc})") from None
    paths = device_paths([f"lab:{i}" for i, _, _ in entries])
    writers = []
    for (index, run_id, journal), path in zip(entries, paths):
        try:
            record = device.identify(path).to_dict()
        except Exception as exc:  # the identity is evidence, not the measurement: say why it is missing
            record = {"path": path, "error": f"identification failed: {exc}", "warnings": []}
        write_json_atomic(os.path.join(out, f"device-{index}.json"), record)
        w = pymodule.background(writer.MODULE, [path, "--run-id", run_id, "--cycle", str(cycle),
                                                "--sizes", ",".join(map(str, sizes)),
                                                "--journal", os.path.join(out, journal), "--destroy-data"],
                                grace_s=5.0)
        writers.append(w.start())
    worst = 0
    for w in writers:
        worst = max(worst, 1 if w.wait() else 0)
    return worst


def main(argv: Optional[List[str]] = None) -> int:
    def body() -> int:
        p = argparse.ArgumentParser(prog=f"python -m {MODULE}",
                                    description="The lab guest's side of slogqual lab powercut.")
        p.add_argument("--plan", required=True, help="the plan (JSON) the host wrote for this cycle")
        args = p.parse_args(argv)

        def work() -> int:
            from slogqual.pool.door import lab_device_paths
            return run_writers(parse_plan(args.plan), lab_device_paths)

        return process.one_line(work)

    return process.run_main(body)


if __name__ == "__main__":
    process.end(main)
