"""The power-cut test as library calls: ``run_powercut(request)`` and ``verify_powercut(request)`` ->
``PowercutOutcome`` (issue #27: a door per capability, below the CLI).

Everything between "this is the target" and "here is the result document" lives here: the bad-input
checks (before anything is created or written: the result store named, the target not being the store,
the options' ranges, the result file's guard), the run or the verification, what a refusal leaves behind
(nothing) and the result store, written by the library for powercut as for sweep and scenario.

Errors are the project's typed errors (slogqual.errors). An interrupt (Ctrl-C, SIGTERM turned into
KeyboardInterrupt) propagates after the result was saved as ``interrupted``; the caller says where it is
(``request.output`` is resolved to an absolute path by ``plan_run``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple

from slogqual import paths
from slogqual.errors import RefusedError, SlogqualError, UsageError
from slogqual.outputs import check_output
from slogqual.powercut import records as R
from slogqual.results.powercut import SCHEMA_PREFIX, PowercutResult


@dataclass
class PowercutRequest:
    """What ``slogqual powercut run`` asks for. ``output`` '' means the default name in the current
    directory; ``force`` lets it replace a file that is not a powercut result (``forceable`` False: the
    caller has no such option, and the refusal does not offer it)."""

    target: str
    cycles: int = 1
    sizes: Sequence[int] = R.DEFAULT_SIZES
    cut_after: int = 64
    emulate: Optional[str] = None  # unsafe | writeback | none
    cut_cmd: Optional[List[str]] = None
    restore_cmd: Optional[List[str]] = None
    cmd_timeout: float = 60.0
    return_timeout: float = 300.0
    recorder: Optional[Tuple[str, int]] = None
    destroy_data: bool = False
    size: Optional[int] = None  # a backing file --emulate creates (None: the default)
    output: str = ""
    force: bool = False
    forceable: bool = True
    store: Optional[str] = None  # --store / $SLOGQUAL_STORE (None: the default store)
    record_in_store: bool = True


@dataclass
class VerifyRequest:
    """What ``slogqual powercut verify`` asks for: the record of a run from a recorder or its journal."""

    target: str
    run_id: str
    recorder: Optional[Tuple[str, int]] = None
    journal: Optional[str] = None
    cycles: Optional[List[int]] = None
    output: Optional[str] = None  # None: no file, the document is only printed and recorded
    force: bool = False
    forceable: bool = True
    store: Optional[str] = None
    record_in_store: bool = True


@dataclass
class PowercutOutcome:
    result: PowercutResult
    path: Optional[str]  # the result file (None: verify without -o)
    store_error: Optional[str] = None  # the result store refused the record (the result file stands)
    notes: List[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.result.verdict == "pass"


def default_output(target: str) -> str:
    return f"slogqual-powercut-{paths.file_stem(target, 'target')}-{time.strftime('%Y%m%dT%H%M%S')}.json"


def _guard(path: str, what: str, ours, inputs: Sequence[Optional[str]], force: bool, forceable: bool,
           store_location: Optional[str]) -> str:
    """The output guard every slogqual output passes (slogqual.outputs.check_output): never an input of
    the command, never the result store, never a device node or FIFO, another file only with force."""
    from slogqual import store

    protect = [(p, "an input of this command") for p in inputs if p and p != "-"]
    protect += store.protected(store_location)
    return check_output(str(path), what, ours, protect, force=force, forceable=forceable)


def plan_run(req: PowercutRequest):
    """The checks of a run, before anything is created or written; returns the run's options
    (slogqual.powercut.engine.PowercutOptions) with the output resolved to an absolute path."""
    from slogqual import store
    from slogqual.powercut.engine import DEFAULT_EMULATED_SIZE, PowercutOptions, check_options

    store.Store(req.store)  # a bad --store / $SLOGQUAL_STORE is refused now (nothing opened yet)
    store.refuse_overwrite(req.target, "the power-cut test would overwrite it", req.store)
    opts = PowercutOptions(target=req.target, cycles=req.cycles, sizes=list(req.sizes), cut_after=req.cut_after,
                           emulate=req.emulate, cut_cmd=req.cut_cmd, restore_cmd=req.restore_cmd,
                           cmd_timeout=req.cmd_timeout, return_timeout=req.return_timeout, recorder=req.recorder,
                           destroy_data=req.destroy_data,
                           size=req.size if req.size is not None else DEFAULT_EMULATED_SIZE)
    check_options(opts)
    out = req.output or default_output(req.target)
    inputs = [req.target] if os.path.exists(req.target) else []
    opts.output = _guard(out, "powercut result", SCHEMA_PREFIX, inputs, req.force, req.forceable, req.store)
    if os.path.abspath(opts.output) == os.path.abspath(req.target):
        raise UsageError(f"{out} is the target: the result must go to another file")
    return opts


def run_powercut(req: PowercutRequest, progress: Callable[[str], None] = lambda line: None,
                 opts=None) -> PowercutOutcome:
    """Write, cut, verify, ``req.cycles`` times; record the result in the store. ``opts`` is what
    ``plan_run(req)`` returned when the caller planned first (to say where the result goes)."""
    from slogqual import store
    from slogqual.powercut.engine import PowercutRun

    opts = opts or plan_run(req)
    job = PowercutRun(opts, progress)
    progress(f"run {job.run_id.hex()}; result in {opts.output}")
    try:
        result = job.run()
    except RefusedError:
        if os.path.exists(opts.output) and not job.result.cycles:
            os.unlink(opts.output)  # nothing was written: leave nothing behind
        raise
    except KeyboardInterrupt:
        raise  # saved as interrupted by the run; not recorded in the store (the caller says how to import it)
    except SlogqualError:
        if job.result.cycles and req.record_in_store:  # cycles verified before the failure are evidence
            store.record_or_warn(job.result, opts.output, store_path=req.store)
        raise
    outcome = PowercutOutcome(result=result, path=opts.output)
    if req.record_in_store:
        outcome.store_error = store.record_or_warn(result, opts.output, store_path=req.store)
    return outcome


def verify_powercut(req: VerifyRequest) -> PowercutOutcome:
    """Check a device against the record of a run (a recorder's reply or its journal); write the result
    (with ``req.output``) and record it in the store."""
    from slogqual import store
    from slogqual.powercut.recorder import RecorderClient, load_journal
    from slogqual.powercut.engine import parse_run_id, verify_run
    from slogqual.results import write_json_atomic

    if (req.recorder is None) == (req.journal is None):
        raise UsageError("verify reads a recorder or a journal: name exactly one")
    if req.journal == "":
        raise UsageError("--journal is empty: name the recorder's journal file")
    parse_run_id(req.run_id)  # before a recorder is asked or a journal read
    store.Store(req.store)  # a bad --store / $SLOGQUAL_STORE is refused now (nothing opened yet)
    out = _guard(req.output, "powercut result", SCHEMA_PREFIX, [req.target, req.journal], req.force,
                 req.forceable, req.store) if req.output else None
    if req.journal is not None:
        reply = load_journal(req.journal).handle({"op": "query", "run": req.run_id})
        source = f"journal {req.journal}"
    else:
        host, port = req.recorder
        with RecorderClient(host, port) as client:
            reply = client.query(req.run_id)
        source = f"recorder {host}:{port}"
    result = verify_run(req.target, req.run_id, reply, source, req.cycles)
    if out:
        write_json_atomic(out, result.to_dict())
    outcome = PowercutOutcome(result=result, path=out)
    if req.record_in_store:
        outcome.store_error = store.record_or_warn(result, out, store_path=req.store)
    return outcome
