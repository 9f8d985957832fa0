"""PostgreSQL and Redis from Debian's packages, on loopback, their data under a state folder."""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import signal
import socket
from pathlib import Path

from lab.cluster.packages import ensure
from lab.cluster.processes import Child, ClusterError, free_port, run_checked

READY_S = 60.0
APP_ROLE = "lab"
APP_DATABASE = "lab"
# A throwaway cluster (CI, tests, benchmarks) need not survive a power cut.
EPHEMERAL_SETTINGS = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")


def _secrets(state: Path) -> dict[str, str]:
    """The passwords this state folder's servers were set up with, made on first use (mode 600)."""
    path = state / "secrets.json"
    if path.exists():
        stored: dict[str, str] = json.loads(path.read_text())
        return stored
    made = {name: secrets.token_hex(16) for name in ("postgres", APP_ROLE, "redis")}
    path.touch(mode=0o600)
    path.write_text(json.dumps(made))
    return made


class PostgreSQL:
    """One PostgreSQL 15 cluster in `state/pg`, run as the postgres user when we are root."""

    def __init__(self, state: Path, *, ephemeral: bool = False) -> None:
        self.state = state
        self.data = state / "pg"
        self.ephemeral = ephemeral
        self.passwords = _secrets(state)
        self.bindir = ensure("postgres")["postgres"].parent
        self.user = "postgres" if os.geteuid() == 0 else None
        self.port = free_port()
        self.child: Child | None = None

    def url(self, database: str = APP_DATABASE) -> str:
        return f"postgres://{APP_ROLE}:{self.passwords[APP_ROLE]}@127.0.0.1:{self.port}/{database}"

    def _tool_env(self) -> dict[str, str]:
        return {**os.environ, "PGPASSWORD": self.passwords["postgres"]}

    def _initdb(self) -> None:
        self.data.mkdir(mode=0o700)
        # The superuser's password reaches initdb in a file only it can read, removed at once.
        secret = self.state / "pg-init"
        secret.mkdir(mode=0o700, exist_ok=True)
        pwfile = secret / "password"
        pwfile.write_text(self.passwords["postgres"] + "\n")
        pwfile.chmod(0o600)
        if self.user:
            entry = pwd.getpwnam(self.user)
            for path in (self.data, secret, pwfile):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        argv = [str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres"]
        argv += [f"--pwfile={pwfile}", "--auth-host=scram-sha-256", "--auth-local=peer"]
        argv += ["-E", "UTF8", "--no-locale"]
        try:
            run_checked(argv, env=os.environ, cwd=self.state, what="initdb", user=self.user)
        finally:
            shutil.rmtree(secret, ignore_errors=True)

    def start(self) -> Child:
        fresh = not (self.data / "PG_VERSION").exists()
        if fresh:
            self._initdb()
        settings = [
            "listen_addresses=127.0.0.1",
            "unix_socket_directories=",
            "max_connections=200",
            *(EPHEMERAL_SETTINGS if self.ephemeral else ()),
        ]
        argv = [str(self.bindir / "postgres"), "-D", str(self.data), "-p", str(self.port)]
        for setting in settings:
            argv += ["-c", setting]
        # SIGINT is PostgreSQL's fast shutdown: clients are cut off rather than waited for.
        self.child = Child(
            "postgresql",
            argv,
            log=self.state / "postgresql.log",
            env=os.environ,
            cwd=self.state,
            user=self.user,
            stop_signal=signal.SIGINT,
        )
        self.child.wait_ready(self._accepting, READY_S)
        if fresh:
            password = self.passwords[APP_ROLE]
            # CREATEDB: pytest-django makes and drops its own test database.
            self.sql(f"CREATE ROLE {APP_ROLE} LOGIN CREATEDB PASSWORD '{password}'")
            self.create_database(APP_DATABASE)
        return self.child

    def _accepting(self) -> bool:
        argv = [str(self.bindir / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(self.port)]
        try:
            run_checked(argv, env=os.environ, cwd=self.state, what="pg_isready")
        except ClusterError:
            return False
        return True

    def sql(self, statement: str, database: str = "postgres") -> None:
        argv = [str(self.bindir / "psql"), "-h", "127.0.0.1", "-p", str(self.port)]
        argv += ["-U", "postgres", "-d", database, "-v", "ON_ERROR_STOP=1", "-qc", statement]
        run_checked(argv, env=self._tool_env(), cwd=self.state, what=f"psql {statement!r}")

    def create_database(self, name: str) -> None:
        self.sql(f'CREATE DATABASE "{name}" OWNER {APP_ROLE}')

    def drop_database(self, name: str) -> None:
        self.sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Redis:
    """redis-server on loopback with a password and no persistence (the layer is transient)."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self.password = _secrets(state)["redis"]
        self.program = ensure("redis-server")["redis-server"]
        self.port = free_port()
        self.child: Child | None = None

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    def start(self) -> Child:
        conf = self.state / "redis.conf"
        conf.touch(mode=0o600)
        conf.write_text(
            "\n".join(
                [
                    "bind 127.0.0.1",
                    f"port {self.port}",
                    'save ""',
                    "appendonly no",
                    "daemonize no",
                    "protected-mode yes",
                    f"requirepass {self.password}",
                    f"dir {self.state}",
                    "",
                ]
            )
        )
        self.child = Child(
            "redis",
            [str(self.program), str(conf)],
            log=self.state / "redis.log",
            env=os.environ,
            cwd=self.state,
        )
        self.child.wait_ready(self.answers, READY_S)
        return self.child

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
                sock.sendall(f"AUTH {self.password}\r\nPING\r\n".encode())
                reply = b""
                while b"PONG" not in reply and len(reply) < 256:
                    chunk = sock.recv(256)
                    if not chunk:
                        break
                    reply += chunk
        except OSError:
            return False
        return b"+OK\r\n+PONG\r\n" in reply
