"""ls, glob and grep: finding files, on any store, without authorizing a change.

The finders walk the store in the fewest requests it allows (one flat listing per page on
object storage), inside the workspace only, through the gate (plugins may hide paths).
Hidden and dependency directories are skipped unless the pattern or path names them, and
so are the paths the project's ``.gitignore`` / ``.ignore`` files ignore (counted, unless
``include_ignored``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..globs import compile_glob
from ..grep import MAX_CONTEXT, compile_pattern
from ..outcomes import GlobOutcome, GrepOutcome, ListOutcome
from ..seam import Seam
from .base import READ_ONLY, Tool
from .render import MAX_LIST_CHARS, render_glob, render_grep, render_ls

__all__ = [
    "GlobArgs",
    "GlobTool",
    "GrepArgs",
    "GrepTool",
    "LsArgs",
    "LsTool",
]

MAX_RESULTS = 10_000
DEFAULT_GLOB_RESULTS = 100
DEFAULT_GREP_RESULTS = 100

_DIR = "Directory to search, `/` (the workspace root) by default."
_IGNORED_DESCRIPTION = ("Include the paths the .gitignore and .ignore files ignore "
                        "(default false: they are left out and counted).")

LS_DESCRIPTION = (
    "List one directory: its files (with sizes) and subdirectories (marked with a trailing "
    "/). Entries ignored by the project's .gitignore or .ignore files are left out and "
    "counted (include_ignored=true lists them). Listing shows names only: to change a file, "
    "read it first."
)

GLOB_DESCRIPTION = (
    "Find files by name with a glob pattern, below path (default /). `*` matches within one "
    "path segment, `**` any number of directories, `{a,b}` alternatives: `**/*.py` finds "
    "Python files at any depth, `*.py` only those directly in path, `src/**/test_*.py` tests "
    "under src. Results are in path order; when there are many, the output says how many "
    "more and how to narrow. Hidden and dependency directories (.git, node_modules, ...) are "
    "skipped unless the pattern names them (e.g. .github/**/*.yml); so are paths ignored by "
    "the project's .gitignore or .ignore files, unless the pattern names them or "
    "include_ignored=true. Finding a file does not let you change it: read it first."
)

GREP_DESCRIPTION = (
    "Search file contents with a Python regular expression, below path (default /; path may "
    "also be one file). glob limits which files are searched (e.g. **/*.py). output_mode: "
    "files_with_matches (default) lists the files; content shows the matching lines in "
    "`cat -n` format (line number, tab, the line exactly as in the file, so a shown line can "
    "be copied into an edit), with context_lines of context around each (context line "
    "numbers end in '-'); count gives matching lines per file. max_results caps the files "
    "(or, in content mode, the lines) shown; the output says how to see more. Binary, "
    "non-UTF-8 and very large files are skipped and counted, as are hidden and dependency "
    "directories unless glob or path names them, and paths ignored by the project's "
    ".gitignore or .ignore files unless include_ignored=true. Observation: content mode counts as "
    "reading the files whose lines it shows (you may then edit them, as after a read); "
    "files_with_matches and count do not."
)


class LsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(default="/", description="Directory to list, `/` by default.")
    include_ignored: bool = Field(default=False, description=_IGNORED_DESCRIPTION)


class GlobArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pattern: str = Field(description="Glob pattern, e.g. **/*.py or src/**/*.{ts,tsx}.")
    path: str = Field(default="/", description=_DIR)
    include_ignored: bool = Field(default=False, description=_IGNORED_DESCRIPTION)


class GrepArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pattern: str = Field(description="Python regular expression to search for, e.g. "
                         "def \\w+\\( or TODO.")
    path: str = Field(default="/", description="Directory (or file) to search, `/` by "
                      "default.")
    glob: str | None = Field(default=None, description="Only search files matching this glob "
                             "(relative to path), e.g. **/*.py.")
    output_mode: Literal["files_with_matches", "content", "count"] = Field(
        default="files_with_matches",
        description="files_with_matches (default): the files; content: the matching lines; "
        "count: matching lines per file.",
    )
    case_insensitive: bool = Field(default=False, description="Ignore case (default false).")
    context_lines: int = Field(
        default=0, ge=0, le=MAX_CONTEXT,
        description=f"content mode: lines of context around each match (0-{MAX_CONTEXT}).",
    )
    max_results: int | None = Field(
        default=None, ge=1, le=MAX_RESULTS,
        description=f"Most files (content mode: matching lines) to show (default "
        f"{DEFAULT_GREP_RESULTS}, at most {MAX_RESULTS}).",
    )
    include_ignored: bool = Field(default=False, description=_IGNORED_DESCRIPTION)


class LsTool(Tool[LsArgs, ListOutcome]):
    name = "ls"
    annotations = READ_ONLY
    args_model = LsArgs

    def __init__(self, description: str = LS_DESCRIPTION) -> None:
        self.description = description

    def run(self, fs: Seam, args: LsArgs) -> ListOutcome:
        return fs.list(args.path, depth=1, max_chars=MAX_LIST_CHARS,
                       include_ignored=args.include_ignored)

    def render(self, outcome: ListOutcome) -> str:
        return render_ls(outcome)


class GlobTool(Tool[GlobArgs, GlobOutcome]):
    name = "glob"
    annotations = READ_ONLY
    args_model = GlobArgs

    def __init__(self, description: str = GLOB_DESCRIPTION,
                 max_results: int = DEFAULT_GLOB_RESULTS) -> None:
        self.description = description
        self.max_results = max_results

    def run(self, fs: Seam, args: GlobArgs) -> GlobOutcome:
        pattern = args.pattern
        base = args.path
        if pattern.startswith("/"):
            base, pattern = "/", pattern.lstrip("/")
        glob = compile_glob(pattern, max_chars=fs.limits.glob_pattern_chars)
        return fs.glob(glob, base, limit=self.max_results,
                       include_ignored=args.include_ignored)

    def render(self, outcome: GlobOutcome) -> str:
        return render_glob(outcome)


class GrepTool(Tool[GrepArgs, GrepOutcome]):
    name = "grep"
    annotations = READ_ONLY
    args_model = GrepArgs

    def __init__(self, description: str = GREP_DESCRIPTION) -> None:
        self.description = description

    def run(self, fs: Seam, args: GrepArgs) -> GrepOutcome:
        limits = fs.limits
        pattern = compile_pattern(args.pattern, args.case_insensitive,
                                  max_chars=limits.grep_pattern_chars)
        files = (compile_glob(args.glob, max_chars=limits.glob_pattern_chars)
                 if args.glob else None)
        return fs.grep(
            pattern,
            args.path,
            files=files,
            mode=args.output_mode,
            context=args.context_lines,
            limit=args.max_results or DEFAULT_GREP_RESULTS,
            include_ignored=args.include_ignored,
        )

    def render(self, outcome: GrepOutcome) -> str:
        return render_grep(outcome)
