"""A host where the pair engine cannot be had (none installed with slogqual, no cc to build one): what
needs it refuses in one line that says so and how to get cc, exit 2, nothing written, and never offers
--engine fio where the options asked for refuse it (--probe, --precision, --sustain). --engine pair alone
still names --engine fio, the way to measure without it. The real CLI on a PATH of everything but cc,
with an empty engine cache."""

import os
import shutil

import pytest

from conftest import need, slogqual
from slogqual.tools import pairbench

pytestmark = need("fio")
FAST = ["--sizes", "4k", "--runtime", "0.2", "--settle", "0", "--quiet"]
PROFILE = 'name = "loose"\nsizes = ["4k"]\n\n[[criterion]]\ncheck = "lat_us.mean @ 4k <= 1000000"\nwhy = "any"\n'


@pytest.fixture(scope="module")
def without_cc(tmp_path_factory):
    """The environment of a host without cc: PATH is every program here but cc; the engine caches
    ($XDG_CACHE_HOME, $TMPDIR/slogqual-UID) empty."""
    if os.access(pairbench.PACKAGED, os.X_OK):
        pytest.skip(f"an engine is installed with slogqual ({pairbench.PACKAGED}): not a host without one")
    root = tmp_path_factory.mktemp("no-cc")
    bindir = root / "bin"
    bindir.mkdir()
    for d in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/sbin", "/sbin"]:
        if os.path.isdir(d):
            for name in os.listdir(d):
                if name != pairbench.COMPILER and not (bindir / name).exists():
                    (bindir / name).symlink_to(os.path.join(d, name))
    for sub in ("cache", "tmp"):
        (root / sub).mkdir()
    assert shutil.which(pairbench.COMPILER, path=str(bindir)) is None
    return {"PATH": str(bindir), "XDG_CACHE_HOME": str(root / "cache"), "TMPDIR": str(root / "tmp")}


@pytest.fixture
def here(tmp_path, without_cc):
    """Two files to measure, a working directory of its own and a store (not made) there."""
    files = []
    for n in ("a", "b"):
        f = tmp_path / f"{n}.img"
        with open(f, "wb") as fh:
            fh.truncate(16 << 20)
        files.append(f)
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "loose.toml").write_text(PROFILE)
    env = dict(without_cc, SLOGQUAL_STORE=str(tmp_path / "store.sqlite"))
    return files, work, env


def refused(p):
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    return lines[0]


def test_probe_says_the_pair_engine_cannot_be_had_and_why(here, tmp_path):
    (a, b), work, env = here
    p = slogqual("sweep", a, b, "--parallel", "--probe", *FAST, "-o", tmp_path / "out", env=env, cwd=work)
    line = refused(p)
    assert "--probe measures with the pair engine, which cannot be had here" in line, line
    assert pairbench.NO_COMPILER in line and "apt-get install gcc" in line, line
    assert "fio" not in line, line  # the user asked nothing of fio, and the probe would not take it
    q = slogqual("qualify", a, b, "--profile", tmp_path / "loose.toml", "--parallel", "--probe", "--no-store",
                 "--out", tmp_path / "q", *FAST, env=env, cwd=work)
    assert refused(q) == line
    assert os.listdir(work) == [] and not (tmp_path / "out").exists() and not (tmp_path / "q").exists()
    assert not (tmp_path / "store.sqlite").exists()


@pytest.mark.parametrize("asked", [["--precision", "5%"], ["--sustain", "1s"], ["--precision", "5%", "--engine", "pair"]])
def test_what_needs_the_pair_engine_names_how_to_get_it_not_fio(here, tmp_path, asked):
    (a, _), work, env = here
    out = tmp_path / "r.json"
    line = refused(slogqual("sweep", a, *asked, *FAST, "-o", out, env=env, cwd=work))
    assert line.startswith(f"slogqual: {pairbench.NO_COMPILER} (") and "apt-get install gcc libc6-dev" in line, line
    assert "fio" not in line, line  # --engine fio with these options is refused in turn
    assert not out.exists() and os.listdir(work) == [] and not (tmp_path / "store.sqlite").exists()


def test_engine_pair_alone_still_names_engine_fio(here, tmp_path):
    (a, _), work, env = here
    line = refused(slogqual("sweep", a, "--engine", "pair", *FAST, "-o", tmp_path / "r.json", env=env, cwd=work))
    assert pairbench.NO_COMPILER in line and pairbench.OR_FIO in line, line
    # and the --engine fio it names measures what was asked
    p = slogqual("sweep", a, "--engine", "fio", *FAST, "-o", tmp_path / "r.json", env=env, cwd=work)
    assert p.returncode == 0, p.stderr
