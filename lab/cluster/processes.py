"""Child processes in their own process groups, logged, stopped whole, never left orphaned."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

PR_SET_PDEATHSIG = 1
STOP_WAIT_S = 20.0


class ClusterError(RuntimeError):
    """A piece of the topology could not be set up or did not become ready."""


def _die_with_parent() -> None:
    # Runs in the child before exec: if the launcher is killed outright, the kernel ends it too.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def port_open(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


class Child:
    """One supervised process (and everything it forks), logging to `log`."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        log: Path,
        env: Mapping[str, str],
        cwd: Path,
        user: str | None = None,
        stop_signal: signal.Signals = signal.SIGTERM,
    ) -> None:
        self.name = name
        self.log = log
        self.stop_signal = stop_signal
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
                user=user,
            )

    def alive(self) -> bool:
        return self.process.poll() is None

    def tail(self, lines: int = 30) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def wait_ready(self, ready: Callable[[], bool], limit_s: float) -> None:
        """Poll `ready` until it holds; fail with the log's tail if the process dies or stalls."""
        deadline = time.monotonic() + limit_s
        while not ready():
            if not self.alive():
                raise ClusterError(
                    f"{self.name} exited ({self.process.returncode}):\n{self.tail()}"
                )
            if time.monotonic() > deadline:
                raise ClusterError(f"{self.name} not ready after {limit_s:g} s:\n{self.tail()}")
            time.sleep(0.1)

    def stop(self) -> None:
        """Signal the whole group, wait, then kill what is left of it."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, self.stop_signal)
        try:
            self.process.wait(timeout=STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        # Grandchildren a clean exit left behind in the group go too.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)


def run_checked(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, what: str, user: str | None = None
) -> None:
    """Run a one-shot step to completion; its output is shown only when it fails."""
    done = subprocess.run(
        list(argv), cwd=cwd, env=dict(env), capture_output=True, text=True, user=user, check=False
    )
    if done.returncode != 0:
        raise ClusterError(f"{what} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
