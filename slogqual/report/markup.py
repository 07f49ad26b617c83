"""The pieces every report section is written with, in HTML and in Markdown: escaped text, tables,
key-value tables and verdict boxes. Leaf module: the sections of each document kind (report/scenario.py,
advice.py, qualification.py) and the report builders (html.py, markdown.py) use it; it uses nothing of
the report."""

from __future__ import annotations

import html
from typing import Any, List, Sequence, Tuple

MARKS = {"bad": "**WARNING**", "good": "OK", "neutral": "–"}


# --- HTML -------------------------------------------------------------------------------------------------

def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 99, cls: str = "") -> str:
    out = [f'<table class="{cls}">' if cls else "<table>", "<thead><tr>"]
    out += [f'<th class="num">{esc(h)}</th>' if i >= numeric_from else f"<th>{esc(h)}</th>" for i, h in enumerate(headers)]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(f'<td class="num">{esc(c)}</td>' if i >= numeric_from else f"<td>{esc(c)}</td>"
                                    for i, c in enumerate(row)) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def kv(rows: Sequence[Tuple[str, str]]) -> str:
    return ('<table class="kv"><tbody>' + "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
            + "</tbody></table>")


def verdict_boxes(verdicts: Sequence[Any]) -> str:
    """report.document.Verdict boxes: label, words, up to six lines of detail, coloured by tone."""
    out = ['<div class="verdicts">']
    for v in verdicts:
        detail = "".join(f"<small>{esc(k)}: {esc(val)}</small>" for k, val in v.detail[:6])
        out.append(f'<div class="verdict {v.tone}"><b>{esc(v.label)}</b>{esc(v.text)}{detail}</div>')
    out.append("</div>")
    return "".join(out)


def items(lines: Sequence[str], cls: str = "notes") -> str:
    return f'<ul class="{cls}">' + "".join(f"<li>{esc(x)}</li>" for x in lines) + "</ul>"


# --- Markdown ---------------------------------------------------------------------------------------------

def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 99) -> str:
    out = ["| " + " | ".join(_cell(h) for h in headers) + " |",
           "|" + "|".join("---:" if i >= numeric_from else "---" for i in range(len(headers))) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def md_kv(rows: Sequence[Tuple[str, str]]) -> str:
    return md_table(["", ""], rows)


def md_verdicts(verdicts: Sequence[Any]) -> List[str]:
    """One bullet a verdict: label, words, the tone's mark, up to six lines of detail."""
    out = []
    for v in verdicts:
        detail = "; ".join(f"{k}: {val}" for k, val in v.detail[:6])
        out.append(f"- **{v.label}:** {v.text} ({MARKS[v.tone]})" + (f" — {detail}" if detail else ""))
    return out
