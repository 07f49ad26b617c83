#!/usr/bin/env python3
"""Write the "Every module" section of docs/architecture.md from the tree: each room (contrib/house.py's
rooms and layers) and each module in it with the first sentence of its docstring. The rest of the page is
written by hand; tests/test_architecture.py fails when a module is missing from the page or the page names
one that is gone, and this regenerates the section (then read the diff: a docstring that says nothing shows).

    python3 contrib/architecture_rooms.py            # rewrite the section in place
    python3 contrib/architecture_rooms.py --check    # exit 1 if the section is not what the tree gives
"""

from __future__ import annotations

import ast
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import house  # noqa: E402

DOC = os.path.join(ROOT, "docs", "architecture.md")
START, END = "<!-- every module: contrib/architecture_rooms.py -->", "<!-- end of every module -->"


def first_sentence(path: str) -> str:
    doc = ast.get_docstring(ast.parse(open(path, encoding="utf-8").read())) or ""
    para = " ".join(doc.split("\n\n")[0].split())
    cut = para.find(". ")
    return (para[:cut + 1] if 0 < cut < 220 else para[:220] + ("…" if len(para) > 220 else "")) or "(no docstring)"


def section() -> str:
    d = house.draw(ROOT)
    out = [START, ""]
    for layer, rooms in house.LAYERS[::-1]:
        for room in rooms:
            if room not in d["rooms"]:
                continue
            out.append(f"### `{room}/` ({layer})" if room != "slogqual" else f"### `slogqual/*.py` ({layer})")
            out.append("")
            for m in d["rooms"][room]:
                path = m.replace(".", os.sep)
                path = os.path.join(path, "__init__.py") if os.path.isdir(os.path.join(ROOT, path)) else path + ".py"
                rel = os.path.relpath(path, "slogqual").replace(os.sep, "/")
                out.append(f"- `{rel}` — {first_sentence(os.path.join(ROOT, path))}")
            out.append("")
    out.append(END)
    return "\n".join(out)


def main(argv) -> int:
    text = open(DOC, encoding="utf-8").read()
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    new = head + section() + tail
    if "--check" in argv:
        return 0 if new == text else 1
    with open(DOC, "w", encoding="utf-8") as fh:
        fh.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
