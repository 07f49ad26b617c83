"""The shelf document's words (``slogqual.shelf/1``: sweep --probe, qualify --parallel --probe) and what
``slogqual sweep --probe`` prints: each finding of analysis.shelf in one sentence, stored beside its
figures as ``words``, and the together-vs-alone table. The one place a shelf finding becomes English.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from slogqual.analysis import shelf as A
from slogqual.analysis.shelf import Finding, ShelfAnalysis, Shared


def gb_s(x: Optional[float]) -> str:
    if x is None:
        return "?"
    return f"{x / 1e9:.2f} GB/s" if x >= 1e9 else f"{x / 1e6:.0f} MB/s" if x >= 10e6 else f"{x / 1e6:.1f} MB/s"


def ceiling_text(s: Shared) -> str:
    """What a shared element's ceiling rests on, for words: its link, or the declaration."""
    if s.declared:
        return f"declared {s.declared}"
    return s.link or "no link"


def finding_words(f: Finding) -> str:
    """One sentence of a finding, for the CLI and reports; the figures stay in the finding."""
    g = f.figures
    n = len(f.units)
    if f.kind == A.SCALED:
        return (f"{n} units alone {gb_s(g['alone_sum'])} summed, together {gb_s(g['together'])} "
                f"({g['ratio']:.0%}): they scaled")
    if f.kind == A.CAPPED:
        e = f.element
        return (f"{n} units alone {gb_s(g['alone_sum'])} summed, together {gb_s(g['together'])}: they share "
                f"{e.label} ({ceiling_text(e)}), whose ceiling of {gb_s(g['ceiling'])} caps them "
                f"(together reached {g['of_ceiling']:.0%} of it)")
    if f.kind == A.SHORT:
        text = f"{n} units alone {gb_s(g['alone_sum'])} summed, together {gb_s(g['together'])} ({g['ratio']:.0%})"
        if f.element is not None:
            return (text + f": below the lowest ceiling they share, {f.element.label} ({ceiling_text(f.element)}, "
                    f"{gb_s(g['nearest_ceiling'])}, reached {g['of_ceiling']:.0%}); the limit is not on the "
                    "path as read (a cable, the host, the units themselves)")
        return text + ": no element they share has a ceiling that explains it"
    if f.kind == A.HELD:
        e = f.element
        behind = f"{e.label}" + (f" ({g['pci_function']})" if g.get("pci_function") else "")
        why = (f"the lowest ceiling on it, {g['nearest']}'s {gb_s(g['nearest_ceiling'])}, is not what stops them"
               if g.get("nearest_ceiling") else "its path gives no ceiling for it: --path-ceiling declares one")
        return (f"{n} units behind {behind} alone {gb_s(g['alone_sum'])} summed, together {gb_s(g['together'])} "
                f"({g['ratio']:.0%}), while the {g['outside_units']} outside it kept {g['outside_ratio']:.0%}: "
                f"the path they share holds them back ({why})")
    if f.kind == A.SLOW_LINK:
        return (f"{f.units[0]} alone {gb_s(g['alone'])}, {g['ratio']:.0%} of its identical siblings' "
                f"{gb_s(g['siblings_median'])}: its slot {g['slot']} negotiated {g['link']} "
                f"({gb_s(g['link_ceiling'])}) where theirs have {g['siblings_link']} "
                f"({gb_s(g['siblings_link_ceiling'])})")
    if f.kind == A.SLOW_UNIT:
        where = f" in slot {g['slot']} ({g['link']})" if g.get("slot") else ""
        return (f"{f.units[0]}{where} alone {gb_s(g['alone'])}, {g['ratio']:.0%} of its identical siblings' "
                f"{gb_s(g['siblings_median'])}, on the same link as theirs: the unit itself is slower")
    return f.kind


def finding_dict(f: Finding) -> Dict[str, Any]:
    """A finding as the shelf document holds it: its facts, then its sentence (``words``)."""
    return dict(f.to_dict(), words=finding_words(f))


def analysis_dict(a: ShelfAnalysis) -> Dict[str, Any]:
    """One size's analysis as the shelf document holds it, every finding with its sentence."""
    return dict(a.to_dict(), findings=[finding_dict(f) for f in a.findings])


def shelf_table(probe: Any) -> str:
    """--probe's figures per size (each alone summed, together) and each size's findings in words
    (``probe``: sweep.shelf_probe.ShelfProbe)."""
    lines = ["together vs alone", "  size    alone MB/s (sum)    together MB/s    together/alone"]
    for s in probe.sizes:
        a = s.analysis
        ratio = f"{a.together / a.alone_sum:.0%}" if a.together is not None and a.alone_sum else "-"
        together = f"{a.together / 1e6:.1f}" if a.together is not None else "-"
        lines.append(f"{s.label:>6}    {a.alone_sum / 1e6:>16.1f}    {together:>13}    {ratio:>14}")
    for s in probe.sizes:
        for f in s.analysis.findings:
            lines.append(f"{s.label}: {finding_words(f)}")
    return "\n".join(lines)
