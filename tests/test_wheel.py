"""A non-editable install works: the sdist and the wheel built from this tree carry the scenarios, the
profiles, the lab's device classes and stage2.sh, and slogqual installed from the wheel into a fresh
venv (offline, away from the editable install) finds them from any directory.

And on a host without a C compiler (TrueNAS SCALE, most appliances: Python and fio, no cc), emulated by a
PATH of links to fio and python alone and empty engine caches: the wheel's engine (static, built with
zig's C compiler where ziglang is installed) runs there, and an install from source, which could build
no engine, sweeps with fio and says so."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

from conftest import ROOT, need

pytestmark = [pytest.mark.integration, need("fio")]

# Not part of a build: version control, caches, results and whatever an earlier build left in the tree.
IGNORE = shutil.ignore_patterns(".git", "artifacts", "build", "dist", "*.egg-info", "__pycache__", "*.pyc",
                                ".pytest_cache", "slogqual-scratch-*")


def run(argv, timeout=300, **kw):
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout, **kw)
    assert proc.returncode == 0, f"{argv}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def shipped(*parts):
    """The files of the repository's scenarios/ (relative paths), the data a wheel must carry."""
    top = os.path.join(ROOT, "scenarios", *parts)
    return sorted(os.path.relpath(os.path.join(d, f), top) for d, _, files in os.walk(top) for f in files
                  if not f.startswith("."))


@pytest.fixture(scope="module")
def sdist(tmp_path_factory):
    """sdist from a copy of the tree (the tree itself gets no build/ or egg-info), unpacked: the wheels are
    built from it, as `python -m build` does, so a file MANIFEST.in forgets is missing from them too."""
    if importlib.util.find_spec("wheel") is None:
        pytest.skip("needs the wheel package to build without isolation (pip install -e '.[test]')")
    tmp = tmp_path_factory.mktemp("sdist")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=IGNORE, symlinks=True)
    out = tmp / "out"
    run([sys.executable, "-c", "import sys; from setuptools import build_meta as b; print(b.build_sdist(sys.argv[1]))",
         out], cwd=src)
    (sdist,) = out.glob("slogqual-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        tar.extractall(tmp / "sdist")
    top = names[0].split("/")[0]
    for f in shipped():
        assert f"{top}/scenarios/{f}" in names, f"sdist lacks scenarios/{f}"
    assert f"{top}/slogqual/lab/stage2.sh" in names and f"{top}/setup.py" in names
    return tmp / "sdist" / top


def build_wheel(sdist, out, env):
    """The wheel pip builds from the unpacked sdist (no index, no isolation) with the environment env."""
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "-w", out, sdist], timeout=900, env=env)  # zig's first build of musl: a minute, more on a busy host
    (whl,) = out.glob("slogqual-*.whl")
    return whl


def bare_path(directory, python):
    """A PATH directory of links to fio and python, and nothing else: a host without cc."""
    directory.mkdir()
    for name, target in (("fio", shutil.which("fio")), ("python3", python), ("python", python)):
        (directory / name).symlink_to(target)
    return directory


@pytest.fixture(scope="module")
def wheel(sdist, tmp_path_factory):
    """The wheel as this machine builds it: with zig's static musl build of the engine where ziglang is
    installed, else with cc. zig's global cache (its build of musl: a minute of CPU the first time, minutes on a
    busy host) is zig's own, kept between runs as for any zig user; only the engine's build is in a temporary one."""
    tmp = tmp_path_factory.mktemp("wheel")
    env = dict(os.environ, ZIG_LOCAL_CACHE_DIR=str(tmp / "zig"))
    env.pop("CC", None)
    return build_wheel(sdist, tmp / "out", env)


@pytest.fixture(scope="module")
def wheel_without_cc(sdist, tmp_path_factory):
    """The wheel an install from source makes on a host without cc: the compiler asked for (CC=cc) is
    not on PATH, so the build goes on without an engine."""
    tmp = tmp_path_factory.mktemp("wheel-without-cc")
    env = dict(os.environ, PATH=str(bare_path(tmp / "bin", os.path.realpath(sys.executable))), CC="cc")
    return build_wheel(sdist, tmp / "out", env)


def make_venv(wheel, tmp):
    """A fresh venv with the wheel installed (no index, no network), tabulate visible through a .pth
    naming a directory that holds only a link to it: the base interpreter's site-packages, where the
    editable install's finder is, stays out."""
    env_dir = tmp / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", env_dir])
    python = env_dir / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", python, "install", "--no-index", "--no-deps", "-q", wheel])
    tabulate = importlib.util.find_spec("tabulate")
    deps = tmp / "deps"
    deps.mkdir()
    if tabulate.submodule_search_locations:  # a package directory
        target = tabulate.submodule_search_locations[0]
    else:  # a single module
        target = tabulate.origin
    (deps / os.path.basename(target)).symlink_to(target)
    purelib = run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip()
    with open(os.path.join(purelib, "slogqual-test-deps.pth"), "w") as fh:
        fh.write(f"{deps}\n")
    return env_dir


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    return make_venv(wheel, tmp_path_factory.mktemp("venv"))


@pytest.fixture(scope="module")
def venv_without_cc(wheel_without_cc, tmp_path_factory):
    return make_venv(wheel_without_cc, tmp_path_factory.mktemp("venv-without-cc"))


def runner(venv, tmp_path, bare=False):
    """Run a program of the venv from a directory outside the repository, PYTHONPATH cleared. bare: on a
    PATH of fio and python alone (bare_path), the engine's caches (~/.cache/slogqual, $TMPDIR/slogqual-UID)
    empty directories of this test: a host without cc where nothing was built before."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "CC")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    if bare:
        env["PATH"] = str(bare_path(tmp_path / "bin", venv / "bin" / "python"))
        for name, var in (("cache", "XDG_CACHE_HOME"), ("tmp", "TMPDIR")):
            (tmp_path / name).mkdir()
            env[var] = str(tmp_path / name)
    env["VIRTUAL_ENV"] = str(venv)
    env["SLOGQUAL_STORE"] = str(tmp_path / "store.sqlite")
    work = tmp_path / "elsewhere"
    work.mkdir()

    def call(*argv, check=True):
        proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300, env=env, cwd=work)
        if check:
            assert proc.returncode == 0, f"{argv}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        return proc

    call.dir, call.env = work, env
    return call


@pytest.fixture
def in_venv(venv, tmp_path):
    return runner(venv, tmp_path)


def test_wheel_carries_the_data_and_stage2(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "slogqual/lab/stage2.sh" in names
    assert "slogqual/data.py" in names
    missing = [f for f in shipped() if f"slogqual/scenarios/{f}" not in names]
    assert not missing, f"the wheel lacks {missing}"
    assert "slogqual/scenarios/profiles/homelab-1gbe.toml" in names
    assert "slogqual/scenarios/lab-devices.toml" in names


def test_installed_wheel_finds_its_data_from_anywhere(venv, in_venv):
    py = venv / "bin" / "python"
    probe = ("import json, os, slogqual, tabulate\n"
             "from slogqual import data\n"
             "from slogqual.lab import runner\n"
             "print(json.dumps({'file': slogqual.__file__, 'data': data.data_dir(), 'stage2': runner.STAGE2,\n"
             "  'stage2_ok': os.path.isfile(runner.STAGE2), 'keep': runner.keep_paths()}))")
    got = json.loads(in_venv(py, "-c", probe).stdout)
    site = os.path.dirname(os.path.dirname(got["file"]))
    assert got["file"].startswith(str(venv) + os.sep), got  # the wheel's copy, not the editable tree
    assert got["data"] == os.path.join(site, "slogqual", "scenarios")
    assert got["stage2_ok"] and got["stage2"].startswith(str(venv) + os.sep)
    assert not any(p.startswith(ROOT) for p in got["keep"])
    cli = venv / "bin" / "slogqual"

    listed = in_venv(cli, "scenario", "list").stdout.split("\n")
    names = {line.split()[0] for line in listed if line.strip()}
    assert names == {f[:-5] for f in shipped() if "/" not in f and f.endswith(".toml") and f != "lab-devices.toml"}

    shown = json.loads(in_venv(cli, "scenario", "show", "iscsi-4k-randwrite").stdout)
    assert shown["name"] == "iscsi-4k-randwrite"

    classes = in_venv(cli, "lab", "classes").stdout
    for name in ("hdd", "sata-ssd", "nvme", "nvdimm"):
        assert any(line.split()[:1] == [name] for line in classes.splitlines()), classes

    target = in_venv.dir / "target.img"
    with open(target, "wb") as fh:
        fh.truncate(32 << 20)
    out = in_venv.dir / "q"
    proc = in_venv(cli, "qualify", target, "--profile", "homelab-1gbe", "--out", out, "--max-rounds", "0",
                   "--runtime", "0.2", "--settle", "0", "--no-html", "--no-store", "--quiet", check=False)
    # The profile may fail (a busy disk): it ran, it was found, its documents were written.
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    doc = json.loads((out / "target.img.qualification.json").read_text())
    assert doc["schema"] == "slogqual.qualification/1" and doc["verdict"] in ("pass", "fail")
    assert doc["profile"]["name"] == "homelab-1gbe" and doc["profile"]["path"].startswith(str(venv) + os.sep)
    assert (out / "target.img.sweep.json").is_file()


def test_installed_wheel_without_its_data_says_so_in_one_line(venv, in_venv):
    site = run([venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip()
    data = os.path.join(site, "slogqual", "scenarios")
    hidden = data + ".hidden"
    os.rename(data, hidden)
    try:
        cli = venv / "bin" / "slogqual"
        for argv in (("scenario", "list"), ("scenario", "show", "nfs-sync"),
                     ("qualify", in_venv.dir / "x.img", "--profile", "homelab-1gbe", "--no-store"),
                     ("lab", "classes")):
            proc = in_venv(cli, *argv, check=False)
            assert proc.returncode == 2, (argv, proc.stderr)
            lines = proc.stderr.strip().splitlines()
            assert len(lines) == 1 and "Traceback" not in proc.stderr, (argv, proc.stderr)
            assert "missing" in lines[0], (argv, lines)
    finally:
        os.rename(hidden, data)


def test_installed_wheel_carries_a_built_pair_engine(wheel, venv, in_venv):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"slogqual/native/pairbench.c", "slogqual/native/pairbench"} <= names
    py = venv / "bin" / "python"
    probe = ("import json\nfrom slogqual.tools import pairbench as p\n"
             "print(json.dumps({'path': p.locate(build_if_missing=False), 'version': p.check_version().text}))")
    got = json.loads(in_venv(py, "-c", probe).stdout)
    assert got["path"].startswith(str(venv) + os.sep), got  # built by pip install, not on first use
    assert got["version"] == "pairbench 3"


# --- a host without a C compiler ---------------------------------------------------------------------------

SWEEP = ("sweep", "--sizes", "4k,64k", "--runtime", "0.2", "--settle", "0")
FALLBACK = "measured with fio"  # the words of slogqual.sweep.engine.fallback_note


def engine_caches(call):
    return [os.path.join(d, f) for var in ("XDG_CACHE_HOME", "TMPDIR")
            for d, _, files in os.walk(call.env[var]) for f in files]


def test_the_wheels_engine_is_static_for_its_platform_tag(wheel, tmp_path):
    """The tag a wheel claims (linux_ARCH) promises a Linux of that architecture and nothing about its
    libc: the engine in it is linked static (no run-time linker, nothing dynamic), for that machine."""
    if importlib.util.find_spec("ziglang") is None:
        pytest.skip("the static engine is zig's build: needs ziglang (pip install -e '.[test]')")
    import sysconfig

    import elf
    system, _, arch = sysconfig.get_platform().partition("-")
    assert wheel.name.endswith(f"-{system}_{arch}.whl"), wheel.name
    with zipfile.ZipFile(wheel) as z:
        engine = tmp_path / "pairbench"
        engine.write_bytes(z.read("slogqual/native/pairbench"))
    b = elf.Elf(str(engine))
    assert b.machine == {"x86_64": elf.EM_X86_64, "aarch64": elf.EM_AARCH64}[arch]
    assert elf.PT_INTERP not in b.segment_types() and elf.PT_DYNAMIC not in b.segment_types(), b.segment_types()
    assert b.imports() == []


def test_a_wheels_engine_runs_where_there_is_no_cc(venv, tmp_path):
    call = runner(venv, tmp_path, bare=True)
    proc = call(venv / "bin" / "slogqual", *SWEEP, "-o", tmp_path / "sweep.json")
    doc = json.loads((tmp_path / "sweep.json").read_text())
    assert doc["params"]["engine"] == "pair" and "pair_unavailable" not in doc["params"], doc["params"]
    assert doc["environment"]["pairbench_version"] == "pairbench 3"
    assert {p["lat_basis"] for p in doc["points"]} == {"pair"} and len(doc["points"]) == 2
    assert FALLBACK not in proc.stderr and not any(FALLBACK in n for n in doc["notes"])
    assert engine_caches(call) == []  # the installed engine ran: nothing was built


def test_an_install_from_source_without_cc_sweeps_with_fio_and_says_so(wheel_without_cc, venv_without_cc, tmp_path):
    assert "slogqual/native/pairbench" not in zipfile.ZipFile(wheel_without_cc).namelist()
    assert "slogqual/native/pairbench.c" in zipfile.ZipFile(wheel_without_cc).namelist()
    call = runner(venv_without_cc, tmp_path, bare=True)
    cli = venv_without_cc / "bin" / "slogqual"
    # --engine pair asks for what is not there: one line naming the way out, nothing written
    refused = call(cli, *SWEEP, "--engine", "pair", check=False)
    lines = refused.stderr.strip().splitlines()
    assert refused.returncode == 2 and len(lines) == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert "cc is not on PATH" in lines[0] and "--engine fio" in lines[0], lines
    assert os.listdir(call.dir) == [] and not os.path.exists(call.env["SLOGQUAL_STORE"])
    # the default measures with fio, and says so: once on stderr, and in the document
    proc = call(cli, *SWEEP, "-o", tmp_path / "sweep.json")
    told = [line for line in proc.stderr.splitlines() if FALLBACK in line]
    assert len(told) == 1 and "upper bounds" in told[0] and "cc is not on PATH" in told[0], proc.stderr
    doc = json.loads((tmp_path / "sweep.json").read_text())
    assert doc["status"] == "complete" and doc["params"]["engine"] == "psync", doc["params"]
    assert "cc is not on PATH" in doc["params"]["pair_unavailable"]
    assert [n for n in doc["notes"] if FALLBACK in n] == [told[0].split("note: ", 1)[1]]
    assert [p["lat_basis"] for p in doc["points"]] == ["write+flush", "write+flush"]  # percentiles are bounds
    assert "pairbench_version" not in doc["environment"] and doc["environment"].get("fio_version", "").startswith("fio-")
    assert engine_caches(call) == []
