"""The table of an advisor check (contrib/advisor_check/run.py): per configuration and writer count the
advice's figure (≤ where it is a bound), what the pool measured, and whether the figure held — a prediction
within ±20 %, or a bound the measurement did not pass that is no more than 1.5x it. Beside them, the host
probe's ceiling (RAM log), its log pass's ceiling and measured IOPS with the pass's CPU busy share (model 5), the
probe's own pool's measured IOPS and busy share where the log is one the CPU writes (model 6), the step's
guest CPU and the share of its transactions the write throttle sent to wait ("-" where a run before the
throttle's evidence did not record it).

    python3 contrib/advisor_check/table.py OUTDIR [--markdown]
"""

import json
import os
import sys

from slogqual.errors import SlogqualError
from slogqual.analysis import advisor
from slogqual.results.advice import AdviceResult
from slogqual.results.scenario import ScenarioResult

PREDICTION = 0.20
BOUND = 1.5


def held(row):
    if row.get("upper_bound"):
        return row["measured_iops"] <= row["predicted_iops"] <= BOUND * row["measured_iops"]
    return abs(row["error"]) <= PREDICTION


def rows(outdir, advice_of=None):
    """Each configuration's rows; ``advice_of(config)``: the advice document to judge in place of the one the
    guest wrote before the pool (the current model's, made again from the same recorded inputs)."""
    plan = json.load(open(os.path.join(outdir, "plan.json")))
    for c in plan["configs"]:
        d = os.path.join(outdir, "lab", c["name"])
        try:
            advice = AdviceResult.load(advice_of(c) if advice_of else os.path.join(d, "advice.json"))
            run = ScenarioResult.from_dict(json.load(open(os.path.join(d, "run.json"))), "run.json")
        except (OSError, ValueError, SlogqualError) as exc:  # a configuration the guest could not finish
            yield c, None, f"missing: {exc}"
            continue
        cand = advice.candidates[0]
        steps = {s.threads: s for s in cand.steps}
        host = {s["threads"]: s for s in (advice.extra.get("host") or {}).get("steps", [])}
        for r in advisor.verify(advice, run):
            s = steps.get(r["threads"])
            measured = next((x for x in run.steps if x.threads == r["threads"]), None)
            yield c, dict(r, binding=s.binding if s else None, batch=s.batch if s else None,
                          host=host.get(r["threads"], {}).get("ceiling_iops"),
                          log_pass=s.limits.host_log_pass_iops if s and s.limits else None,
                          log_pass_measured=s.limits.log_pass_measured_iops if s and s.limits else None,
                          log_pass_busy=s.limits.log_pass_busy if s and s.limits else None,
                          probe_pool=s.limits.probe_pool_measured_iops if s and s.limits else None,
                          probe_pool_busy=s.limits.probe_pool_busy if s and s.limits else None,
                          cpu=measured.cpu_busy if measured else None,
                          throttle=_throttled(measured)), None


def _throttled(step):
    t = step.write_throttle if step is not None else None
    return t.waited_share if t is not None else None


def _measured(iops, busy):
    """'1272 (83 %)': a probe's measured IOPS with its CPU's busy share; '-' where it has none."""
    if not iops:
        return "-"
    return f"{iops:.0f} ({busy * 100:.0f} %)" if busy is not None else f"{iops:.0f}"


def main(argv):
    outdir = argv[0]
    md = "--markdown" in argv
    head = ["configuration", "layout", "writers", "advice IOPS", "measured IOPS", "IOs", "error", "binding",
            "host ceiling", "log pass", "pass IOPS", "probe IOPS", "guest CPU", "throttled", "held"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] if md else ["\t".join(head)]
    total = ok = 0
    for c, r, why in rows(outdir):
        if r is None:
            lines.append(f"{c['name']}: {why}")
            continue
        total += 1
        good = held(r)
        ok += good
        mark = "≤ " if r.get("upper_bound") else ""
        cells = [c["name"], c["layout"], str(r["threads"]), f"{mark}{r['predicted_iops']:.0f}",
                 f"{r['measured_iops']:.0f}", str(r.get("measured_ios") or ""), f"{r['error'] * 100:+.0f} %",
                 str(r["binding"]), f"{r['host']:.0f}" if r.get("host") else "-",
                 f"{r['log_pass']:.0f}" if r.get("log_pass") else "-",
                 _measured(r.get("log_pass_measured"), r.get("log_pass_busy")),
                 _measured(r.get("probe_pool"), r.get("probe_pool_busy")),
                 f"{r['cpu'] * 100:.0f} %" if r.get("cpu") is not None else "-",
                 f"{r['throttle'] * 100:.0f} %" if r.get("throttle") is not None else "-", "yes" if good else "NO"]
        lines.append(("| " + " | ".join(cells) + " |") if md else "\t".join(cells))
    lines.append(f"held: {ok} of {total} figures")
    print("\n".join(lines))
    return 0 if total and ok == total else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
