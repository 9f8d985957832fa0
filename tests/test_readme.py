"""Every command the README shows is accepted as written, and the cheap ones run as written.

How a block declares what it needs is in tests/readme.py (and the README's own "How this README
is checked"): a new block plugs in by its `sh` fence and its `<!-- check: … -->` comment.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import signal
import subprocess
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class

from tests.readme import MARKS, Block, blocks, commands, looks_like_commands, pattern, readme

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = blocks(readme(ROOT))
COMMAND_BLOCKS = [block for block in BLOCKS if block.info == "sh"]
RUN_BLOCKS = [block for block in COMMAND_BLOCKS if "run" in block.marks]
# Programs a reader already has; anything else must be the lab's own or a file in the clone.
SHELL_PROGRAMS = frozenset({"kill", "echo", "export", "cd", "curl", "docker", "openssl"})
RUN_TIMEOUT_S = 300


def _ids(found: list[Block]) -> list[str]:
    return [f"README.md:{block.line}" for block in found]


def _refusal(argv: list[str]) -> str | None:
    """Why the lab would refuse this command line as written; None when it takes it."""
    program = argv[0]
    if program in SHELL_PROGRAMS:
        return None
    if program == "make":
        done = subprocess.run(
            ["make", "-n", *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        return None if done.returncode == 0 else done.stderr.strip()
    if Path(program).name.startswith("python"):
        return _python_refusal(argv[1:])
    return None if (ROOT / program).exists() else f"{program}: no such file in the clone"


def _python_refusal(args: list[str]) -> str | None:
    if args[:1] == ["manage.py"] and len(args) >= 2:
        return _manage_refusal(args[1], args[2:])
    if args[:1] == ["-m"] and len(args) >= 2:
        spec = importlib.util.find_spec(args[1])
        if spec is None or spec.origin is None:
            return f"no module {args[1]}"
        if "def arguments(" not in Path(spec.origin).read_text(encoding="utf-8"):
            return None
        try:
            importlib.import_module(args[1]).arguments().parse_args(args[2:])
        except SystemExit:
            return f"{args[1]} refuses {args[2:]}"
        return None
    script = next((arg for arg in args if not arg.startswith("-")), "")
    return None if (ROOT / script).is_file() else f"{script}: no such script in the clone"


def _manage_refusal(name: str, args: list[str]) -> str | None:
    app = get_commands().get(name)
    if app is None:
        return f"manage.py has no command {name}"
    command = load_command_class(app, name)
    parser = command.create_parser("manage.py", name)
    try:
        options = vars(parser.parse_args(args))
        check = getattr(command, "check_options", None)
        if check is not None:
            check(options)
    except Exception as error:  # CommandError from argparse or from the command's own check
        return f"manage.py {name}: {error}"
    return None


def test_it_finds_the_readme_command_blocks() -> None:
    assert len(COMMAND_BLOCKS) >= 10
    assert RUN_BLOCKS, "at least one block runs for real"


def test_every_command_block_says_how_it_is_checked() -> None:
    unmarked = [b.line for b in COMMAND_BLOCKS if not b.marks or not b.marks <= MARKS]
    assert unmarked == [], f"give these blocks <!-- check: run|{'|'.join(sorted(MARKS))} -->"
    stray = [b.line for b in BLOCKS if b.info != "sh" and looks_like_commands(b)]
    assert stray == [], "commands belong in ```sh blocks, so they are checked"


@pytest.mark.django_db
@pytest.mark.parametrize("block", COMMAND_BLOCKS, ids=_ids(COMMAND_BLOCKS))
def test_the_lab_accepts_every_command_as_written(block: Block) -> None:
    refused = [(argv, why) for argv in commands(block.text) if (why := _refusal(argv))]
    assert refused == []


@pytest.fixture
def fresh_lab(tmp_path: Path) -> dict[str, str]:
    """The environment of a fresh clone after `make run`: migrated, demo seeded, nothing else."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env |= {
        "LAB_STATE_DIR": str(tmp_path / "state"),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "LAB_SPEECH_WORKERS": "0",
    }
    for step in (["migrate", "--noinput"], ["seeddemo"]):
        python = str(ROOT / ".venv/bin/python")
        subprocess.run([python, "manage.py", *step], cwd=ROOT, env=env, check=True, timeout=300)
    return env


@pytest.mark.parametrize("block", RUN_BLOCKS, ids=_ids(RUN_BLOCKS))
def test_the_runnable_blocks_run_as_written(block: Block, fresh_lab: dict[str, str]) -> None:
    # Its own process group, so a server the block starts goes too when a command fails.
    shell = subprocess.Popen(
        ["bash", "-e", "-c", block.text],
        cwd=ROOT,
        env=fresh_lab,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        printed, _ = shell.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell.pid, signal.SIGTERM)
        shell.wait()
    assert shell.returncode == 0, printed
    missing = [line for line in block.expected if not pattern(line).search(printed)]
    assert missing == [], printed


@pytest.mark.django_db
def test_it_refuses_the_trials_command_the_readme_once_showed() -> None:
    [argv] = commands(
        ".venv/bin/python manage.py runscenarios --agent openai:http://127.0.0.1:8001/v1 \\\n"
        "    --trials 3 --tenant demo --agent-slug demo-agent"
    )
    assert "drop --agent and --model" in (_refusal(argv) or "")


def test_expected_output_lines_match_any_id_and_nothing_else() -> None:
    line = pattern("trials page: /t/demo/trials/<id>/")
    assert line.search("trials page: /t/demo/trials/7a3ace68-5263/")
    assert not line.search("trials page: /trials/7a3ace68-5263/")
