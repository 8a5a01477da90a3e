"""SQL databases for tests: a PostgreSQL cluster of the test's own.

``postgres_server()`` runs initdb into a temporary folder and starts ``postgres``
on it, listening on a free loopback port (127.0.0.1 only, its unix socket in
that folder), with the settings a throwaway test database wants (no fsync, small
buffers) and trust authentication. It yields a SQLAlchemy URL
(``postgresql+psycopg://postgres@127.0.0.1:<port>/<database>``) and always stops
the server and removes the folder after. ``fresh_database(url)`` makes another,
empty database on the same server, dropped after.

Debian's ``postgresql`` package (bin/setup --dev installs it) puts initdb and
postgres in /usr/lib/postgresql/<major>/bin, off PATH. Its own cluster on port
5432 is not used. Both programs refuse to run as root: as root (CI), they run
as the package's ``postgres`` system user, which owns the folder.

Every wait is bounded in time; the server is stopped by whoever started it.
"""
import contextlib
import ctypes
import itertools
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

from tests.support import free_port, wait_until

POSTGRES_ROOT = Path("/usr/lib/postgresql")  # Debian's: <major>/bin/{initdb,postgres}
SUPERUSER = "postgres"  # the cluster's superuser (initdb -U), whoever runs it
# A test database: nothing needs to survive a crash, and it should start and go fast.
SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "shared_buffers": "16MB",
    "max_connections": "50",
    "max_wal_senders": "0",
    "wal_level": "minimal",
    "logging_collector": "off",
}
START_SECONDS = 30  # initdb, then the server accepting connections, on a busy machine
STOP_SECONDS = 20  # a fast shutdown (SIGINT); then immediate (SIGQUIT), then SIGKILL
MISSING = ("PostgreSQL's server programs (initdb, postgres) were not found in "
           f"{POSTGRES_ROOT}/<major>/bin or on PATH: run `make test` (bin/setup --dev "
           "installs Debian's postgresql package), or install it yourself")


class PostgresMissing(RuntimeError):
    """No initdb and postgres on this machine (or, as root, no ``postgres`` user)."""


def postgres_bindir():
    """The folder of initdb and postgres: the newest Debian major, else PATH's."""
    def has_both(folder):
        return (folder / "initdb").is_file() and (folder / "postgres").is_file()

    majors = [folder for folder in POSTGRES_ROOT.glob("*/bin")
              if folder.parent.name.isdigit() and has_both(folder)]
    if majors:
        return max(majors, key=lambda folder: int(folder.parent.name))
    found = shutil.which("initdb")
    if found and has_both(Path(found).resolve().parent):
        return Path(found).resolve().parent
    raise PostgresMissing(MISSING)


def _run_as():
    """``(uid, gid)`` to run initdb and postgres as: the ``postgres`` system user when
    root (they refuse root), else None (this user)."""
    if os.geteuid() != 0:
        return None
    try:
        account = pwd.getpwnam("postgres")
    except KeyError:
        raise PostgresMissing("running as root, and there is no 'postgres' system user to run "
                              "initdb and postgres as (Debian's postgresql package makes it): "
                              "run `make test` (bin/setup --dev installs it)") from None
    return account.pw_uid, account.pw_gid


try:
    _prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl  # looked up here, not after fork
except (OSError, AttributeError):
    _prctl = None


def _quit_with_parent():
    """For ``preexec_fn`` (it runs after the switch to the postgres user, which would
    clear it): the kernel sends the server SIGQUIT (immediate shutdown) when the test
    process dies, even by SIGKILL, so that no cluster outlives it."""
    if _prctl is not None:
        _prctl(1, signal.SIGQUIT)  # PR_SET_PDEATHSIG


class PostgresServer:
    """One private cluster: ``start()`` (initdb, then postgres), ``stop()`` (server
    stopped, folder removed). ``pid`` is the postmaster's while it runs."""

    def __init__(self):
        self.bindir = postgres_bindir()
        self.owner = _run_as()
        self.folder = Path(tempfile.mkdtemp(prefix="herald-pg-"))
        self.data = self.folder / "data"
        self.log_path = self.folder / "postgres.log"
        self.port = None
        self.process = None
        self._log = None

    @property
    def pid(self):
        return self.process.pid if self.process else None

    def url(self, database="postgres"):
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def connect(self, database="postgres", **options):
        """A psycopg connection (autocommit) over TCP, as the superuser."""
        return psycopg.connect(host="127.0.0.1", port=self.port, user=SUPERUSER,
                               dbname=database, autocommit=True, **options)

    def _popen_options(self):
        options = {"env": {key: value for key, value in os.environ.items()
                           if not key.startswith("PG")}}
        if self.owner:
            uid, gid = self.owner
            options.update(user=uid, group=gid, extra_groups=[])
        return options

    def start(self):
        if self.owner:
            os.chown(self.folder, *self.owner)
        initdb = subprocess.run(
            [str(self.bindir / "initdb"), "-D", str(self.data), "-U", SUPERUSER,
             "--auth-local=trust", "--auth-host=trust", "--encoding=UTF8", "--no-locale",
             "--no-sync", "--no-instructions"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            timeout=START_SECONDS * 4, **self._popen_options())
        if initdb.returncode != 0:
            raise RuntimeError(f"initdb failed ({initdb.returncode}):\n{initdb.stdout}")
        # A free port can be taken by another process before postgres binds it: try again.
        for attempt in itertools.count(1):
            self.port = free_port()
            self._spawn()
            try:
                wait_until(self._accepting, timeout=START_SECONDS, interval=0.05,
                           message=f"postgres to accept connections ({self.log_path})")
                return
            except _PortTaken:
                self._halt()
                if attempt == 3:
                    raise RuntimeError(f"postgres found no free port:\n{self._log_text()}") from None

    def _spawn(self):
        settings = [arg for name, value in SETTINGS.items() for arg in ("-c", f"{name}={value}")]
        self._log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [str(self.bindir / "postgres"), "-D", str(self.data), "-p", str(self.port),
             "-c", f"unix_socket_directories={self.folder}", *settings],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            preexec_fn=_quit_with_parent, **self._popen_options())

    def _accepting(self):
        if self.process.poll() is not None:
            log = self._log_text()
            if "could not bind" in log or "could not create any TCP/IP sockets" in log:
                raise _PortTaken()
            raise RuntimeError(f"postgres exited ({self.process.returncode}):\n{log}")
        try:
            with self.connect(connect_timeout=2):
                return True
        except psycopg.OperationalError:
            return False

    def _log_text(self):
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def create_database(self, name):
        """A new, empty database; its SQLAlchemy URL."""
        with self.connect() as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def _halt(self):
        """Stop the postmaster: fast shutdown (its sessions ended), then harder."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            for sig, seconds in ((signal.SIGINT, STOP_SECONDS), (signal.SIGQUIT, 5),
                                 (signal.SIGKILL, 10)):
                process.send_signal(sig)
                try:
                    process.wait(seconds)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if self._log:
            self._log.close()
            self._log = None

    def stop(self):
        """Stop the server (if running) and remove its folder; safe to call twice."""
        try:
            self._halt()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


class _PortTaken(Exception):
    pass


@contextlib.contextmanager
def postgres_server(database="herald"):
    """A private PostgreSQL cluster with one database, ``database``: yields its
    SQLAlchemy URL; the server is stopped and its folder removed after, whatever
    happened. Raises PostgresMissing when the server programs are not installed."""
    server = PostgresServer()
    try:
        server.start()
        yield server.create_database(database)
    finally:
        server.stop()


_DATABASE_NUMBERS = itertools.count(1)


@contextlib.contextmanager
def fresh_database(url):
    """Another, empty database on the server of ``url`` (a SQLAlchemy URL from
    postgres_server): yields its URL; dropped after, its open connections ended."""
    url = make_url(url)
    name = f"test_{os.getpid()}_{next(_DATABASE_NUMBERS)}"
    options = {"host": url.host, "port": url.port, "user": url.username, "dbname": "postgres",
               "autocommit": True, "connect_timeout": 5}
    with psycopg.connect(**options) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(**options) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
