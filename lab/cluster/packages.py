"""Debian's postgresql, redis-server and nginx: found on this machine, or installed with apt."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from lab.cluster.processes import ClusterError

PG_VERSION = "15"
# The Debian package that provides each program the topology runs.
PACKAGES = {"postgres": "postgresql", "redis-server": "redis-server", "nginx": "nginx"}


def _postgres_bin() -> Path | None:
    bindir = Path(f"/usr/lib/postgresql/{PG_VERSION}/bin")
    if (bindir / "postgres").exists():
        return bindir
    found = shutil.which("pg_config")
    if found:
        out = subprocess.run([found, "--bindir"], capture_output=True, text=True, check=False)
        if out.returncode == 0 and (Path(out.stdout.strip()) / "postgres").exists():
            return Path(out.stdout.strip())
    return None


def _locate(program: str) -> Path | None:
    if program == "postgres":
        bindir = _postgres_bin()
        return bindir / "postgres" if bindir else None
    found = shutil.which(program) or shutil.which(program, path="/usr/sbin:/usr/bin")
    return Path(found) if found else None


def ensure(*programs: str) -> dict[str, Path]:
    """Each program's path, installing the missing ones' packages with apt (as root only)."""
    missing = [name for name in programs if _locate(name) is None]
    if missing:
        packages = sorted({PACKAGES[name] for name in missing})
        if os.geteuid() != 0:
            raise ClusterError(
                f"{', '.join(missing)} not found; install them first "
                f"(sudo apt-get install -y {' '.join(packages)}) or run this as root"
            )
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        print(f"cluster: installing {' '.join(packages)} with apt-get", flush=True)
        for argv in (
            ["apt-get", "update", "-qq"],
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
        ):
            done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise ClusterError(f"{' '.join(argv)} failed:\n{done.stdout}{done.stderr}")
    paths: dict[str, Path] = {}
    for name in programs:
        path = _locate(name)
        if path is None:
            raise ClusterError(f"{name} still missing after installing {PACKAGES[name]}")
        paths[name] = path
    return paths
