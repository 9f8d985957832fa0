"""The README's command blocks, read the way tests/test_readme.py checks them.

A command block is a fenced block whose info string is `sh`. The HTML comment right above it,
`<!-- check: WORDS -->`, says how it is checked: `run` runs it for real on a fresh, migrated
and seeded lab; any other word names why it cannot run in the test suite (`server`: it needs
`make run` serving; `slow`: minutes of runs; `yours`: it names your own files or servers;
`root`: it installs system packages) and the block is only parsed. A `#> TEXT` line states
what the command before it prints (`<id>` and `…` stand for any text).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

WHY_NOT_RUN = frozenset({"server", "slow", "yours", "root"})
MARKS = WHY_NOT_RUN | {"run"}
_FENCE = re.compile(r"^```(\S*)\s*$")
_MARK = re.compile(r"^<!--\s*check:\s*(.*?)\s*-->$")
_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_OPERATORS = frozenset({"&", "&&", ";", "|", "||"})


@dataclass(frozen=True)
class Block:
    """One fenced block: where it starts, its info string, its marks and its text."""

    line: int
    info: str
    marks: frozenset[str]
    text: str

    @property
    def expected(self) -> list[str]:
        """What the block says its commands print (its `#>` lines)."""
        return [line.strip()[2:].strip() for line in self.text.splitlines() if _said(line)]


def _said(line: str) -> bool:
    return line.strip().startswith("#>")


def blocks(markdown: str) -> list[Block]:
    """Every fenced block, with the marks of the `<!-- check: … -->` comment right above it."""
    found: list[Block] = []
    lines = markdown.splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        close = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        above = lines[index - 1].strip() if index else ""
        mark = _MARK.match(above)
        marks = frozenset(mark.group(1).replace(",", " ").split()) if mark else frozenset()
        text = "\n".join(lines[index + 1 : close])
        found.append(Block(line=index + 1, info=opening.group(1), marks=marks, text=text))
        index = close + 1
    return found


def commands(text: str) -> list[list[str]]:
    """The simple commands of a shell block: continuations joined, comments and `VAR=value`
    prefixes dropped, `$(…)` substitutions checked as commands of their own."""
    joined = re.sub(r"\\\n\s*", " ", text)
    found: list[list[str]] = []
    for line in joined.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        for inner in _SUBSTITUTION.findall(line):
            found.extend(commands(inner))
        line = _SUBSTITUTION.sub("SUBSTITUTED", line)
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words: list[str] = []
        for token in [*lexer, ";"]:
            if token not in _OPERATORS:
                words.append(token)
                continue
            while words and _ASSIGNMENT.match(words[0]):
                words.pop(0)
            if words:
                found.append(words)
            words = []
    return found


def readme(root: Path) -> str:
    return (root / "README.md").read_text(encoding="utf-8")


def split_manage(argv: list[str]) -> tuple[str, list[str]] | None:
    """`python manage.py NAME ARGS…` as (NAME, ARGS); None for anything else."""
    if len(argv) >= 3 and argv[1] == "manage.py":
        return argv[2], argv[3:]
    return None


def looks_like_commands(block: Block) -> bool:
    """An unmarked block that starts like a command the README means to be run."""
    first = next((line.strip() for line in block.text.splitlines() if line.strip()), "")
    return first.startswith((".venv/", "make ", "curl ")) or shlex.split(first)[:1] == ["make"]


def pattern(expected: str) -> re.Pattern[str]:
    """A `#>` line as a pattern: `<anything>` and `…` stand for any text."""
    parts = re.split(r"(<[^<>]+>|…)", expected)
    return re.compile(
        "".join(".*?" if part == "…" or part.startswith("<") else re.escape(part) for part in parts)
    )
