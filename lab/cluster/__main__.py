"""`python -m lab.cluster` serves the scaled-out lab; `... backing -- CMD` runs CMD by PG + Redis.

Sizes come from flags or CLUSTER_WEB, CLUSTER_SPEECH, CLUSTER_PORT and CLUSTER_STATE.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

from lab.cluster.processes import ClusterError
from lab.cluster.topology import ROOT, Backing, Lab, Shape

WATCH_S = 1.0


def _stop_on_signal(signum: int, frame: FrameType | None) -> None:
    # Unwinds the context managers exactly as Ctrl-C does.
    raise KeyboardInterrupt


def _count(name: str, default: int, *, minimum: int) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SystemExit(f"{name} must be a whole number, got {raw!r}") from None
    if value < minimum:
        raise SystemExit(f"{name} must be at least {minimum}, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m lab.cluster", description=__doc__)
    parser.add_argument("--web", type=int, default=_count("CLUSTER_WEB", 2, minimum=1))
    parser.add_argument("--speech", type=int, default=_count("CLUSTER_SPEECH", 1, minimum=0))
    parser.add_argument("--port", type=int, default=_count("CLUSTER_PORT", 8000, minimum=1))
    parser.add_argument(
        "--state",
        type=Path,
        default=Path(os.environ.get("CLUSTER_STATE", ROOT / ".cluster")),
        help="where PostgreSQL's data, the logs and the shared signing key live",
    )
    parser.add_argument(
        "command",
        nargs="*",
        help="`backing -- CMD ARGS`: start a throwaway PostgreSQL + Redis, run CMD with "
        "DATABASE_URL and REDIS_URL set, stop them, exit with CMD's status",
    )
    return parser


def serve(web: int, speech: int, port: int, state: Path) -> int:
    state = state.resolve()
    with Backing(state) as backing:
        print(f"cluster: PostgreSQL on :{backing.postgres.port}, Redis on :{backing.redis.port}")
        shape = Shape(web=web, speech=speech, port=port)
        lab_state = state / "lab"
        with Lab(lab_state, shape, backing.postgres.url(), backing.redis.url) as lab:
            print(
                f"cluster: {web} web process(es) on {', '.join(map(str, lab.web_ports))}, "
                f"{speech} speech worker(s), logs in {lab_state}"
            )
            print(f"cluster: serving {lab.url}  (Ctrl-C stops everything)", flush=True)
            while not (dead := lab.dead()):
                time.sleep(WATCH_S)
            for child in dead:
                print(f"cluster: {child.name} exited; stopping\n{child.tail()}", file=sys.stderr)
            return 1


def backing_for(command: list[str]) -> int:
    with Backing() as backing:
        env = {**os.environ, **backing.env}
        print(f"cluster: PostgreSQL + Redis up; running {' '.join(command)}", flush=True)
        return subprocess.run(command, env=env, check=False).returncode


def main() -> int:
    args = _parser().parse_args()
    # SIGINT too: a shell that starts the launcher in the background has it ignoring Ctrl-C.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _stop_on_signal)
    try:
        if args.command:
            if args.command[0] != "backing" or len(args.command) < 2:
                raise SystemExit("usage: python -m lab.cluster backing -- CMD [ARGS...]")
            return backing_for(args.command[1:])
        return serve(args.web, args.speech, args.port, args.state)
    except ClusterError as error:
        print(f"cluster: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cluster: stopped", file=sys.stderr)
        return 0


if __name__ == "__main__":
    sys.exit(main())
