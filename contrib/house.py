#!/usr/bin/env python3
"""The drawing of slogqual's house, from its source: the rooms (packages under slogqual/, and the leaf
modules at its top), the modules in each, and every import arrow between rooms — with the arrows that run
*up* the layers named. Read from the code with an ast walk (module-level and function-local imports alike;
nothing is imported or run), so anyone can draw any commit:

    python3 contrib/house.py                 # this tree
    python3 contrib/house.py --tree DIR      # another checkout (git worktree add DIR COMMIT)
    python3 contrib/house.py --json          # the same, for machines

The layers (docs/architecture.md): a room may import rooms on its own layer or below. An arrow from a
lower layer to a higher one is an arrow up; the drawing lists each with the modules that make it.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from collections import defaultdict
from typing import Dict, List, Set, Tuple

# Lowest first. A room not named here is reported as unplaced (the drawing must place every room).
LAYERS: List[Tuple[str, Tuple[str, ...]]] = [
    ("leaves", ("slogqual",)),  # the top-level modules: units, errors, limits, process, paths, progress, ...
    ("documents and facts", ("results", "analysis")),
    ("the machine", ("tools", "kernel", "importers", "native")),
    ("words and keeping", ("report", "store")),
    # the device record (slogqual.device/1) carries its power-loss verdict in words: it stands on report/
    ("the device", ("device",)),
    ("capabilities", ("sweep", "pool", "powercut", "qualify", "host", "lab")),
    ("the command line", ("cli",)),
]
LEVEL = {room: i for i, (_name, rooms) in enumerate(LAYERS) for room in rooms}


def modules(tree: str) -> Dict[str, str]:
    """Dotted module name -> file, for every .py under TREE/slogqual."""
    pkg = os.path.join(tree, "slogqual")
    out = {}
    for root, _dirs, files in os.walk(pkg):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                rel = os.path.relpath(path, tree)[:-3].replace(os.sep, ".")
                out[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = path
    return out


def room_of(module: str, packages: Set[str]) -> str:
    """``slogqual.x.…`` lives in room x where x is a package; the top-level modules are the room "slogqual",
    but for ``__main__``, the command line's own entry (``python -m slogqual``)."""
    if module == "slogqual.__main__":
        return "cli"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and "slogqual." + parts[1] in packages else "slogqual"


def imports(module: str, path: str, known: Set[str]) -> Set[str]:
    """The slogqual modules a file imports (``from slogqual import x`` names the module x where it is one)."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            for a in node.names:
                out.add(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base)
    return {m for m in out if m in known}


def draw(tree: str) -> Dict[str, object]:
    mods = modules(tree)
    packages = {m for m, p in mods.items() if p.endswith("__init__.py")}
    rooms: Dict[str, List[str]] = defaultdict(list)
    for m in mods:
        rooms[room_of(m, packages)].append(m)
    arrows: Dict[Tuple[str, str], Set[str]] = defaultdict(set)
    for m, path in mods.items():
        for target in imports(m, path, set(mods)):
            a, b = room_of(m, packages), room_of(target, packages)
            if a != b:
                arrows[(a, b)].add(f"{m} -> {target}")
    up = {k: v for k, v in arrows.items() if k[0] in LEVEL and k[1] in LEVEL and LEVEL[k[1]] > LEVEL[k[0]]}
    return {
        "rooms": {r: sorted(ms) for r, ms in sorted(rooms.items(), key=lambda kv: (LEVEL.get(kv[0], 99), kv[0]))},
        "unplaced": sorted(r for r in rooms if r not in LEVEL),
        "arrows": {f"{a} -> {b}": len(v) for (a, b), v in sorted(arrows.items())},
        "arrows_up": {f"{a} -> {b}": sorted(v) for (a, b), v in sorted(up.items())},
    }


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tree", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   help="a checkout of slogqual (default: this one)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if not os.path.isdir(os.path.join(args.tree, "slogqual")):
        print(f"house: {args.tree} has no slogqual/ package", file=sys.stderr)
        return 2
    d = draw(args.tree)
    if args.json:
        print(json.dumps(d, indent=2))
        return 0
    rooms = d["rooms"]
    print(f"{sum(len(v) for v in rooms.values())} modules in {len(rooms)} rooms")
    for name, members in LAYERS[::-1]:
        placed = [r for r in members if r in rooms]
        if placed:
            print(f"\n[{name}]")
            for r in placed:
                short = [m.split(".")[-1] if m != "slogqual" else "__init__" for m in rooms[r]]
                print(f"  {r + '/' if r != 'slogqual' else 'slogqual/*.py'} ({len(short)}): {' '.join(short)}")
    for r in d["unplaced"]:
        print(f"\n[unplaced] {r}/ ({len(rooms[r])}): {' '.join(m.split('.')[-1] for m in rooms[r])}")
    print(f"\narrows between rooms: {len(d['arrows'])}; arrows up: {len(d['arrows_up'])}")
    for k, v in d["arrows_up"].items():
        print(f"  UP {k} ({len(v)} imports): " + "; ".join(v))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
