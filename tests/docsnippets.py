"""The code blocks of the documentation, and how each is run (tests/test_docs_snippets.py).

A fenced block's language says what it is. ```python blocks of one page run in order in
one namespace; ```bash, ```sh, ```shell and ```console blocks run through bash (a console
block's commands are its ``$ `` lines). Any other language (```text for output, ```json,
```toml, ...) is shown, never run. Two first lines change what a python or shell block
is, visibly, in the text itself:

- ``# not run: <why>``: a fragment or a command that cannot run here (a benchmark of
  minutes, a real cloud account); the reason is required;
- ``# file: <name>``: the block is a file's content (``test_my_agent.py``), written to
  ``<name>`` in the page's directory before any block runs, so a command anywhere on the
  page can run it (an install line at the top running the example at the end).

A block without a language, and a fence line with text after its closing backticks, are
errors: nobody could tell whether it runs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

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


# -- running a page: a plan of steps, executed here or by another interpreter ------------------
@dataclass(frozen=True)
class Step:
    kind: str  # "python", "shell" or "file"
    where: str  # page:line, or the file's name
    code: str
    line: int = 0


def plan(page_blocks: list[Block], pairs: list[tuple[str, str]]) -> list[Step]:
    """What running a page does, in order: each python block, each shell block's commands
    (install lines left out), each file written; blocks marked ``# not run:`` and blocks
    that are not code are left out."""
    steps: list[Step] = []
    for block in page_blocks:
        if not block.runnable or block.skip_reason:
            continue
        code = substitute(block.text, pairs)
        if block.file_name:
            steps.append(Step("file", block.file_name, code.split("\n", 1)[1]))
        elif block.lang in PYTHON:
            steps.append(Step("python", block.where, code, block.line))
        elif (script := shell_script(Block(block.page, block.line, block.lang, code))).strip():
            steps.append(Step("shell", block.where, script))
    return steps


def _shell(step: Step, cwd: Path, env: dict[str, str] | None) -> None:
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", step.code], cwd=cwd, env=env,
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300,
    )
    if done.returncode != 0:
        raise DocError(f"{step.where}: exit {done.returncode}\n$ {step.code}\n"
                       f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def execute(steps: list[Step], cwd: Path, env: dict[str, str] | None = None) -> None:
    """Run a page's steps in ``cwd``: python in this interpreter, in one namespace (blank
    lines first, so a traceback's line numbers are the page's), shell through bash with
    ``env``. A python block that defines tests and is not a ``# file:`` would pass without
    running them, so it is an error."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    for step in steps:
        if step.kind == "file":
            (cwd / step.where).write_text(step.code, encoding="utf-8")
    for step in steps:
        if step.kind == "file":
            continue
        if step.kind == "shell":
            _shell(step, cwd, env)
        else:
            before = set(namespace)
            page = step.where.rsplit(":", 1)[0]
            exec(compile("\n" * step.line + step.code, page, "exec"), namespace)
            tests = sorted(n for n in set(namespace) - before
                           if n.startswith("test_") and callable(namespace[n]))
            if tests:
                raise DocError(f"{step.where}: defines {', '.join(tests)} but nothing runs "
                               "them: start the block with '# file: test_NAME.py' and run it "
                               "with pytest in a bash block")


def main(argv: list[str]) -> int:
    """``python docsnippets.py PLAN.json``: run a plan in the current directory, with this
    interpreter and its environment (the install-line test runs a page in a fresh venv)."""
    steps = [Step(**s) for s in json.loads(Path(argv[1]).read_text(encoding="utf-8"))]
    execute(steps, Path.cwd(), dict(os.environ))
    return 0


def dump(steps: list[Step], path: Path) -> None:
    path.write_text(json.dumps([asdict(s) for s in steps]), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
