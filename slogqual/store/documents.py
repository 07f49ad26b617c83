"""The documents the result store keeps, typed, and what a run is filed under.

Every document the store records is one of the typed results (a sweep, a scenario, a qualification, a
power-cut test); the store reads its fields, never its keys: the identity it is filed under (the device
record's, the user's labels where it has none), when and where it was measured (host, slot), its status,
verdict and one-line summary. A stored row's JSON is loaded back through the same types (``typed``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Union

from slogqual.report import powercut as powercut_words
from slogqual.errors import UsageError
from slogqual.report import scenario as scenario_report
from slogqual.results import DeviceIdentity, SweepResult, schema_of
from slogqual.results import schema as S
from slogqual.results.host import HostProbeResult
from slogqual.results.powercut import PowercutResult
from slogqual.results.qualification import QualificationResult, Summary
from slogqual.results.scenario import AnalysisRecord, ScenarioResult

Document = Union[SweepResult, ScenarioResult, QualificationResult, PowercutResult, HostProbeResult]

KIND_SWEEP, KIND_SCENARIO, KIND_QUALIFICATION = "sweep", "scenario", "qualification"
KIND_POWERCUT = "powercut"
KIND_HOST = "host"  # a host probe: this host's ZFS with a perfect log (advise --host store:ID)
KINDS = (KIND_SWEEP, KIND_SCENARIO, KIND_QUALIFICATION, KIND_POWERCUT, KIND_HOST)
SCHEMA_KINDS = {S.SWEEP: KIND_SWEEP, S.SCENARIO: KIND_SCENARIO, S.QUALIFICATION: KIND_QUALIFICATION,
                S.POWERCUT: KIND_POWERCUT, S.HOST: KIND_HOST}
TYPES = {KIND_SWEEP: SweepResult, KIND_SCENARIO: ScenarioResult, KIND_QUALIFICATION: QualificationResult,
         KIND_POWERCUT: PowercutResult, KIND_HOST: HostProbeResult}
TYPED = {kind: t.from_dict for kind, t in TYPES.items()}


def kind_of(document: Any) -> Optional[str]:
    """The store's kind of a typed document (None: not one the store keeps)."""
    return next((kind for kind, t in TYPES.items() if isinstance(document, t)), None)


def typed(doc: Any, source: str) -> Document:
    """A document read as JSON (a file, a stored row), typed: UsageError when it is no slogqual result
    document, DocumentError (naming the key) when it is a malformed one."""
    schema = schema_of(doc)
    kind = SCHEMA_KINDS.get(schema) if isinstance(schema, str) else None
    if kind is None:
        got = schema if isinstance(doc, dict) else type(doc).__name__
        raise UsageError(f"{source}: not a slogqual result document (schema: {got!r}; "
                         f"known: {', '.join(SCHEMA_KINDS)})")
    return TYPED[kind](doc, source)


@dataclass
class Filed:
    """A run's columns in the store: who, when, where, and how it ended."""

    kind: str
    model: Optional[str] = None
    serial: Optional[str] = None
    firmware: Optional[str] = None
    device_class: Optional[str] = None
    target: Optional[str] = None
    started: Optional[str] = None
    host: Optional[str] = None
    slot: Optional[str] = None  # the device's PCI address
    source: str = "slogqual"
    status: Optional[str] = None
    verdict: Optional[str] = None
    profile: Optional[str] = None

    def labelled(self, identity: Any) -> "Filed":
        """What the user labelled the device with (``identity``: model, serial, firmware, device_class
        attributes) fills only what the document leaves unknown."""
        for attr in ("model", "serial", "firmware", "device_class"):
            value = getattr(identity, attr, None) if identity is not None else None
            if value and not getattr(self, attr):
                setattr(self, attr, value)
        return self


def device_of(document: Document) -> DeviceIdentity:
    """The device record a document holds (a scenario: its first log candidate's)."""
    if isinstance(document, SweepResult):
        return document.identity
    if isinstance(document, ScenarioResult):
        return document.first_log
    if isinstance(document, QualificationResult):
        return document.device_identity
    return DeviceIdentity.of(document.device)


def _device(kind: str, dev: DeviceIdentity, **facts: Any) -> Filed:
    return Filed(kind, model=dev.model, serial=dev.serial, firmware=dev.firmware, device_class=dev.device_class,
                 slot=dev.slot, **facts)


def filed(document: Document) -> Filed:
    """What a typed document is filed under (TypeError for anything else: a bug, not bad input)."""
    if isinstance(document, SweepResult):
        f = _device(KIND_SWEEP, device_of(document), target=document.target_path, started=document.started,
                    host=document.host, source=document.source, status=document.status)
        f.model = f.model or document.target_label
        return f
    if isinstance(document, ScenarioResult):
        logs = document.log_paths
        return _device(KIND_SCENARIO, device_of(document), target=logs[0] if logs else None,
                       started=document.environment.started, host=document.environment.host,
                       status=document.status)
    if isinstance(document, QualificationResult):
        who = document.who
        return Filed(KIND_QUALIFICATION, model=who.model, serial=who.serial, firmware=who.firmware,
                     device_class=who.device_class, target=document.target,
                     started=document.started or (document.environment.started if document.environment else None),
                     host=document.host, slot=device_of(document).slot, verdict=document.verdict,
                     profile=document.profile.name)
    if isinstance(document, PowercutResult):
        return _device(KIND_POWERCUT, device_of(document), target=document.target_path,
                       started=document.started, host=document.host, status=document.status,
                       verdict=document.verdict)
    if isinstance(document, HostProbeResult):  # filed under the host, not a device
        env = document.environment
        return Filed(KIND_HOST, model=f"OpenZFS {env.get('openzfs_userland') or '?'}", device_class="host",
                     target=document.ram.get("directory"), started=env.get("started"), host=env.get("host"),
                     status=document.status)
    raise TypeError(f"the result store keeps sweeps, scenarios, qualifications and power cuts, not {document!r:.80}")


def summary(document: Document) -> str:
    """One line for ``slogqual history``: a sweep's 4K figures, a scenario's verdict by today's rules, a
    qualification's counts, how the power was cut and what was lost."""
    if isinstance(document, SweepResult):
        return sweep_summary(document)
    if isinstance(document, ScenarioResult):
        return scenario_summary(document)
    if isinstance(document, QualificationResult):
        return qualification_summary(document)
    if isinstance(document, HostProbeResult):
        return host_summary(document)
    return powercut_words.summary(document)


def host_summary(doc: HostProbeResult) -> str:
    w = doc.workload
    ceilings = ", ".join(f"{s.threads}: ≤ {s.ceiling_iops:.0f}" for s in doc.steps if s.ceiling_iops)
    return f"host probe {w.protocol} {w.bs // 1024}K; ceiling IOPS by writers {ceilings or 'none'}"


def sweep_summary(result: SweepResult) -> str:
    four = result.point(4096)
    head = f"{len(result.points)} sizes"
    if four:
        head += f"; 4K mean {four.lat_us.mean:.1f} µs, {four.iops:.0f} IOPS"
    return head


def scenario_summary(result: ScenarioResult) -> str:
    a = AnalysisRecord.of(scenario_report.current(result))  # today's rules on the measured steps
    return str((a.verdict if a else None) or f"{len(result.steps)} steps")


def qualification_summary(q: QualificationResult) -> str:
    passed, failed, not_evaluated = (q.summary or Summary()).counts()
    label = (q.steady_state.label if q.steady_state is not None else None) or ""
    return f"{passed} pass, {failed} fail, {not_evaluated} not evaluated; steady state {label}"
