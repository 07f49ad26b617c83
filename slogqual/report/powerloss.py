"""The power-loss verdict (analysis/powerloss.py) in words: the verdict's sentence and what each piece of
evidence says, as a device record stores them (``power_loss``: ``text`` and ``evidence[].says``). The device
record, the sweep and qualify call ``judge`` / ``with_evidence`` here, so that a stored record keeps the
sentences people read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional

from slogqual.analysis import powerloss as A

if TYPE_CHECKING:
    from slogqual.results.powercut import PowercutResult

WORDS = {
    A.PROTECTED_MEASURED: "protected (measured)",
    A.HONOURED: "volatile cache, flushes honoured",
    A.NOT_HONOURED: "flushes not honoured (data lost in a power cut)",
    A.NO_VOLATILE: "no volatile cache (reported by the device, not measured)",
    A.PMEM: "persistent memory (durable once flushed from the CPU cache, if the platform persists it; not measured)",
    A.PROTECTED_OR_IGNORED: "volatile cache and a flush that costs almost nothing: either a protected cache (PLP) "
                            "or a flush that is ignored — not measured, run slogqual powercut",
    A.VOLATILE_UNMEASURED: "volatile cache: whether acknowledged writes survive a power cut is not measured",
    A.UNKNOWN: "unknown",
}


def verdict_text(t: A.VerdictText) -> str:
    text = WORDS[t.verdict]
    if t.verdict == A.HONOURED:
        text += " (measured by a power cut)" if t.basis == "measured" else \
            " (inferred from the flush cost; not measured by a power cut)"
    return text


def _flush(s: A.Says) -> str:
    what = f"flush {s.flush_us:.1f} µs mean" + (f", write {s.write_us:.1f} µs" if s.write_us else "") \
        + f" at {s.size} B ({s.source})"
    if s.reading == "void":
        return what + "; the kernel treats the device as write-through and drops flushes, so this figure says nothing " \
                      "of the device"
    if s.reading == "cheap-volatile":
        return what + (f": below {A.CHEAP_FLUSH_US:g} µs with a volatile cache on — a protected cache (PLP) or a "
                       "flush that is ignored; the figure cannot tell which")
    if s.reading == "cheap":
        return what + f": below {A.CHEAP_FLUSH_US:g} µs (nothing to write back)"
    if s.reading == "costly":
        return what + f": above {A.COSTLY_FLUSH_US:g} µs — the flush makes the device write its cache back"
    return what + f": between {A.CHEAP_FLUSH_US:g} and {A.COSTLY_FLUSH_US:g} µs, which tells neither way"


def _power_cut(s: A.Says) -> str:
    t = s.counts
    cut = f"emulated ({s.emulation})" if s.emulation else s.cut or "power cut"
    return (f"{s.verdict.upper()}: {s.cycles} cycle(s), {t['acknowledged']} acknowledged records, {t['lost']} lost "
            f"(torn {t['torn']}, stale {t['stale']}, missing {t['missing']}); cut: {cut}; run {s.run_id}")


def says(s: Any) -> Any:
    """What a piece of evidence says; a line the device's own tools gave is said as it was."""
    if not isinstance(s, A.Says):
        return s
    if s.kind == "write-cache-verdict":
        return f"{s.verdict}: {s.reason}"
    if s.kind == "no-write-cache-state":
        return "the record holds no write-cache state"
    if s.kind == "pmem":
        return "a pmem/NVDIMM namespace: durable once written back from the CPU cache" + (
            "; EMULATED (an emulated NVDIMM persists nothing by itself)" if s.emulated else "")
    if s.kind == "flush":
        return _flush(s)
    return _power_cut(s)


def worded(pl: Dict[str, Any]) -> Dict[str, Any]:
    """A verdict of analysis.powerloss.judge as a record stores it: its text and each piece's words."""
    return dict(pl, text=verdict_text(pl["text"]) if isinstance(pl["text"], A.VerdictText) else pl["text"],
                evidence=[dict(e, says=says(e["says"])) for e in pl["evidence"]])


def judge(device: Dict[str, Any], flush: Optional[Dict[str, Any]] = None,
          powercut: Optional["PowercutResult"] = None) -> Dict[str, Any]:
    """analysis.powerloss.judge, worded."""
    return worded(A.judge(device, flush, powercut))


def with_evidence(device: Dict[str, Any], sweep: Optional[Dict[str, Any]] = None,
                  powercut: Optional["PowercutResult"] = None) -> Dict[str, Any]:
    """analysis.powerloss.with_evidence, its verdict worded: the record as the sweep and qualify store it."""
    rec = A.with_evidence(device, sweep, powercut)
    rec["power_loss"] = worded(rec["power_loss"])
    return rec
