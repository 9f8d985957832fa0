"""From an agent's tools list to its first verdicts, timed step by step (issue 26).

.venv/bin/python -m benchmarks.bench_tools_file
Starts the restaurant's reference agent (a real OpenAI-compatible server that knows nothing of
the lab's tools), then times what a newcomer runs: checktools on its tools file, maketemplates,
and runscenarios over the five generated scenarios; once with the full file and once with the
bare tools list alone (everything inferred), printing each step's seconds and the verdicts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "agents" / "trattoria" / "tools.json"
MANAGE = [sys.executable, str(ROOT / "manage.py")]
PORT = 8093


def _timed(label: str, command: list[str]) -> str:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    print(f"{label}: {time.perf_counter() - started:.1f} s (exit {done.returncode})", flush=True)
    return done.stdout


def _load() -> str:
    return ", ".join(f"{value:.1f}" for value in os.getloadavg())


def _one_pass(name: str, tools: Path, out: Path) -> None:
    print(f"-- {name}: {tools.name}, load {_load()}")
    _timed("checktools", [*MANAGE, "checktools", str(tools)])
    _timed("maketemplates", [*MANAGE, "maketemplates", "--tools", str(tools), "--out", str(out)])
    scenarios = [arg for path in sorted(out.glob("*.json")) for arg in ("--scenario", path.stem)]
    agent = f"openai:http://127.0.0.1:{PORT}/v1"
    verdicts = _timed(
        "runscenarios (5 scenarios, --time-scale 0.1)",
        [*MANAGE, "runscenarios", "--agent", agent, "--tools", str(tools)]
        + ["--scenarios", str(out), *scenarios, "--time-scale", "0.1"],
    )
    for line in verdicts.splitlines():
        print(f"   {line}")


def main() -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "lab.reference_agents.team_agents.server"]
        + ["--business", "trattoria", "--port", str(PORT)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        print(server.stdout.readline().strip())
        with tempfile.TemporaryDirectory() as folder:
            work = Path(folder)
            _one_pass("the full file", TOOLS, work / "full")
            bare = work / "bare-tools.json"
            bare.write_text(json.dumps({"tools": json.loads(TOOLS.read_text())["tools"]}))
            _one_pass("the bare tools list, everything inferred", bare, work / "bare")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
