"""A real PostgreSQL server for the tests: Debian's postgresql package, initdb'd into a fresh directory
and started with pg_ctl on a unix socket in that directory (no TCP port), as the unprivileged
'postgres' system user the package creates (or as the test's own user when that is not root); stopped
and removed at the end of the session. Each test gets a database of its own.

Skipped, with the reason, only where the package is absent (contrib/install-deps.sh installs it).
"""

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid

import pytest


def bindir():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return os.path.dirname(found[-1]) if found else None


def _as_server_user():
    """(argv prefix, uid, gid) to run the server's programs as: never root."""
    if os.geteuid() != 0:
        return [], os.getuid(), os.getgid()
    try:
        pw = pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("needs the 'postgres' system user of Debian's postgresql package (contrib/install-deps.sh)")
    return ["runuser", "-u", "postgres", "--"], pw.pw_uid, pw.pw_gid


class PostgresServer:
    def __init__(self):
        self.bin = bindir()
        self.prefix, uid, gid = _as_server_user()
        self.dir = tempfile.mkdtemp(prefix="slogqual-pg-")
        os.chmod(self.dir, 0o700)
        os.chown(self.dir, uid, gid)
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "server.log")
        self.superuser = "postgres"
        self._run("initdb", "-D", self.data, "-U", self.superuser, "--auth=trust", "--encoding=UTF8",
                  "--locale=C.UTF-8", "--no-sync")
        self._run("pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "60", "-o",
                  f"-k {self.dir} -c listen_addresses='' -c fsync=off -c max_connections=60", "start")

    def _run(self, program, *args):
        proc = subprocess.run([*self.prefix, os.path.join(self.bin, program), *args], capture_output=True, text=True,
                              timeout=120)
        if proc.returncode != 0:
            log = open(self.log).read()[-2000:] if os.path.exists(self.log) else ""
            raise RuntimeError(f"{program} failed ({proc.returncode}): {proc.stderr.strip()} {log}")
        return proc

    def url(self, database, user=None, password=None):
        auth = (user or self.superuser) + (f":{password}" if password else "")
        return f"postgresql://{auth}@/{database}?host={self.dir}"

    def sql(self, statements, database="postgres", user=None):
        import psycopg
        with psycopg.connect(self.url(database, user), autocommit=True) as conn:
            for s in ([statements] if isinstance(statements, str) else statements):
                conn.execute(s)

    def new_database(self, owner=None):
        name = "t_" + uuid.uuid4().hex[:12]
        self.sql(f"CREATE DATABASE {name}" + (f" OWNER {owner}" if owner else ""))
        return name

    def stop(self):
        try:
            self._run("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server():
    if bindir() is None:
        pytest.skip("needs Debian's postgresql package (initdb, pg_ctl): contrib/install-deps.sh installs it")
    try:
        import psycopg
        del psycopg
    except ImportError:
        pytest.skip("needs psycopg 3 (pip install 'psycopg>=3.1'; contrib/install-deps.sh installs it)")
    server = PostgresServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server):
    """A fresh, empty database on the session's server, as a store URL (superuser)."""
    return pg_server.url(pg_server.new_database())
