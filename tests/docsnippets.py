"""The code blocks of the documentation, and how each is run (tests/test_docs_snippets.py).

A fenced block's language says what it is. ```python blocks of one page run in order in
one namespace; ```bash, ```sh, ```shell and ```console blocks run through bash (a console
block's commands are its ``$ `` lines). Any other language (```text for output, ```json,
```toml, ...) is shown, never run. Two first lines change what a python or shell block
is, visibly, in the text itself:

- ``# not run: <why>``: a fragment or a command that cannot run here (a benchmark of
  minutes, a real cloud account); the reason is required;
- ``# file: <name>``: the block is a file's content (``test_my_agent.py``), written to
  ``<name>`` in the page's directory for a later command of the page to run.

A block without a language, and a fence line with text after its closing backticks, are
errors: nobody could tell whether it runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

PYTHON = frozenset({"python", "py"})
SHELL = frozenset({"bash", "sh", "shell", "console"})
NOT_RUN = re.compile(r"#\s*not run:\s*(\S.*)")
FILE = re.compile(r"#\s*file:\s*(\S+)\s*$")
INSTALL = re.compile(r"^\s*(pip|python -m pip) install\b")
_OPEN = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


class DocError(AssertionError):
    """A page whose blocks cannot be classified (or one that failed to run)."""


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    lang: str
    text: str

    @property
    def first(self) -> str:
        return self.text.split("\n", 1)[0].strip()

    @property
    def runnable(self) -> bool:
        return self.lang in PYTHON or self.lang in SHELL

    @property
    def skip_reason(self) -> str | None:
        match = NOT_RUN.fullmatch(self.first)
        return match.group(1) if match else None

    @property
    def file_name(self) -> str | None:
        match = FILE.fullmatch(self.first)
        return match.group(1) if match else None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(path: Path, name: str) -> list[Block]:
    """The fenced blocks of a markdown page, in order."""
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines):
        opened = _OPEN.match(lines[i])
        if not opened:
            i += 1
            continue
        fence, info, start = opened["fence"], opened["info"].strip(), i + 1
        if "`" in info and fence[0] == "`":  # an inline code span, not a fence
            i += 1
            continue
        if not info:
            raise DocError(f"{name}:{start}: a code block without a language (```python, "
                           "```bash, ```text for output ...)")
        body: list[str] = []
        i += 1
        while i < len(lines):
            stripped = lines[i].strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                break
            if stripped.startswith(fence[0] * 3) and stripped.startswith(fence):
                raise DocError(f"{name}:{i + 1}: text after a closing fence: {stripped!r}")
            body.append(lines[i][len(opened["indent"]):] if opened["indent"] else lines[i])
            i += 1
        else:
            raise DocError(f"{name}:{start}: a code block that is never closed")
        found.append(Block(name, start, info.split()[0].lower(), "\n".join(body)))
        i += 1
    return found


def substitute(text: str, pairs: list[tuple[str, str]]) -> str:
    for old, new in pairs:
        text = text.replace(old, new)
    return text


def shell_script(block: Block) -> str:
    """The commands of a shell block as one bash script, without its install lines (the
    install-line test runs those in a fresh venv)."""
    if block.lang == "console":
        source = [line[2:] for line in block.text.split("\n") if line.startswith("$ ")]
    else:
        source = block.text.split("\n")
    commands: list[str] = []
    pending = ""
    for line in source:
        pending += line
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        if not INSTALL.match(pending):
            commands.append(pending)
        pending = ""
    return "\n".join(commands + ([pending] if pending else []))


def install_lines(page_blocks: list[Block]) -> list[str]:
    """The ``pip install`` lines of a page's shell blocks, each without its comment."""
    lines: list[str] = []
    for block in page_blocks:
        if block.lang not in SHELL or block.skip_reason:
            continue
        for line in block.text.split("\n"):
            if INSTALL.match(line):
                lines.append(line.split(" #", 1)[0].strip())
    return lines
