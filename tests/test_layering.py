"""The layering rules of README's layout, checked on the source (an ast walk, no imports run):

- nothing below the CLI imports ``slogqual.cli`` (the CLI parses and prints; the work is in the library);
- only ``slogqual/tools/`` imports ``subprocess`` (one door per external program, one error contract);
- ``results`` and ``analysis`` import no tools (they never start a process);
- ``slogqual/kernel/`` (sysfs and procfs, the kernel's files) imports no tools: it reads files and is
  below the programs' modules, which stand on it;
- only ``slogqual/tools/`` starts a process through ``slogqual.tools.spawn``'s launchers (``run``,
  ``run_checked``, ``popen``, ``get_version``, ``Background``): a caller asks its program's module for a
  typed function (``zpool.iostat_stream(pool)``, ``qemu.start(argv, ...)``) and keeps its own logic;
- nothing below the CLI builds a slogqual command line (``slogqual …``, ``python -m slogqual…``): a
  helper process is a library module run through ``slogqual/tools/pymodule.py``;
- no module imports itself back through others: the package's import graph (module-level and
  function-local imports alike) has no cycle;
- ``analysis`` returns facts: no f-string there builds a sentence (outside an error's message), every
  sentence a user reads is made in ``report`` (issue #38).
"""

import ast
import os
import re

import pytest

PKG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "slogqual")


def modules():
    for root, _dirs, files in os.walk(PKG):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(root, name)
                rel = os.path.relpath(path, os.path.dirname(PKG))
                yield rel.replace(os.sep, "/"), path


def from_module(node, package):
    """The module a ``from … import`` statement in ``package`` names, a relative one resolved."""
    base = node.module or ""
    if node.level:
        parts = package.split(".")
        base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
    return base


def source_violations(check):
    """``check(source, rel)``'s findings over every module of the package."""
    found = []
    for rel, path in modules():
        with open(path, encoding="utf-8") as fh:
            found += check(fh.read(), rel)
    return found


def imported(path):
    """Every module name an import statement in the file names (relative imports resolved)."""
    rel = os.path.relpath(path, os.path.dirname(PKG))
    package = os.path.dirname(rel).replace(os.sep, ".")
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = from_module(node, package)
            out.append((base, node.lineno))
            out += [(f"{base}.{a.name}", node.lineno) for a in node.names]  # from slogqual import cli
    return out


def under(name, prefix):
    return name == prefix or name.startswith(prefix + ".")


def violations(rule):
    found = []
    for rel, path in modules():
        for name, line in imported(path):
            why = rule(rel, name)
            if why:
                found.append(f"{rel}:{line}: imports {name} ({why})")
    return sorted(set(found))


def no_cli_below_cli(rel, name):
    if not rel.startswith("slogqual/cli/") and rel != "slogqual/__main__.py" and under(name, "slogqual.cli"):
        return "only the CLI and __main__ may import slogqual.cli"
    return ""


def subprocess_only_in_tools(rel, name):
    if under(name, "subprocess") and not rel.startswith("slogqual/tools/"):
        return "external programs start in slogqual/tools/ only"
    return ""


def leaves_import_no_tools(rel, name):
    if (rel.startswith("slogqual/results/") or rel.startswith("slogqual/analysis/")) and \
            (under(name, "slogqual.tools") or under(name, "subprocess")):
        return "results and analysis never start a process"
    return ""


def kernel_imports_no_tools(rel, name):
    if rel.startswith("slogqual/kernel/") and (under(name, "slogqual.tools") or under(name, "subprocess")):
        return "the kernel's files are read, no program is started; tools stand on kernel, not the other way"
    return ""


# what analysis/ and results/ stand on: each other and the leaves below every room (units, errors, the
# options' ranges, the exit-code contract's pid check). Nothing above them: not report/ (words are made there
# from the facts analysis returns), not a capability room, not the CLI. Not slogqual.kernel either, though it
# starts no process: it reads the machine slogqual runs on, and analysis works on facts handed to it (a
# result's recorded paths), never on the live host.
LEAF_FOUNDATIONS = ("slogqual.analysis", "slogqual.results", "slogqual.units", "slogqual.errors", "slogqual.limits",
                    "slogqual.versions",
                    "slogqual.process")


def leaves_import_nothing_above(rel, name):
    if not (rel.startswith("slogqual/results/") or rel.startswith("slogqual/analysis/")):
        return ""
    if under(name, "slogqual") and name != "slogqual" and not any(under(name, f) for f in LEAF_FOUNDATIONS):
        return "analysis and results return facts and documents; they import nothing above them"
    return ""


@pytest.mark.parametrize("rule", [no_cli_below_cli, subprocess_only_in_tools, leaves_import_no_tools,
                                  kernel_imports_no_tools, leaves_import_nothing_above])
def test_layering(rule):
    assert violations(rule) == []


def test_the_walk_sees_the_violations_it_is_there_to_catch(tmp_path, monkeypatch):
    # the rules themselves, on files that break them (so the test above cannot pass by seeing nothing)
    pkg = tmp_path / "slogqual"
    (pkg / "pool").mkdir(parents=True)
    (pkg / "analysis").mkdir()
    (pkg / "pool" / "x.py").write_text("from slogqual import cli\nimport subprocess\n")
    (pkg / "analysis" / "y.py").write_text("from ..tools import fio\n")
    monkeypatch.setattr(__import__(__name__), "PKG", str(pkg))
    assert violations(no_cli_below_cli) == ["slogqual/pool/x.py:1: imports slogqual.cli "
                                            "(only the CLI and __main__ may import slogqual.cli)"]
    assert [v.split(":")[0] for v in violations(subprocess_only_in_tools)] == ["slogqual/pool/x.py"]
    assert violations(leaves_import_no_tools) == ["slogqual/analysis/y.py:1: imports slogqual.tools "
                                                  "(results and analysis never start a process)",
                                                  "slogqual/analysis/y.py:1: imports slogqual.tools.fio "
                                                  "(results and analysis never start a process)"]
    (pkg / "analysis" / "z.py").write_text("from slogqual.report import wording\nfrom slogqual.units import MiB\n"
                                           "from slogqual.kernel import sysfs\n")
    assert [v.split(" (")[0] for v in violations(leaves_import_nothing_above)] == [
        "slogqual/analysis/y.py:1: imports slogqual.tools", "slogqual/analysis/y.py:1: imports slogqual.tools.fio",
        "slogqual/analysis/z.py:1: imports slogqual.report", "slogqual/analysis/z.py:1: imports slogqual.report.wording",
        "slogqual/analysis/z.py:3: imports slogqual.kernel", "slogqual/analysis/z.py:3: imports slogqual.kernel.sysfs"]
    (pkg / "kernel").mkdir()
    (pkg / "kernel" / "procfs.py").write_text("from slogqual.errors import ToolOutputError\n"
                                              "from ..tools import zpool\n")
    assert [v.split(" (")[0] for v in violations(kernel_imports_no_tools)] == [
        "slogqual/kernel/procfs.py:2: imports slogqual.tools", "slogqual/kernel/procfs.py:2: imports slogqual.tools.zpool"]


# --- every process starts in its program's module --------------------------------------------------------

SPAWN = "slogqual.tools.spawn"
# what starts a program (or, get_version, runs one): called, or passed on as a value (a runner), outside
# tools/ it is a process started away from its program's module. The rest of spawn is free to use: its
# errors (failure, parse_failed, parse_text, install_advice), which(), stopped_by(), and Background as a
# type (an annotation is no start; constructing one is).
SPAWN_LAUNCHERS = ("run", "run_checked", "popen", "get_version", "Background")
SPAWN_FUNCTIONS = ("run", "run_checked", "popen", "get_version")


def _dotted(node, names):
    """``a.b.c`` of an attribute chain, its first name replaced by the module it is bound to (None for
    anything else)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in names:
        return None
    return ".".join([names[node.id], *reversed(parts)])


def spawn_launches(source, rel):
    """Where ``source`` (the text of ``rel``) starts a process through slogqual.tools.spawn: a call of a
    launcher on a name bound to the module (``import slogqual.tools.spawn as s``, ``from slogqual.tools
    import spawn as _run``, ``import slogqual.tools.spawn``), a launcher function taken as a value
    (``runner=_run.run``), or a launcher imported by name (``from slogqual.tools.spawn import run``).
    Bindings are file-wide (a function-local import counts for the whole file: a lint, not a scope walk)."""
    tree = ast.parse(source, rel)
    package = os.path.dirname(rel).replace("/", ".")
    names, found = {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    names[a.asname] = a.name
                else:
                    names[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = from_module(node, package)
            for a in node.names:
                names[a.asname or a.name] = f"{base}.{a.name}"
                if base == SPAWN and a.name in SPAWN_LAUNCHERS:
                    found.append((node.lineno, f"imports {a.name} from {SPAWN}"))
    called = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func, names)
            if name and name.rpartition(".")[0] == SPAWN and name.rpartition(".")[2] in SPAWN_LAUNCHERS:
                found.append((node.lineno, f"calls {name}"))
                called.add(id(node.func))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in called:
            name = _dotted(node, names)
            if name and name.rpartition(".")[0] == SPAWN and name.rpartition(".")[2] in SPAWN_FUNCTIONS:
                found.append((node.lineno, f"takes {name} as a value"))
    return sorted(found)


def spawn_violations(source, rel):
    if rel.startswith("slogqual/tools/"):
        return []
    return [f"{rel}:{line}: {what} (start the program in its slogqual/tools/ module, a typed function there)"
            for line, what in spawn_launches(source, rel)]


def test_every_process_starts_in_its_programs_tools_module():
    assert source_violations(spawn_violations) == []


@pytest.mark.parametrize("source, what", [
    ('from slogqual.tools import spawn as _run\nproc = _run.run(["zpool", "list"], timeout=60)\n',
     "calls slogqual.tools.spawn.run"),
    ('from slogqual.tools import spawn\nbg = spawn.Background(argv, grace_s=10).start()\n',
     "calls slogqual.tools.spawn.Background"),
    ('import slogqual.tools.spawn\nout = slogqual.tools.spawn.run_checked(argv)\n',
     "calls slogqual.tools.spawn.run_checked"),
    ('import slogqual.tools.spawn as s\np = s.popen(argv)\n', "calls slogqual.tools.spawn.popen"),
    ('from ..tools import spawn as _run\nv = _run.get_version("fio", ["--version"], r"(\\d+)")\n',
     "calls slogqual.tools.spawn.get_version"),
    ('def f(argv):\n    from slogqual.tools import spawn as _run\n    return _run.run(argv)\n',
     "calls slogqual.tools.spawn.run"),
    ('from slogqual.tools.spawn import run\n', "imports run from slogqual.tools.spawn"),
    ('from slogqual.tools.spawn import Background as Bg\n', "imports Background from slogqual.tools.spawn"),
    ('from slogqual.tools import spawn as _run\nhost = Host(runner=_run.run)\n',
     "takes slogqual.tools.spawn.run as a value"),
])
def test_the_spawn_rule_sees_a_planted_start_outside_tools(source, what):
    found = spawn_violations(source, "slogqual/pool/x.py")
    assert len(found) == 1 and found[0].startswith("slogqual/pool/x.py:") and what in found[0], found
    assert spawn_violations(source, "slogqual/tools/x.py") == []  # a program's own module may


def test_the_spawn_rule_lets_the_rest_of_spawn_through():
    source = ('from typing import Optional\n'
              'from slogqual.tools import spawn as _run\n'
              'from slogqual.tools import zpool as _zpool\n'
              'from slogqual.tools.spawn import stopped_by\n'
              'qemu: Optional[_run.Background] = None\n'
              'hint = _run.install_advice("zpool")\n'
              'if _run.which("zpool") is None:\n'
              '    raise _run.failure(["zpool"], 1, "")\n'
              'stream = _zpool.iostat_stream("tank")\n'
              'run = other.run(argv)\n')
    assert spawn_violations(source, "slogqual/pool/x.py") == []


def argv_outside_tools(path, rel):
    """List literals starting with a program slogqual knows (tools/spawn.PROGRAMS), outside tools/: an
    argv built away from its tool's module."""
    from slogqual.tools.spawn import PROGRAMS
    if rel.startswith("slogqual/tools/"):
        return []
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    return [f"{rel}:{n.lineno}: an argv for {n.elts[0].value} (build it in slogqual/tools/)"
            for n in ast.walk(tree)
            if isinstance(n, ast.List) and n.elts and isinstance(n.elts[0], ast.Constant)
            and n.elts[0].value in PROGRAMS]


def test_every_argv_is_built_in_its_tools_module():
    found = [v for rel, path in modules() for v in argv_outside_tools(path, rel)]
    assert found == []


def test_the_argv_rule_sees_an_argv_outside_tools(tmp_path):
    bad = tmp_path / "x.py"
    bad.write_text('argv = ["udevadm", "settle"]\nok = ["slogqual", "scenario", "run"]\n')
    assert argv_outside_tools(str(bad), "slogqual/pool/x.py") == [
        "slogqual/pool/x.py:1: an argv for udevadm (build it in slogqual/tools/)"]


def bare_exit_codes(path, rel):
    """The integers 130 and 141 (Ctrl-C/SIGTERM, a closed stdout) written out rather than named:
    slogqual.process.EXIT_INTERRUPTED and EXIT_BROKEN_PIPE are the one place they are defined. An
    operand of arithmetic (analysis/shelf.py's ratio 128 / 130) is no exit code."""
    if rel == "slogqual/process.py":
        return []
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    operands = {id(side) for n in ast.walk(tree) if isinstance(n, ast.BinOp) for side in (n.left, n.right)}
    return [f"{rel}:{n.lineno}: exit code {n.value} (use slogqual.process's name for it)" for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and type(n.value) is int and n.value in (130, 141)
            and id(n) not in operands]


def test_exit_codes_130_and_141_are_named_where_they_are_used():
    from slogqual import process
    assert (process.EXIT_INTERRUPTED, process.EXIT_BROKEN_PIPE) == (130, 141)
    assert [v for rel, path in modules() for v in bare_exit_codes(path, rel)] == []


def test_the_exit_code_rule_sees_a_bare_130(tmp_path):
    bad = tmp_path / "x.py"
    bad.write_text("def f():\n    return 130\n\n\nratio = 128 / 130\nUnit(exit_code=141)\n")
    assert bare_exit_codes(str(bad), "slogqual/cli/x.py") == [
        "slogqual/cli/x.py:2: exit code 130 (use slogqual.process's name for it)",
        "slogqual/cli/x.py:6: exit code 141 (use slogqual.process's name for it)"]


# --- the CLI is the user's door: library code never starts it by its command words ------------------------

CLI_MODULES = ("slogqual.cli", "slogqual.__main__")

# Lab guest job commands: the command line the guest's job.sh runs, as a user at the guest's shell would
# (`slogqual lab run -- CMD` takes the same), on another machine; the library does not start it here.
# Named by file and function, so that nothing else in those files is let through.
GUEST_JOB_COMMANDS = {
    ("slogqual/lab/scenario.py", "guest_command"): "the scenario run inside the lab guest",
}


def _text(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _is_cli_module(name):
    return name == "slogqual" or any(under(name, m) for m in CLI_MODULES)


def cli_argvs(source, rel):
    """Where ``source`` (the text of ``rel``) builds an argv of the slogqual command line: a list or tuple
    display whose first element is "slogqual" (the console script), or a display or call arguments where
    "-m" is followed by "slogqual", "slogqual.cli…" or "slogqual.__main__". Only argv[0] and the word
    after "-m" count: "slogqual" elsewhere is a name (a directory in os.path.join(base, "slogqual"), a
    document key in report/powercut.py's tuple of run keys), and "slogqual.tools" after getLogger( is a
    logger. Returns [(line, function, what)]."""
    found = []

    def visit(node, func):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            func = node.name
        seqs = []
        if isinstance(node, (ast.List, ast.Tuple)):
            seqs.append((node.elts, True))
        elif isinstance(node, ast.Call):
            seqs.append((node.args, False))
            f = node.func  # pymodule.argv("slogqual.cli…", …): the door refuses it when it runs; here before
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "pymodule" \
                    and f.attr in ("argv", "background") and node.args and _is_cli_module(_text(node.args[0]) or ""):
                found.append((node.lineno, func, f'pymodule.{f.attr}("{_text(node.args[0])}") (the command line)'))
        for elts, display in seqs:
            words = [_text(e) for e in elts]
            if display and words and words[0] == "slogqual":
                found.append((node.lineno, func, 'argv[0] "slogqual" (the console script)'))
            for a, b in zip(words, words[1:]):
                if a == "-m" and b is not None and _is_cli_module(b):
                    found.append((node.lineno, func, f'"-m", "{b}" (the command line as a module)'))
        for child in ast.iter_child_nodes(node):
            visit(child, func)

    visit(ast.parse(source, rel), None)
    return found


def cli_argv_violations(source, rel):
    if rel.startswith("slogqual/cli/") or rel == "slogqual/__main__.py":
        return []
    return [f"{rel}:{line}: builds a slogqual CLI argv: {what} (run a library module through "
            "slogqual/tools/pymodule.py)"
            for line, func, what in cli_argvs(source, rel) if (rel, func) not in GUEST_JOB_COMMANDS]


def test_no_library_code_starts_the_cli_by_its_command_words():
    assert source_violations(cli_argv_violations) == []


def test_the_guest_job_commands_let_through_are_still_there():
    # an exception that no longer matches anything is one that would let the next argv through unseen
    seen = source_violations(lambda source, rel: [(rel, func) for _line, func, _what in cli_argvs(source, rel)])
    assert set(GUEST_JOB_COMMANDS) <= set(seen)


@pytest.mark.parametrize("source, what", [
    ('import sys\nargv = [sys.executable, "-m", "slogqual", "powercut", "write"]\n', '"-m", "slogqual"'),
    ('argv = ["slogqual", "sweep", "/dev/sdx"]\n', 'argv[0] "slogqual"'),
    ('import sys\nargv = (sys.executable, "-m", "slogqual.cli", "sweep")\n', '"-m", "slogqual.cli"'),
    ('import sys\nargv = [sys.executable, "-m", "slogqual.__main__"] + ["lab"]\n', '"-m", "slogqual.__main__"'),
    ('import os, sys\nos.execl(sys.executable, sys.executable, "-m", "slogqual", "sweep")\n', '"-m", "slogqual"'),
    ('def guest_command():\n    return ["slogqual", "sweep"]\n', 'argv[0] "slogqual"'),  # not in lab/scenario.py
    ('from slogqual.tools import pymodule\nw = pymodule.background("slogqual.cli", ["sweep"])\n',
     'pymodule.background("slogqual.cli")'),
])
def test_the_cli_argv_rule_sees_a_planted_cli_argv(source, what):
    found = cli_argv_violations(source, "slogqual/pool/x.py")
    assert len(found) == 1 and found[0].startswith("slogqual/pool/x.py:") and what in found[0], found
    assert cli_argv_violations(source, "slogqual/cli/x.py") == []  # the CLI itself may


def test_the_cli_argv_rule_lets_library_modules_and_names_through():
    source = ('import logging, os, sys\n'
              'argv = [sys.executable, "-m", "slogqual.powercut.writer", "dev.img"]\n'
              'log = logging.getLogger("slogqual.tools")\n'
              'store = os.path.join(os.path.expanduser("~"), "slogqual", "results.sqlite")\n'
              'keys = ("run_id", "host", "slogqual")\n'
              'doc = {"slogqual": "1.0"}\n'
              'prefix = ["slogqual.powercut/1", "slogqual.sweep/1"]\n')
    assert cli_argv_violations(source, "slogqual/pool/x.py") == []


def test_the_pymodule_door_runs_library_modules_and_refuses_the_cli():
    import sys

    from slogqual.tools import pymodule

    assert pymodule.argv("slogqual.powercut.writer", ["dev.img", 1]) == [sys.executable, "-m",
                                                                        "slogqual.powercut.writer", "dev.img", "1"]
    for name in ("slogqual", "slogqual.cli", "slogqual.cli.powercut", "slogqual.__main__", "os", "slogqual.",
                 "slogqual.powercut.writer; rm -rf /", "-m"):
        with pytest.raises(ValueError):
            pymodule.argv(name, [])
    assert pymodule.background("slogqual.powercut.writer", ["x"]).argv[:3] == [sys.executable, "-m",
                                                                              "slogqual.powercut.writer"]


# --- no import cycle ----------------------------------------------------------------------------------

def module_name(rel):
    """``slogqual/device/__init__.py`` -> ``slogqual.device``, ``slogqual/device/linux.py`` -> ``slogqual.device.linux``."""
    name = rel[:-len(".py")].replace("/", ".")
    return name[:-len(".__init__")] if name.endswith(".__init__") else name


def import_edges(path, known):
    """The package modules the file's imports run, each with the line of the first import of it.

    ``from P import N`` depends on the module P.N when there is one, else on P (N is a name P's code
    defines). The parent packages the import system runs first are not edges: every submodule would
    otherwise be in a cycle with a package ``__init__`` that imports it, which Python resolves by
    design. A function-local import is an edge like any other: it runs on the call, in the middle of
    whatever imported the caller."""
    rel = os.path.relpath(path, os.path.dirname(PKG)).replace(os.sep, "/")
    package = module_name(rel) if rel.endswith("/__init__.py") else os.path.dirname(rel).replace("/", ".")
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    edges = {}
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = from_module(node, package)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for t in targets:
            while t and t not in known:  # import slogqual.tools.spawn.X never happens; a.b.c of a.b's module
                t = t.rpartition(".")[0]
            if t:
                edges[t] = min(edges.get(t, node.lineno), node.lineno)
    return edges


def import_graph():
    """{module: {imported module: line}} for every module of the package."""
    files = {module_name(rel): path for rel, path in modules()}
    return {mod: import_edges(path, files) for mod, path in files.items()}


def import_cycles(graph):
    """One cycle per strongly connected group of modules (Tarjan), each as the list of imports that
    close it: ``[(module, line, imported module), ...]`` from the group's first module back to it."""
    index, low, on_stack, stack, groups = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1 or v in graph.get(v, {}):
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_cycle_in(graph, g) for g in groups]


def _cycle_in(graph, group):
    """A shortest path of imports from the group's first module back to it, inside the group."""
    start = min(group)
    paths = {start: []}
    todo = [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph[v]):
            if w not in group:
                continue
            step = paths[v] + [(v, graph[v][w], w)]
            if w == start:
                return step
            if w not in paths:
                paths[w] = step
                todo.append(w)
    raise AssertionError(f"no cycle in the group {sorted(group)}")


def show_cycle(cycle):
    return " -> ".join(f"{a} (line {line})" for a, line, _b in cycle) + f" -> {cycle[-1][2]}"


# Imports left out of the cycle check, each a known cycle with its reason. Nothing else may close one.
_TRANSPORT_DISPATCH = ("pool/transport/__init__.py attach() picks the transport's module by a call-time import, "
                       "and those modules import the vocabulary (Attached, iqn_for, LOOPBACK, ISCSI_PORT) from the "
                       "package's __init__: untying it means moving that vocabulary to a module of its own (not "
                       "the device room's change, issue #27)")
ALLOWED_CYCLE_EDGES = {("slogqual.pool.transport", f"slogqual.pool.transport.{m}"): _TRANSPORT_DISPATCH
                       for m in ("freebsd_iscsi", "freebsd_nfs", "iscsi", "nfs", "local")}


def test_no_import_cycle():
    graph = import_graph()
    stale = [edge for edge in ALLOWED_CYCLE_EDGES if edge[1] not in graph.get(edge[0], {})]
    assert stale == [], "allowed imports that no longer exist (take them off ALLOWED_CYCLE_EDGES)"
    for importer, imported_module in ALLOWED_CYCLE_EDGES:
        del graph[importer][imported_module]
    cycles = [show_cycle(c) for c in import_cycles(graph)]
    assert cycles == [], "import cycles:\n" + "\n".join(cycles)


def test_the_cycle_walk_sees_a_cycle_through_a_function_local_import(tmp_path, monkeypatch):
    pkg = tmp_path / "slogqual"
    (pkg / "device").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "device" / "__init__.py").write_text("from slogqual.device.a import f\n")
    (pkg / "device" / "a.py").write_text("def f():\n    from . import b\n")
    (pkg / "device" / "b.py").write_text("import os\nfrom slogqual.device.a import f\n")
    (pkg / "device" / "c.py").write_text("from slogqual.device import a, b\n")  # no cycle: c is imported by no one
    monkeypatch.setattr(__import__(__name__), "PKG", str(pkg))
    assert [show_cycle(c) for c in import_cycles(import_graph())] == [
        "slogqual.device.a (line 2) -> slogqual.device.b (line 2) -> slogqual.device.a"]


# --- analysis returns facts: the sentences people read are made in report/ (issue #38) ------------------

SENTENCE_WORDS = 2  # literal words of an f-string that make it a sentence ("{a} vs {b}", "{x} µs" are not)

# Sentences still built in analysis/, each by file and function, with why and what moves it. Nothing else
# may build one there.
SENTENCES_PENDING = {}  # none left: the power-cut result's one-line summary moved to report/powercut (#38)


def _words(text):
    """The words of an f-string's literal text: whitespace-separated runs holding two letters in a row."""
    return [w for w in text.split() if re.search(r"[A-Za-z]{2}", w)]


def sentence_fstrings(source, rel):
    """Where ``source`` (the text of ``rel``) builds a sentence: an f-string whose literal text holds
    SENTENCE_WORDS words or more. Not counted: an f-string in a raise statement (the one line an error
    says: bad input, a refusal) and one that is a dict key. Returns [(line, function, its words)]."""
    tree = ast.parse(source, rel)
    skip = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Raise):
            skip |= {id(m) for m in ast.walk(n)}
        elif isinstance(n, ast.Dict):
            skip |= {id(m) for k in n.keys if k is not None for m in ast.walk(k)}
    found = []

    def visit(node, func):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            func = node.name
        if isinstance(node, ast.JoinedStr) and id(node) not in skip:
            words = _words("".join(v.value for v in node.values
                                   if isinstance(v, ast.Constant) and isinstance(v.value, str)))
            if len(words) >= SENTENCE_WORDS:
                found.append((node.lineno, func, " ".join(words)))
        for child in ast.iter_child_nodes(node):
            visit(child, func)

    visit(tree, None)
    return found


def sentence_violations(source, rel):
    if not rel.startswith("slogqual/analysis/"):
        return []
    return [f"{rel}:{line}: a sentence built in analysis ({words!r}): return the facts, word them in report/"
            for line, func, words in sentence_fstrings(source, rel) if (rel, func) not in SENTENCES_PENDING]


def test_analysis_builds_no_sentence():
    assert source_violations(sentence_violations) == []


def test_the_sentences_let_through_are_still_there():
    # a pending entry that no longer matches anything is one that would let the next sentence through unseen
    seen = source_violations(lambda source, rel: [(rel, func) for _line, func, _w in sentence_fstrings(source, rel)])
    assert set(SENTENCES_PENDING) <= set(seen)


def test_the_sentence_rule_sees_a_planted_sentence():
    source = ('def words(f):\n'
              '    return f"{n} units alone {x} summed, together {y}"\n'  # a sentence
              'def figures(x, a, b, k, path, kind):\n'
              '    if x < 0:\n'
              '        raise ValueError(f"--rate must be a positive number, not {x}")\n'  # an error's one line
              '    short = [f"{a} vs {b}", f"{x:.1f} µs", f"{path} ({kind})", f"{k}_iops"]\n'  # no sentence
              '    keyed = {f"{k} of the keys": x}\n'  # a dict key
              '    return f"the busiest of {a} intervals" + short[0]\n')  # a sentence
    found = sentence_violations(source, "slogqual/analysis/x.py")
    assert [v.split(": a sentence")[0] for v in found] == ["slogqual/analysis/x.py:2", "slogqual/analysis/x.py:8"]
    assert "units alone summed, together" in found[0]
    assert sentence_violations(source, "slogqual/report/x.py") == []  # report/ is where they are made
    pending = 'def counts_text(doc):\n    return f"{n} of {m} cycle(s), {a} acknowledged"\n'
    assert len(sentence_violations(pending, "slogqual/analysis/powercut.py")) == 1  # none is let through now


# --- a versioned document is read through its type, never by key ----------------------------------------

DOC_NAMES = ("doc", "document")  # a name or attribute spelled so is a document (or a table of one)
DOC_PARAMS = ("result",)  # so is a parameter spelled so
DOC_LISTS = ("docs", "documents")  # and each item of a list spelled so
DOC_LOADERS = ("load_json", "to_dict", "document", "input_document")  # a name bound from these is one
BUILT = ("dict", "loads", "load")  # ... unless the function binds it from these (a TOML input, a JSON message)


def _key(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _scopes(tree):
    """(name, node) of the module and of every function (a function's scope includes its nested ones)."""
    yield "<module>", tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield getattr(node, "name", "<lambda>"), node


def _in_scope(scope):
    """The nodes of a scope: the module's stop at its functions and classes."""
    if not isinstance(scope, ast.Module):
        return list(ast.walk(scope))
    out, todo = [], [scope]
    while todo:
        node = todo.pop()
        out.append(node)
        todo += [c for c in ast.iter_child_nodes(node)
                 if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))]
    return out


def _bound(target):
    """The name an assignment or loop binds (of a pair, the first: ``doc, where = input_document(...)``)."""
    if isinstance(target, (ast.Tuple, ast.List)) and target.elts:
        target = target.elts[0]
    return target.id if isinstance(target, ast.Name) else None


def doc_key_reads(source, rel):
    """``rel:line: function: key 'k'`` for each read by key (``x["k"]``, ``x.get("k")``) of a versioned
    document outside slogqual/results/, where the types are. What counts as a document is a heuristic on
    the source (no types are known here):

    - a name or attribute spelled ``doc``/``document``, a parameter spelled ``result``, an item of a list
      spelled ``docs``/``documents`` (``docs[0]``, ``for d in docs``);
    - a name bound from ``load_json(...)`` (a result file), ``.document(...)``/``input_document(...)`` (a
      stored run), ``.to_dict()`` (a typed object written back out as its dict);
    - a table of one: a name bound from a key read of a document (``steady = doc.get("steady_state")``), and
      the chain below it (``doc["a"]["b"]`` is one read of ``a``, one of ``b``);
    - not a name the function binds from a dict display, ``dict(...)`` or a ``load(s)`` (a TOML input, a
      JSON message, a manifest: no versioned document), nor anything in slogqual/tools/ (the programs'
      own output).

    A read the heuristic cannot see (a typed object's dict-valued field read by key, ``q.device.get("x")``)
    is not counted; a name spelled ``doc`` that is no document is (it goes on the allow-list, with why)."""
    if rel.startswith(("slogqual/results/", "slogqual/tools/")):
        return []
    tree = ast.parse(source, rel)
    found = set()
    for fname, scope in _scopes(tree):
        nodes = _in_scope(scope)
        args = scope.args if hasattr(scope, "args") else None
        params = [a.arg for a in (args.posonlyargs + args.args + args.kwonlyargs)] if args else []
        docs = {p for p in params if p in DOC_PARAMS}
        binds = [(_bound(t), n.value) for n in nodes for t in _targets(n)]
        built = {name for name, value in binds
                 if isinstance(value, ast.Dict) or isinstance(value, ast.Call) and _called(value) in BUILT
                 and not (_called(value) == "dict" and value.args)} - {None}  # dict(doc, ...): a copy

        def is_doc(e):
            if isinstance(e, ast.Name):
                return (e.id in docs or e.id in DOC_NAMES) and e.id not in built
            if isinstance(e, ast.Attribute):
                return e.attr in DOC_NAMES
            if isinstance(e, ast.Subscript):
                if isinstance(e.value, ast.Name) and e.value.id in DOC_LISTS and _key(e.slice) is None:
                    return True
                return is_doc(e.value)
            if isinstance(e, ast.Call):
                return _called(e) in DOC_LOADERS or _getter(e) is not None and is_doc(e.func.value)
            if isinstance(e, ast.BoolOp):
                return any(is_doc(v) for v in e.values)
            return False

        def loaded(e):
            if isinstance(e, ast.Call) and _called(e) in DOC_LOADERS:
                return True
            return isinstance(e, ast.BoolOp) and any(loaded(v) for v in e.values)

        changed = True
        while changed:  # a name bound from a document is one, and so on, until nothing more is learnt
            changed = False
            for n in nodes:
                names = []
                if _targets(n) and (is_doc(n.value) or loaded(n.value)):
                    names = [_bound(t) for t in _targets(n)]
                elif isinstance(n, (ast.For, ast.comprehension)) and \
                        (is_doc(n.iter) or isinstance(n.iter, ast.Name) and n.iter.id in DOC_LISTS):
                    names = [_bound(n.target)]
                for name in names:
                    if name and name not in docs and name not in built:
                        docs.add(name)
                        changed = True
        for n in nodes:
            if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and _key(n.slice) is not None \
                    and is_doc(n.value):
                found.add((n.lineno, fname, _key(n.slice)))
            elif isinstance(n, ast.Call) and _getter(n) is not None and is_doc(n.func.value):
                found.add((n.lineno, fname, _getter(n)))
    return [f"{rel}:{line}: {fname}: key {key!r}" for line, fname, key in sorted(found)]


def _targets(node):
    """What an assignment binds (``x = ...``, ``x: T = ...``); [] for any other node."""
    if isinstance(node, ast.Assign):
        return node.targets
    return [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else []


def _called(call):
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _getter(call):
    """The key of ``x.get("key", ...)``; None for any other call."""
    if isinstance(call.func, ast.Attribute) and call.func.attr == "get" and call.args:
        return _key(call.args[0])
    return None


# What still reads a document by key: module -> (at most so many reads, why). Fewer is fine; more, or a read
# in a module not listed, fails the test below; an entry with none left fails the one after.
DOC_KEY_READS_ALLOWED = {
    "slogqual/store/__init__.py": (1, "_digest: a run's identity is the digest of the whole document less the moment "
                                      "it was imported (environment.imported_at), whatever its kind"),
}


def doc_key_read_violations():
    out = []
    for rel, path in modules():
        reads = doc_key_reads(open(path, encoding="utf-8").read(), rel)
        ceiling = DOC_KEY_READS_ALLOWED.get(rel, (0, ""))[0]
        if len(reads) > ceiling:
            out.append(f"{rel}: {len(reads)} key reads of documents (allowed {ceiling}):\n  " + "\n  ".join(reads))
    return out


def test_no_versioned_document_is_read_by_key_outside_results():
    assert doc_key_read_violations() == []


def test_the_allowed_key_reads_are_still_there():
    left = {rel for rel, path in modules() if doc_key_reads(open(path, encoding="utf-8").read(), rel)}
    assert sorted(set(DOC_KEY_READS_ALLOWED) - left) == [], "allowed modules with no read left (take them off)"


def test_the_key_read_rule_sees_a_planted_read():
    planted = '''
def report(doc, docs, other):
    a = doc["verdict"]                       # 3: a parameter spelled doc
    steady = doc.get("steady_state") or {}   # 4: ... and a table of it
    b = steady.get("label")                  # 5
    c = docs[0]["target"]                    # 6: an item of docs
    for d in docs:
        d.get("name")                        # 8
    e = other["x"]                           # no document
    return a, b, c, e


def store(st, run_id, result):
    loaded = st.document(run_id)
    loaded["schema"]                         # 15: a stored run
    result["points"]                         # 16: a parameter spelled result
    x = load_json("r.json")["status"]        # 17: a result file
    q = result_of().to_dict()
    return q.get("store"), x                 # 19: a typed object's dict


def fine(text, table):
    doc = tomllib.loads(text)                # a TOML input
    made = {"verdict": 1}
    kept: dict = {"k": 2}
    return doc["name"], made["verdict"], kept["k"], table["k"], self.result.verdict
'''
    assert [v.split(": ", 1)[0].rsplit(":", 1)[1] + " " + v.rsplit(" ", 1)[1] for v in
            doc_key_reads(planted, "slogqual/pool/x.py")] == [
        "3 'verdict'", "4 'steady_state'", "5 'label'", "6 'target'", "8 'name'",
        "15 'schema'", "16 'points'", "17 'status'", "19 'store'"]
    assert doc_key_reads(planted, "slogqual/results/x.py") == []  # the types read their own keys


def test_a_planted_read_in_the_package_fails_the_rule_and_results_may_read_their_keys(tmp_path, monkeypatch):
    pkg = tmp_path / "slogqual"
    (pkg / "report").mkdir(parents=True)
    (pkg / "results").mkdir()
    (pkg / "report" / "x.py").write_text("def words(doc):\n    return doc['verdict']\n")
    (pkg / "results" / "y.py").write_text("def from_dict(doc):\n    return doc['verdict']\n")
    monkeypatch.setattr(__import__(__name__), "PKG", str(pkg))
    assert doc_key_read_violations() == ["slogqual/report/x.py: 1 key reads of documents (allowed 0):\n  "
                                         "slogqual/report/x.py:2: words: key 'verdict'"]
