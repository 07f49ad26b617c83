"""The ``slogqual.cost/1`` document (docs/scenarios.md, "Protocol cost"), typed.

A local scenario run and the same load over a real transport, compared step by step, and whether the SLOG's
benefit survives the protocol.

``slogqual scenario cost --json`` writes it; nothing reads it back, but it loads (``CostResult.from_dict``)
and writes again the same bytes, keys it does not model included and in the order the file had them. The
figures are analysis.transport's (``CostStep``, ``ConfigCost``, ``BenefitEntry`` are made there); the words
in it (``transport_words``, each pairing's ``matched_by``, each unmatched step's ``why``, the differences,
each benefit entry's ``sentence``) are report.wording's, put in by ``report.wording.cost_worded``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Optional, Tuple

from slogqual.results import Table, load_json, written as _written
from slogqual.results import schema as S


@dataclass
class CostSources(Table):
    """``sources``: the two result files as the user named them."""

    KEYS: ClassVar[Tuple[str, ...]] = ("local", "transport")

    local: Optional[str] = None
    transport: Optional[str] = None


@dataclass
class CostLoad(Table):
    """``load``: the load both runs share (analysis.transport.LOAD_KEYS); ``write_sync`` 'none' where unset."""

    KEYS: ClassVar[Tuple[str, ...]] = ("kind", "luns", "bs", "rw", "write_sync")

    kind: Optional[str] = None
    luns: Optional[int] = None
    bs: Optional[int] = None
    rw: Optional[str] = None
    write_sync: Optional[str] = None


@dataclass
class CostCandidate(Table):
    """One of ``candidates``: a local log candidate and its counterpart over the transport, how they were
    paired (``matched_by``, in words) and each as said ('/dev/pmem0 (nvdimm)')."""

    KEYS: ClassVar[Tuple[str, ...]] = ("local", "transport", "matched_by", "local_label", "transport_label")

    local: str = ""
    transport: str = ""
    matched_by: str = ""
    local_label: str = ""
    transport_label: str = ""


@dataclass
class UnmatchedCandidates(Table):
    """``unmatched_candidates``: each side's log candidates (as said) without a counterpart on the other."""

    KEYS: ClassVar[Tuple[str, ...]] = ("local", "transport")

    local: List[str] = field(default_factory=list)
    transport: List[str] = field(default_factory=list)


@dataclass
class CostStep(Table):
    """One of ``steps``: a thread step measured on both sides, its IOPS ratio (transport over local) with the
    ratio's counting error, and the latency the protocol added per IO (mean over mean, µs)."""

    KEYS: ClassVar[Tuple[str, ...]] = ("config", "label", "sync", "log", "candidate_local", "candidate_transport",
                                       "threads", "local_iops", "transport_iops", "iops_ratio", "ratio_error",
                                       "local_ios", "transport_ios", "local_lat_mean_us", "transport_lat_mean_us",
                                       "added_us_per_io")

    config: str = ""
    label: str = ""  # the configuration with its candidate(s): 'sync=always + SLOG [/dev/pmem0]'
    sync: Optional[str] = None
    log: Optional[str] = None
    candidate_local: Optional[str] = None
    candidate_transport: Optional[str] = None
    threads: int = 0
    local_iops: float = 0.0
    transport_iops: float = 0.0
    iops_ratio: Optional[float] = None  # None: no local IOPS to divide by
    ratio_error: float = 0.0
    local_ios: Optional[int] = None
    transport_ios: Optional[int] = None
    local_lat_mean_us: Optional[float] = None
    transport_lat_mean_us: Optional[float] = None
    added_us_per_io: Optional[float] = None


@dataclass
class UnmatchedCostStep(Table):
    """One of ``unmatched_steps``: a step of one ``side`` without a counterpart on the other, and ``why``
    (in words)."""

    KEYS: ClassVar[Tuple[str, ...]] = ("side", "config", "candidate", "threads", "why")

    side: str = ""  # local or transport
    config: str = ""
    candidate: Optional[str] = None
    threads: Optional[int] = None
    why: str = ""


@dataclass
class ConfigCost(Table):
    """One of ``configs``: per configuration (and candidate pair) the IOPS ratio's geometric mean and range
    over its matched thread steps, and the range of the latency added per IO."""

    KEYS: ClassVar[Tuple[str, ...]] = ("label", "config", "threads", "iops_ratio_gm", "iops_ratio_min",
                                       "iops_ratio_max", "added_us_min", "added_us_max")

    label: str = ""
    config: str = ""
    threads: List[int] = field(default_factory=list)
    iops_ratio_gm: Optional[float] = None
    iops_ratio_min: Optional[float] = None
    iops_ratio_max: Optional[float] = None
    added_us_min: Optional[float] = None
    added_us_max: Optional[float] = None


@dataclass
class BenefitAtThreads(Table):
    """One of a benefit entry's ``at_threads``: the SLOG's speed-up at one thread count both sides measured."""

    KEYS: ClassVar[Tuple[str, ...]] = ("threads", "local", "transport", "local_error", "transport_error", "state")

    threads: int = 0
    local: float = 0.0
    transport: float = 0.0
    local_error: float = 0.0
    transport_error: float = 0.0
    state: str = ""


@dataclass
class SidePair(Table):
    """``peak_threads`` and ``peak_iops``: per side, [with the SLOG, without one] at each curve's peak."""

    KEYS: ClassVar[Tuple[str, ...]] = ("local", "transport")

    local: List[Any] = field(default_factory=list)
    transport: List[Any] = field(default_factory=list)


@dataclass
class BenefitCause(Table):
    """A benefit entry's ``why`` (gone or shrinks): the protocol is the limit (``cause`` protocol: sync=always +
    SLOG over the transport reaches ``of_standard`` of sync=standard over it), or what each configuration
    ``kept`` of its local IOPS (``slog_kept``, ``noslog_kept``: geometric means over the matched steps)."""

    KEYS: ClassVar[Tuple[str, ...]] = ("cause", "of_standard", "slog_kept", "noslog_kept")
    PROTOCOL, KEPT = "protocol", "kept"

    cause: str = ""
    of_standard: Optional[float] = None
    slog_kept: Optional[float] = None
    noslog_kept: Optional[float] = None

    @classmethod
    def protocol(cls, of_standard: float) -> "BenefitCause":
        return _with_absent(cls(cls.PROTOCOL, of_standard=of_standard), ("slog_kept", "noslog_kept"))

    @classmethod
    def kept(cls, slog_kept: float, noslog_kept: float) -> "BenefitCause":
        return _with_absent(cls(cls.KEPT, slog_kept=slog_kept, noslog_kept=noslog_kept), ("of_standard",))


@dataclass
class BenefitEntry(Table):
    """One of ``slog_benefit``: per paired log candidate the SLOG's speed-up of sync=always locally and over
    the transport at peak (with their counting errors) and at each thread count all four steps share, its
    ``state`` (analysis.transport.survival), the cause it shows (``why``) and the ``sentence``. An entry
    of a comparison with no SLOG configuration on both sides holds only ``state`` unknown and ``reason``."""

    KEYS: ClassVar[Tuple[str, ...]] = ("config", "candidate_local", "candidate_transport", "label", "noslog_config",
                                       "local_at_peak", "local_error", "transport_at_peak", "transport_error",
                                       "at_threads", "state", "peak_threads", "peak_iops", "why", "reason",
                                       "sentence")
    NO_SLOG_CONFIGURATION = "no-slog-configuration"
    UNKNOWN = "unknown"

    config: Optional[str] = None
    candidate_local: Optional[str] = None
    candidate_transport: Optional[str] = None
    label: Optional[str] = None
    noslog_config: Optional[str] = None
    local_at_peak: Optional[float] = None
    local_error: Optional[float] = None
    transport_at_peak: Optional[float] = None
    transport_error: Optional[float] = None
    at_threads: List[BenefitAtThreads] = field(default_factory=list)
    state: str = UNKNOWN
    peak_threads: Optional[SidePair] = None
    peak_iops: Optional[SidePair] = None  # where judged (state not unknown)
    why: Optional[BenefitCause] = None  # where judged: the cause for gone/shrinks, else null
    reason: Optional[str] = None  # no-slog-configuration: nothing to judge
    sentence: Optional[str] = None  # report.wording.benefit_over_transport

    @classmethod
    def _typed(cls, d: Dict[str, Any], check: S.Checker, where: str) -> Dict[str, Any]:
        return {"at_threads": BenefitAtThreads.each(d, "at_threads", check, where),
                "peak_threads": SidePair.optional(d, "peak_threads", check, where),
                "peak_iops": SidePair.optional(d, "peak_iops", check, where),
                "why": BenefitCause.optional(d, "why", check, where)}

    @classmethod
    def nothing_to_judge(cls) -> "BenefitEntry":
        """The one entry of a comparison without a sync=always configuration with a SLOG on both sides."""
        return _with_absent(cls(state=cls.UNKNOWN, reason=cls.NO_SLOG_CONFIGURATION),
                            [k for k in cls.KEYS if k not in ("state", "reason", "sentence")])

    @classmethod
    def judged(cls, **fields: Any) -> "BenefitEntry":
        """An entry of a paired candidate (analysis.transport): ``peak_iops`` and ``why`` written only where
        the state is known, no ``reason``."""
        out = cls(**fields)
        return _with_absent(out, ("reason", "sentence") + (("peak_iops", "why") if out.state == cls.UNKNOWN else ()))

    @property
    def no_slog_configuration(self) -> bool:
        return self.reason == self.NO_SLOG_CONFIGURATION

    def worded(self, sentence: str) -> "BenefitEntry":
        """The entry with its sentence (report.wording.benefit_over_transport)."""
        out = copy.copy(self)
        out.sentence = sentence
        return out


def _with_absent(table: Table, absent) -> Any:
    """A table a run makes whose optional keys stay out of the document while they are empty."""
    table._absent = frozenset(absent)
    return table


@dataclass
class CostResult:
    """The ``slogqual.cost/1`` document: the comparison's facts with their words."""

    sources: CostSources
    transport: str  # the transport run's kind: iscsi, nfs
    transport_words: str  # as sentences say it: iSCSI, NFSv3
    load: CostLoad
    local_scenario: str
    transport_scenario: str
    candidates: List[CostCandidate] = field(default_factory=list)
    unmatched_candidates: UnmatchedCandidates = field(default_factory=UnmatchedCandidates)
    steps: List[CostStep] = field(default_factory=list)
    unmatched_steps: List[UnmatchedCostStep] = field(default_factory=list)
    configs: List[ConfigCost] = field(default_factory=list)
    differences: List[str] = field(default_factory=list)  # what differs besides the transport, in words
    slog_benefit: List[BenefitEntry] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict)  # keys no version of slogqual wrote, kept in order
    schema: str = S.COST
    absent: frozenset = frozenset()  # keys the document did not have (kept absent by to_dict)

    _order: tuple = ()  # the keys in the order the document had them (to_dict keeps it)

    _MODELLED = ("schema", "sources", "transport", "transport_words", "load", "local_scenario", "transport_scenario",
                 "candidates", "unmatched_candidates", "steps", "unmatched_steps", "configs", "differences",
                 "slog_benefit")

    @classmethod
    def from_dict(cls, doc: Any, source: str = "<document>") -> "CostResult":
        doc = S.upgrade(doc, S.COST, source)
        c = S.Checker(source)
        return cls(sources=CostSources.from_dict(c.obj(doc, "sources"), c, "sources"),
                   transport=c.text(doc, "transport"), transport_words=c.text(doc, "transport_words"),
                   load=CostLoad.from_dict(c.obj(doc, "load"), c, "load"),
                   local_scenario=c.text(doc, "local_scenario"), transport_scenario=c.text(doc, "transport_scenario"),
                   candidates=CostCandidate.each(doc, "candidates", c),
                   unmatched_candidates=UnmatchedCandidates.from_dict(c.obj(doc, "unmatched_candidates"), c,
                                                                      "unmatched_candidates"),
                   steps=CostStep.each(doc, "steps", c), unmatched_steps=UnmatchedCostStep.each(doc, "unmatched_steps", c),
                   configs=ConfigCost.each(doc, "configs", c), differences=c.texts(doc, "differences"),
                   slog_benefit=BenefitEntry.each(doc, "slog_benefit", c),
                   extra={k: v for k, v in doc.items() if k not in cls._MODELLED}, schema=doc["schema"],
                   absent=frozenset(k for k in cls._MODELLED if k not in doc), _order=tuple(doc))

    @classmethod
    def read(cls, path: str) -> "CostResult":
        """A written document, loaded (``load`` is the document's key: the load both runs share)."""
        return cls.from_dict(load_json(path), path)

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {
            "schema": self.schema, "sources": self.sources.to_dict(), "transport": self.transport,
            "transport_words": self.transport_words, "load": self.load.to_dict(),
            "local_scenario": self.local_scenario, "transport_scenario": self.transport_scenario,
            "candidates": [x.to_dict() for x in self.candidates],
            "unmatched_candidates": self.unmatched_candidates.to_dict(),
            "steps": [x.to_dict() for x in self.steps], "unmatched_steps": [x.to_dict() for x in self.unmatched_steps],
            "configs": [x.to_dict() for x in self.configs], "differences": list(self.differences),
            "slog_benefit": [x.to_dict() for x in self.slog_benefit]}
        return _written(d, self.absent, self.extra, self._order or self._MODELLED)
