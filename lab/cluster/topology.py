"""The topology as two context managers: the backing servers, and the lab's processes on them."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from lab.cluster import proxy
from lab.cluster.backing import PostgreSQL, Redis
from lab.cluster.processes import Child, ClusterError, free_port, port_open, run_checked

ROOT = Path(__file__).resolve().parents[2]
WEB_READY_S = 120.0
# The command each speech worker runs; it writes --ready-file once its models are warm.
SPEECH_WORKER = ("manage.py", "runspeechworker")


@dataclass(frozen=True)
class Shape:
    """How many of each process; `port` 0 leaves the proxy out (tests talk to each process)."""

    web: int = 2
    speech: int = 1
    port: int = 8000


class Backing(contextlib.AbstractContextManager["Backing"]):
    """PostgreSQL and Redis for one state folder; a throwaway temporary one when `state` is None."""

    def __init__(self, state: Path | None = None) -> None:
        self._temporary = state is None
        self.state = Path(tempfile.mkdtemp(prefix="lab-backing-")) if state is None else state
        self.state.mkdir(parents=True, exist_ok=True)
        # PostgreSQL runs as its own user when we are root: it must get through to its data.
        self.state.chmod(0o711)
        self.postgres = PostgreSQL(self.state, ephemeral=self._temporary)
        self.redis = Redis(self.state)
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> Backing:
        try:
            for server in (self.postgres, self.redis):
                self._stack.callback(server.start().stop)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stack.close()
        if self._temporary:
            shutil.rmtree(self.state, ignore_errors=True)

    @property
    def env(self) -> dict[str, str]:
        return {"DATABASE_URL": self.postgres.url(), "REDIS_URL": self.redis.url}


def signing_key_file(state: Path) -> Path:
    """The report-signing key every replica shares, made once per state folder (mode 600)."""
    path = state / "signing-key.pem"
    if not path.exists():
        pem = Ed25519PrivateKey.generate().private_bytes(
            Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()
        )
        path.touch(mode=0o600)
        path.write_bytes(pem)
    return path


@dataclass
class Lab(contextlib.AbstractContextManager["Lab"]):
    """Migrate, then M speech workers, N daphne processes and nginx, all on one database."""

    state: Path
    shape: Shape
    database_url: str
    redis_url: str | None
    extra_env: Mapping[str, str] = field(default_factory=dict)
    web_ports: list[int] = field(default_factory=list)
    children: list[Child] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        env = {
            **os.environ,
            "DATABASE_URL": self.database_url,
            "LAB_STATE_DIR": str(self.state),
            "LAB_SIGNING_KEY_FILE": str(signing_key_file(self.state)),
            **self.extra_env,
        }
        # Only what this topology says: nothing inherited may point elsewhere.
        for name in ("LAB_SIGNING_KEY", "REDIS_URL", "LAB_SPEECH_WORKERS"):
            env.pop(name, None)
        if self.redis_url:
            env["REDIS_URL"] = self.redis_url
        if self.shape.speech:
            env["LAB_SPEECH_WORKERS"] = "1"
        return env

    @property
    def url(self) -> str:
        port = self.shape.port or self.web_ports[0]
        return f"http://127.0.0.1:{port}"

    def __enter__(self) -> Lab:
        if self.shape.speech and not self.redis_url:
            raise ClusterError("speech workers need REDIS_URL: the in-memory layer is per process")
        self.state.mkdir(parents=True, exist_ok=True)
        env = self.env
        try:
            for step in (("migrate", "--noinput"), ("reconcileruns",)):
                run_checked([sys.executable, "manage.py", *step], env=env, cwd=ROOT, what=step[0])
            workers = []
            for number in range(1, self.shape.speech + 1):
                ready = self.state / f"speech-{number}.ready"
                argv = [sys.executable, *SPEECH_WORKER, "--ready-file", str(ready)]
                workers.append((self._start(f"speech-{number}", argv, env), ready))
            webs = []
            for number in range(1, self.shape.web + 1):
                port = free_port()
                argv = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
                argv += ["--proxy-headers", "lab.asgi:application"]
                webs.append((self._start(f"web-{number}", argv, env), port))
                self.web_ports.append(port)
            for child, port in webs:
                child.wait_ready(functools.partial(port_open, port), WEB_READY_S)
            # A call placed before a worker is warm would wait on its model loading.
            for child, ready in workers:
                child.wait_ready(ready.exists, WEB_READY_S)
            for child in self.children:
                if not child.alive():
                    raise ClusterError(f"{child.name} exited:\n{child.tail()}")
            if self.shape.port:
                self.children.append(
                    proxy.start(listen=self.shape.port, upstreams=self.web_ports, state=self.state)
                )
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start(self, name: str, argv: list[str], env: Mapping[str, str]) -> Child:
        child = Child(name, argv, log=self.state / f"{name}.log", env=env, cwd=ROOT)
        self.children.append(child)
        return child

    def dead(self) -> list[Child]:
        return [child for child in self.children if not child.alive()]

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        # The proxy first, then web processes, then workers: nothing is cut off mid-request.
        for child in reversed(self.children):
            child.stop()
        self.children.clear()
