"""The ``fsseam`` command line.

    fsseam demo [URL] [--backend memory|s3]
    fsseam mcp URL [--tools SET] [--owner NAME] [--branch NAME] [--read-only]
               [-o key=value ...]
    fsseam call URL TOOL JSON [--ledger FILE | --observations URL] [--owner NAME]
                [--call-id ID] [--branch NAME] [--read-only] [-o key=value ...]
    fsseam schema [--tools SET] [--dialect openai|anthropic|json]
    fsseam branch list URL [--json]
    fsseam branch diff URL NAME [--json] [--color auto|always|never]
    fsseam branch merge URL NAME --owner NAME [--expect TOKEN] [--path P ...] [--json]
    fsseam branch rebase URL NAME --owner NAME [--path P ...] [--json]
    fsseam branch rewind URL NAME --to HEAD
    fsseam branch discard URL NAME
    fsseam audit URL [--trail X] [--owner O] [--path P] [--verify] [--json]
                 [--anchor TARGET] [--anchors TARGET] [-o key=value ...]

Model text goes to stdout; progress and errors go to stderr. Exit status: 0 ok, 1 a tool
error (``call``) or a branch operation refused (``branch``: a merge refused or left
unfinished, a rebase that left conflict markers to resolve, a branch that does not
exist), 2 a usage or configuration error (bad arguments, arguments that are not a JSON
object, an unknown tool or tool set, unreadable ledger, misconfigured workspace, missing
optional package), 141 when the reader of stdout went away (``fsseam schema | head``),
quietly, as a program killed by SIGPIPE would.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol

from .audit import AuditEntry, AuditReport, AuditTrail, open_target
from .backends.history import History
from .backends.registry import open_backend
from .branches.manage import BranchInfo
from .errors import FsError
from .messages import Reason, render
from .observations.file import FileObservations, read_ledger, write_ledger
from .observations.store import BranchObservations
from .observations.texts import KeptText, load_texts, save_texts, texts_path
from .paths import display
from .policy import Ledger
from .text import TextFormat
from .tools.base import parse_arguments
from .tools.registry import TOOL_SETS
from .workspace import Workspace

__all__ = ["LedgerError", "load_ledger", "main", "save_ledger"]

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 128 + 13  # 128 + SIGPIPE, what a shell reports for `cmd | head`

LEDGER_FORMAT = Ledger().format


class UsageError(Exception):
    """A usage or configuration error: message to stderr, exit status 2."""


class LedgerError(UsageError):
    """The ledger file cannot be used (bad JSON, unknown format, unreadable)."""


# -- storage options -----------------------------------------------------------------------


def _storage_option(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    try:
        parsed: Any = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    return key, parsed


def _options(pairs: list[tuple[str, Any]] | None) -> dict[str, Any]:
    return dict(pairs or [])


def _add_storage_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-o",
        "--storage-option",
        dest="storage_options",
        metavar="KEY=VALUE",
        action="append",
        type=_storage_option,
        help="an fsspec storage option, repeatable (e.g. -o endpoint_url=http://127.0.0.1:5000)."
        " VALUE is read as JSON when it parses (true, 3, {...}), else as a string.",
    )


# -- the ledger file -----------------------------------------------------------------------


def load_ledger(path: Path) -> Ledger:
    """The ledger stored at ``path``, or a fresh one when the file does not exist.

    Raises LedgerError for anything else that is not a ledger this version can read: it
    never silently starts over, which would forget what the agent has observed.
    """
    try:
        return read_ledger(path)
    except FsError as e:
        raise LedgerError(f"ledger {path}: {e.message}") from e


def save_ledger(ledger: Ledger, path: Path) -> None:
    """Write the ledger atomically: a temp file in the same directory, fsync, os.replace."""
    write_ledger(ledger, path)


# -- commands ------------------------------------------------------------------------------


def _add_history(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--history", action="store_true",
        help="keep older versions of files for storage that keeps none (local, memory), so "
        "history, restore and undo_edit work; local copies go to the user's cache directory",
    )
    p.add_argument(
        "--history-dir", metavar="DIR",
        help="keep them in DIR (outside the workspace; implies --history)",
    )


def _workspace(args: argparse.Namespace, observations: Any = None) -> Workspace:
    wants = getattr(args, "history", False) or getattr(args, "history_dir", None)
    history = History(path=args.history_dir) if wants else None
    try:
        return Workspace(
            args.url,
            storage_options=_options(args.storage_options),
            read_only=args.read_only,
            history=history,
            observations=observations,
            branch=getattr(args, "branch", None),
        )
    except FsError as e:
        if e.reason in (Reason.observations_corrupt, Reason.observations_unreachable):
            raise LedgerError(f"cannot use the observations: {e.message}") from e
        raise UsageError(f"cannot open workspace {args.url}: {e.message}") from e


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import DemoError, run_demo, run_s3_demo

    try:
        if args.backend == "s3":
            if args.url is not None:
                raise UsageError("--backend s3 starts its own S3 server; give no URL")
            run_s3_demo(sys.stdout, sys.stderr)
        else:
            run_demo(args.url, _options(args.storage_options), sys.stdout)
    except DemoError as e:
        raise UsageError(str(e)) from e
    except FsError as e:
        raise UsageError(f"the demo failed: {e.message}") from e
    return EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    from .mcp import McpUnavailable, ToolServer, require_sdk, run_stdio

    try:
        require_sdk()
    except McpUnavailable as e:
        raise UsageError(str(e)) from e
    ws = _workspace(args)
    try:  # a bad --tools fails here, before anything is served
        server = ToolServer(ws, args.owner, args.tools)
    except ValueError as e:
        raise UsageError(str(e)) from e
    where = ws.url if args.branch is None else f"branch {args.branch!r} of {ws.url}"
    print(f"fsseam mcp: serving {where} over stdio as owner {args.owner!r} with the tools "
          f"{', '.join(t['name'] for t in server.tool_dicts())}", file=sys.stderr)
    with contextlib.suppress(KeyboardInterrupt):
        run_stdio(ws, args.owner, server)
    return EXIT_OK


def cmd_call(args: argparse.Namespace) -> int:
    ledger_path: Path | None = args.ledger
    observations: Any = args.observations
    if ledger_path is not None:
        if observations is not None:
            raise UsageError("give --ledger FILE or --observations URL, not both")
        if not ledger_path.parent.is_dir():
            raise LedgerError(f"the directory of ledger {ledger_path} does not exist")
        try:
            # Kept up to date after every call that records something (atomic replace).
            observations = FileObservations(ledger_path)
        except FsError as e:
            raise LedgerError(f"ledger {ledger_path}: {e.message}") from e
    raw = sys.stdin.read() if args.json == "-" else args.json
    arguments = _arguments(raw)
    ws = _workspace(args, observations)
    ctx = ws.context(args.owner)
    if args.tool not in ctx.tools.names():
        # The sentence a model gets for the same mistake (the catalogue's).
        raise UsageError(render(Reason.unknown_tool, details={
            "name": args.tool, "tools": ", ".join(ctx.tools.names())}))
    # Beside a ledger file, the text of what was read, so that a conflict in a later call
    # shows the diff one process would (fsseam.observations.texts).
    store = ws.policy.store if ws.policy is not None else None
    if isinstance(store, BranchObservations):
        store = store.inner  # the ledger file itself, whose texts sit beside it
    texts = texts_path(store.path) if isinstance(store, FileObservations) else None
    if texts is not None:
        _recall(ws, texts)
    result = ctx.tools.execute(args.tool, arguments, call_id=args.call_id)
    if texts is not None:
        _remember(ws, texts)
    print(result.text)
    sys.stdout.flush()
    if ledger_path is not None and not ledger_path.exists():
        write_ledger(Ledger(), ledger_path)  # a call that recorded nothing still makes it
    return EXIT_OK if result.ok else EXIT_TOOL_ERROR


def _recall(ws: Workspace, path: Path) -> None:
    for t in load_texts(path):
        ws.docs.put(t.key, t.version, TextFormat(bom=t.bom, newline=t.newline), t.data)


def _remember(ws: Workspace, path: Path) -> None:
    with contextlib.suppress(OSError):  # a cache: failing to keep it costs a diff, no more
        save_texts(path, [KeptText(key=k, version=v, bom=f.bom, newline=f.newline, data=d)
                          for k, v, f, d in ws.docs.entries()])


def _arguments(raw: str) -> dict[str, Any]:
    """The JSON argument of ``call``: a mistake here is the shell user's, not a model's, so
    it is a usage error (exit 2) rather than a tool result (in the words a model gets)."""
    try:
        return parse_arguments(raw)
    except FsError as e:
        shown = f" The argument was {raw[:200]!r}." if e.reason == Reason.arguments_not_json else ""
        raise UsageError(e.message + shown) from e


def cmd_schema(args: argparse.Namespace) -> int:
    from .mcp import ToolServer

    ws = Workspace("memory://fsseam-schema")
    try:
        chosen = [t["name"] for t in ToolServer(ws, tools=args.tools).tool_dicts()]
    except ValueError as e:
        raise UsageError(str(e)) from e
    by_name = {_name(s): s for s in ws.context().tools.schemas(args.dialect)}
    print(json.dumps([by_name[n] for n in chosen], indent=2, ensure_ascii=False))
    return EXIT_OK


def _name(schema: dict[str, Any]) -> str:
    name: str = schema["function"]["name"] if "function" in schema else schema["name"]
    return name


def _add_tools(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument(
        "--tools", default=default, metavar="SET",
        help=f"the tools: a tool set ({', '.join(TOOL_SETS)}) or tool names, or a comma list "
        f"mixing them (files,multi_edit); default: {default}. Sets: "
        + "; ".join(f"{n}: {', '.join(t)}" for n, t in TOOL_SETS.items() if n != "all"),
    )


# -- branches ------------------------------------------------------------------------------
# What a person reads: the review, the merge's report, the log (never the model).

_ANSI = {"+": "32", "-": "31", "@": "36"}


def _colored(text: str) -> str:
    """The review's text with ANSI colors: added lines green, removed red, hunks cyan,
    each file's line bold. A diff line starts with one of ``+-@ \\``; a file's with its
    change (added, changed, deleted, moved)."""
    out = []
    for i, line in enumerate(text.splitlines()):
        if line.startswith(("+++", "---")):
            out.append(f"\033[1m{line}\033[0m")
        elif line[:1] in _ANSI:
            out.append(f"\033[{_ANSI[line[:1]]}m{line}\033[0m")
        elif i > 0 and line[:1].isalpha():
            out.append(f"\033[1;33m{line}\033[0m")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


def _branch_lines(info: BranchInfo) -> list[str]:
    """One branch and its log (newest first: any head there is a ``rewind --to``)."""
    owners = ", ".join(info.owners) or "none"
    lines = [f"{info.name}  head {info.head[:12]}  {info.files} file(s) changed  owners: "
             f"{owners}  created {_when(info.created)}"
             + (f" by {info.created_by}" if info.created_by else "")
             + ("  [merge under way]" if info.merging else "")]
    for h in info.log:
        what = h.operation + (f" {display(h.path)}" if h.path else "")
        by = f" by {h.owner}" if h.owner else ""
        lines.append(f"  {h.head[:12]}  {_when(h.time)}  {what}{by}")
    return lines


def _branch_error(args: argparse.Namespace, e: FsError) -> int:
    print(f"fsseam branch {args.verb}: Error [{e.code.value}]: {e.message}", file=sys.stderr)
    return EXIT_TOOL_ERROR


def cmd_branch_list(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    try:
        found = ws.branches()
    except FsError as e:
        return _branch_error(args, e)
    if args.json:
        print(json.dumps([b.model_dump(mode="json") for b in found], indent=2))
    elif not found:
        print("no branches")
    else:
        print("\n".join(line for b in found for line in _branch_lines(b)))
    return EXIT_OK


def cmd_branch_diff(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    try:
        diff = ws.diff(args.name)
    except FsError as e:
        return _branch_error(args, e)
    if args.json:
        print(diff.model_dump_json(indent=2))
        return EXIT_OK
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty()
                                       and not os.environ.get("NO_COLOR"))
    sys.stdout.write(_colored(diff.text) if color else diff.text)
    return EXIT_OK


def cmd_branch_merge(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    try:
        outcome = ws.merge(args.name, owner=args.owner, expect=args.expect, paths=args.paths)
    except FsError as e:
        return _branch_error(args, e)
    if args.json:
        print(outcome.model_dump_json(indent=2))
    else:
        sys.stdout.write(outcome.text)
    if not outcome.ok:
        print(f"fsseam branch merge: not merged ({outcome.code.value if outcome.code else ''})",
              file=sys.stderr)
        return EXIT_TOOL_ERROR
    return EXIT_OK


def cmd_branch_rebase(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    try:
        outcome = ws.rebase(args.name, owner=args.owner, paths=args.paths)
    except FsError as e:
        return _branch_error(args, e)
    if args.json:
        print(outcome.model_dump_json(indent=2))
    else:
        sys.stdout.write(outcome.text)
    if outcome.conflicted:
        # Not 0: a merge now would publish the markers as they are (``rebase && merge``).
        print(f"fsseam branch rebase: {len(outcome.conflicted)} file(s) to resolve on the "
              "branch before a merge", file=sys.stderr)
        return EXIT_TOOL_ERROR
    return EXIT_OK


def cmd_branch_rewind(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    try:
        info = ws.rewind(args.name, to=args.to)
    except FsError as e:
        return _branch_error(args, e)
    print(f"rewound {info.name} to {info.head[:12]} ({info.files} file(s) changed)")
    return EXIT_OK


def cmd_branch_discard(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    try:
        ws.discard(args.name)
    except FsError as e:
        return _branch_error(args, e)
    print(f"discarded {args.name} (what only it used is freed by fsseam branch collect)")
    return EXIT_OK


def cmd_branch_collect(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    try:
        done = ws.collect(grace=timedelta(seconds=args.grace))
    except FsError as e:
        return _branch_error(args, e)
    print(f"removed {done.removed_blobs} blob(s) and {done.removed_manifests} manifest(s); "
          f"kept {done.kept_blobs} blob(s) and {done.kept_manifests} manifest(s)")
    return EXIT_OK


# -- the parser ----------------------------------------------------------------------------
class _Commands(Protocol):
    """What ``ArgumentParser.add_subparsers()`` returns, as far as the commands use it."""
    def add_parser(self, name: str, *, help: str | None = ...,
                   description: str | None = ...) -> argparse.ArgumentParser: ...


def _add_branch_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--branch", metavar="NAME",
        help="work on branch NAME (made from main's current files when absent): reads see "
        "its changes over main, every change lands only on it; main is untouched until "
        "fsseam branch merge",
    )


def _add_demo(sub: _Commands) -> None:
    """``fsseam demo``."""
    from .demo import DEMO_DESCRIPTION

    demo = sub.add_parser(
        "demo",
        help="a scripted two-agent session (reads, edits, a stale conflict, its recovery)",
        description=DEMO_DESCRIPTION,
    )
    demo.add_argument(
        "url", nargs="?", metavar="URL",
        help="where to run it (default memory://demo); the root must not hold notes.md",
    )
    demo.add_argument(
        "--backend", choices=["memory", "s3"], default="memory",
        help="s3: start a moto S3 server on 127.0.0.1, run the demo in a fresh bucket, "
        "stop the server (needs fsseam-s3 with its test extra; from a clone of fsseam: "
        "pip install './backends/s3[test]')",
    )
    _add_storage_options(demo)
    demo.set_defaults(func=cmd_demo)


def _add_mcp(sub: _Commands) -> None:
    """``fsseam mcp``."""
    mcp = sub.add_parser(
        "mcp",
        help="serve the tools over MCP (stdio)",
        description="Serve a tool set as an MCP server over stdio until stdin closes "
        "(--tools; default files). Each session is its own owner for the observation policy. "
        "--read-only serves only the tools of the set that cannot modify anything; --branch "
        "NAME keeps every change on that branch until fsseam branch merge. Needs the "
        "MCP SDK: pip install 'mcp>=1.10' (the mcp extra of fsseam).",
    )
    mcp.add_argument("url", metavar="URL", help="the workspace root: /abs/dir, s3://b/p, ...")
    mcp.add_argument(
        "--owner", default="mcp", help="owner name of the session (default: mcp)"
    )
    mcp.add_argument("--read-only", action="store_true", help="refuse every modification")
    _add_branch_option(mcp)
    _add_tools(mcp, "files")
    _add_history(mcp)
    _add_storage_options(mcp)
    mcp.set_defaults(func=cmd_mcp)


def _add_call(sub: _Commands) -> None:
    """``fsseam call``."""
    call = sub.add_parser(
        "call",
        help="run one tool call and print the text the model sees",
        description="Run one tool call and print the text the model sees. Exit status 0 "
        "when the call succeeded, 1 on a tool error, 2 on a usage error. With --ledger, "
        "what the owner has observed is loaded from FILE before the call and saved after "
        "it, so a write or edit in one call can rely on a read in an earlier call.",
    )
    call.add_argument("url", metavar="URL", help="the workspace root: /abs/dir, s3://b/p, ...")
    call.add_argument(
        "tool", metavar="TOOL",
        help="any tool: " + ", ".join(TOOL_SETS["all"]) + " (fsseam schema --tools all "
        "prints their schemas)",
    )
    call.add_argument(
        "json", metavar="JSON", help="the arguments as a JSON object ('-' reads stdin)"
    )
    call.add_argument(
        "--ledger", type=Path, metavar="FILE",
        help="observation ledger file (versioned JSON, created if missing)",
    )
    call.add_argument(
        "--observations", metavar="URL",
        help="where observations are kept: a .json ledger file, or any fsspec URL "
        "(s3://bucket/.fsseam-observations/, a local directory) shared by many machines; "
        "-o options apply when its protocol is the workspace's",
    )
    call.add_argument("--owner", default="agent", help="owner name (default: agent)")
    call.add_argument(
        "--call-id", metavar="ID", type=_call_id,
        help="the call's id (a script's or a scheduler's step id): the same call run again "
        "with the same ID after its change landed prints what it printed and changes "
        "nothing (default: none, every run is a new call)",
    )
    call.add_argument("--read-only", action="store_true", help="refuse every modification")
    _add_branch_option(call)
    _add_history(call)
    _add_storage_options(call)
    call.set_defaults(func=cmd_call)


def _call_id(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError("a call id is a non-empty string")
    return value


def _add_schema(sub: _Commands) -> None:
    """``fsseam schema``."""
    schema = sub.add_parser(
        "schema",
        help="print the tool schemas as JSON",
        description="Print the schemas of a tool set as JSON, in a model API's shape.",
    )
    _add_tools(schema, "all")
    schema.add_argument(
        "--dialect", choices=["openai", "anthropic", "json"], default="openai",
        help="the shape (default: openai)",
    )
    schema.set_defaults(func=cmd_schema)


def _add_branch(sub: _Commands) -> None:
    """``fsseam branch``: list, diff, merge, rebase, rewind, discard, collect."""
    branch = sub.add_parser(
        "branch",
        help="review and publish the branches of a workspace (list, diff, merge, ...)",
        description="The branches of a workspace (docs/branches.md): an agent works on a "
        "branch (fsseam mcp URL --branch NAME), a person reviews its diff and merges it. "
        "Exit status: 0 ok, 1 refused (a merge refused or left unfinished: the report says "
        "why; a rebase that left conflict markers; a branch that does not exist), 2 a usage "
        "error.",
    )
    verbs = branch.add_subparsers(dest="verb", metavar="VERB")
    branch.set_defaults(func=lambda _: _no_verb(branch))
    made: list[argparse.ArgumentParser] = []

    def verb(name: str, func: Any, help: str, *, named: bool = True) -> argparse.ArgumentParser:
        p = verbs.add_parser(name, help=help, description=help[:1].upper() + help[1:] + ".")
        p.add_argument("url", metavar="URL", help="the workspace root: /abs/dir, s3://b/p, ...")
        if named:
            p.add_argument("name", metavar="NAME", help="the branch")
        p.set_defaults(func=func, read_only=False)
        made.append(p)
        return p

    p = verb("list", cmd_branch_list, "list the branches with their heads, owners and log "
             "(newest head first; rewind --to takes any of them)", named=False)
    p.add_argument("--json", action="store_true", help="print them as JSON")
    p = verb("diff", cmd_branch_diff, "show every file the branch added, changed, deleted "
             "or moved, as a unified diff against the version it was based on, and the "
             "review token (merge --expect TOKEN publishes exactly what was shown)")
    p.add_argument("--json", action="store_true", help="print the review as JSON")
    p.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                   help="color the diff (default auto: when stdout is a terminal and "
                   "NO_COLOR is not set)")
    p = verb("merge", cmd_branch_merge, "publish the branch to main, each file a conditional "
             "write against the version it was based on; refused, with nothing written, on a "
             "conflict or when --expect no longer names the branch and main")
    p.add_argument("--owner", required=True, help="who merges (kept in the branch's log)")
    p.add_argument("--expect", metavar="TOKEN",
                   help="the token of the review approved (fsseam branch diff prints it)")
    p.add_argument("--path", dest="paths", action="append", metavar="P",
                   help="publish only this file (repeatable); the rest stays on the branch")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p = verb("rebase", cmd_branch_rebase, "move each change of the branch that main changed "
             "too onto main's current file: combined, or with conflict markers (<<<<<<< main "
             "... >>>>>>> branch NAME) where both changed the same lines, to resolve on the "
             "branch; exit 1 when markers were left")
    p.add_argument("--owner", required=True, help="who rebases (kept in the branch's log)")
    p.add_argument("--path", dest="paths", action="append", metavar="P",
                   help="rebase only this file (repeatable)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p = verb("rewind", cmd_branch_rewind, "move the branch back to an earlier head of its "
             "log (undo an agent's turn)")
    p.add_argument("--to", required=True, metavar="HEAD",
                   help="a head of the branch's log (at least its first 8 characters)")
    verb("discard", cmd_branch_discard, "remove the branch (collect frees what only it used)")
    p = verb("collect", cmd_branch_collect, "remove the branch objects no branch reaches",
             named=False)
    p.add_argument("--grace", type=float, default=3600.0, metavar="SECONDS",
                   help="keep objects younger than this (default 3600: a change or merge "
                   "in progress may still need them)")
    for p in made:
        _add_storage_options(p)


# -- the audit trail -----------------------------------------------------------------------


def _same_store(url: str, target: str) -> bool:
    """Whether -o options meant for ``url`` apply to ``target`` (the same protocol)."""
    def protocol(u: str) -> str:
        return u.split("://", 1)[0] if "://" in u else "file"
    return protocol(url) == protocol(target)


def _trail(args: argparse.Namespace) -> AuditTrail:
    options = _options(args.storage_options)
    try:
        if args.trail is None:
            return AuditTrail.of_workspace(args.url, options)
        return AuditTrail.open(args.trail, options if _same_store(args.url, args.trail)
                               else None)
    except FsError as e:
        raise UsageError(f"cannot open the audit trail: {e.message}") from e


def _target(args: argparse.Namespace, target: str) -> Any:
    options = _options(args.storage_options) if _same_store(args.url, target) else None
    try:
        return open_target(target, options)
    except FsError as e:
        raise UsageError(f"cannot open {target}: {e.message}") from e


def _entry_line(e: AuditEntry) -> str:
    def short(v: dict[str, Any] | None) -> str:
        return "-" if v is None else f"{v['kind']}:{str(v['value']).strip(chr(34))[:12]}"
    where = e.path if e.source is None else f"{e.source} -> {e.path}"
    on = f" [{e.branch}]" if e.branch is not None else ""
    return (f"{e.seq:>6}  {e.time}  {e.owner or '-'}  {e.tool}  {e.action} {where}{on}  "
            f"{short(e.version_before)} -> {short(e.version_after)}"
            f"  call={e.call_id or '-'}")


def _report_lines(report: AuditReport) -> list[str]:
    lines = [f"{report.trail}: {report.entries} entries; {report.checked} confirmed by the "
             f"store, {report.not_checkable} not checkable here; {report.anchors} anchors"]
    first = report.first
    if first is None:
        lines.append("ok: the chain is whole and the store contradicts no entry")
    else:
        lines.append(f"FIRST PROBLEM at entry {first.seq} ({first.kind}): {first.text}")
        lines += [f"  also at entry {p.seq} ({p.kind}): {p.text}" for p in report.problems[1:]]
    lines.append(report.tail)
    return lines


def cmd_audit(args: argparse.Namespace) -> int:
    trail = _trail(args)
    try:
        if args.anchor is not None:
            made = trail.anchor(_target(args, args.anchor))
            print(json.dumps(made.model_dump()) if args.json
                  else f"anchored entry {made.seq} ({made.hash}) at {args.anchor}")
            if not args.verify:
                return EXIT_OK
        if args.verify:
            store = open_backend(args.url, _options(args.storage_options))
            anchors = _target(args, args.anchors) if args.anchors is not None else None
            report = trail.verify(store, anchors)
            if args.json:
                dumped = report.model_dump(mode="json")
                dumped["ok"] = report.ok
                dumped["problems"] = [dict(p.model_dump(mode="json"), text=p.text)
                                      for p in report.problems]
                print(json.dumps(dumped, indent=2))
            else:
                print("\n".join(_report_lines(report)))
            return EXIT_OK if report.ok else EXIT_TOOL_ERROR
        found = trail.entries(owner=args.owner, path=args.path)
    except FsError as e:
        print(f"fsseam audit: {e.message}", file=sys.stderr)
        return EXIT_TOOL_ERROR
    if args.json:
        print(json.dumps([e.model_dump(mode="json") for e in found], indent=2))
    elif not found:
        print("no entries")
    else:
        print("\n".join(_entry_line(e) for e in found))
    return EXIT_OK


def _add_audit(sub: _Commands) -> None:
    p = sub.add_parser(
        "audit",
        help="list a workspace's audit trail, verify it against the store, anchor its head",
        description="The audit trail of a workspace opened with audit=... (docs/audit.md). "
        "Exit status: 0 ok, 1 verify found a problem (the first changed, removed, "
        "reordered, contradicted or missing entry is named) or the trail could not be "
        "read, 2 a usage error.",
    )
    p.add_argument("url", metavar="URL", help="the workspace root: /abs/dir, s3://b/p, ...")
    p.add_argument("--trail", metavar="X", help="where the trail is, when it is not the "
                   "workspace's own .fsseam-audit/ (the audit= URL)")
    p.add_argument("--owner", metavar="O", help="only the entries of this owner")
    p.add_argument("--path", metavar="P", help="only the entries of this file (/a.txt; a "
                   "folder when it ends in /; branch:NAME for a branch's ref)")
    p.add_argument("--verify", action="store_true", help="recompute the chain and check "
                   "each entry against the store; exit 1 on any problem")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--anchor", metavar="TARGET", help="write the chain's head create-only "
                   "at TARGET (any URL; an S3 bucket with Object Lock keeps it for good)")
    p.add_argument("--anchors", metavar="TARGET", help="with --verify: check every anchor "
                   "kept at TARGET is in the chain, and whether the tail could have been cut")
    p.set_defaults(func=cmd_audit)
    _add_storage_options(p)


def _no_verb(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return EXIT_USAGE


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fsseam",
        description="Safe file tools for AI agents over any fsspec filesystem.",
        epilog="Exit status: 0 ok, 1 a tool error (call) or a branch operation refused "
        "(branch), 2 a usage or configuration error.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in (_add_demo, _add_mcp, _add_call, _add_schema, _add_branch, _add_audit):
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        try:
            status: int = args.func(args)
        except UsageError as e:
            print(f"fsseam {args.command}: error: {e}", file=sys.stderr)
            return EXIT_USAGE
        sys.stdout.flush()
    except BrokenPipeError:
        return _stdout_gone()
    return status


def _stdout_gone() -> int:
    """The reader of stdout closed it (``| head``): stop quietly. stdout is pointed at
    /dev/null so that the interpreter's final flush does not print a second traceback."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
