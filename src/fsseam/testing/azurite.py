"""Azurite (the Azure Storage emulator) for tests, benchmarks and demos: blob service only,
on 127.0.0.1, with every request counted.

    from fsseam.testing.azurite import azurite_server

    with azurite_server() as az:
        container = az.create_container()
        ws = Workspace(f"az://{container}/p", storage_options=az.storage_options())
        ...
        az.take()                 # [("HEAD", "/devstoreaccount1/c/p/f.txt"), ("GET", ...)]

Azurite is an npm package (``npm install --prefix .ci/node azurite@3``); it needs Node.js.
:func:`find_azurite` looks for its ``azurite-blob`` command in ``$FSSEAM_AZURITE``, on
``PATH``, then in a project-local npm prefix (``.ci/node`` in the working directory or one
of its parents, or in the source checkout fsseam is installed from) and raises
:class:`AzuriteNotFound` (with that install hint) when there is none.
:func:`ensure_azurite` (what the test fixtures call) installs it there itself when ``npm``
is on the machine, as the GCS emulator arrives with pip: once, under a file lock (the test
workers start together), recording what it did in ``.ci/node/fsseam-install.json`` so the
test session can say so.

The server keeps blobs in memory (``--inMemoryPersistence``), accepts any API version
and ignores headers it does not know (``--loose --skipApiVersionCheck``), sends no
telemetry, and listens on a port the kernel picks (``--blobPort 0``), read back from its
output, so parallel sessions never collide. Its output goes to a file; it is stopped by
PID when the ``with`` block ends.

With ``counted=True`` (the default) clients talk to it through a counting proxy
(:mod:`fsseam.testing.proxy`), so request counts are what the server received: Azurite has
no request log of its own that is written before its answer.
"""

from __future__ import annotations

import fcntl
import importlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .proxy import ForwardingProxy, ProxiedRequest, counting_proxy

__all__ = [
    "ACCOUNT_KEY",
    "ACCOUNT_NAME",
    "AzuriteEndpoint",
    "AzuriteNotFound",
    "azurite_server",
    "ensure_azurite",
    "find_azurite",
    "install_record",
    "project_prefix",
    "say_installed",
]

ACCOUNT_NAME = "devstoreaccount1"
ACCOUNT_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
"""Azurite's well-known development account (public, documented by Microsoft)."""

ENV_VAR = "FSSEAM_AZURITE"
NPM_PREFIX = Path(".ci") / "node"
PACKAGE = "azurite@3"
INSTALL_RECORD = "fsseam-install.json"
INSTALL_SECONDS = 600
INSTALL_HINT = (
    "install it with `npm install --prefix .ci/node azurite@3 --no-audit --no-fund` "
    f"(Node.js needed), or set {ENV_VAR} to its azurite-blob command"
)

_LISTENING = re.compile(r"successfully listens on (http://[\w.:\[\]-]+)")


class AzuriteNotFound(RuntimeError):
    """No ``azurite-blob`` command (or no Node.js to run it) was found."""


def _blob_command(candidate: Path) -> Path | None:
    # `azurite` starts all three services on fixed ports; only the blob one is wanted.
    if candidate.name in ("azurite", "azurite.cmd"):
        sibling = candidate.with_name(candidate.name.replace("azurite", "azurite-blob"))
        if sibling.exists():
            return sibling
    return candidate if candidate.exists() else None


def _npm_prefix_candidates() -> Iterator[Path]:
    here = Path.cwd().resolve()
    for d in (here, *here.parents):
        yield d / NPM_PREFIX / "node_modules" / ".bin" / "azurite-blob"
    # An editable install (src/fsseam/testing/azurite.py): the checkout's own prefix.
    checkout = Path(__file__).resolve().parents[3]
    yield checkout / NPM_PREFIX / "node_modules" / ".bin" / "azurite-blob"


def find_azurite() -> Path:
    """The ``azurite-blob`` command to run (raises :class:`AzuriteNotFound`)."""
    configured = os.environ.get(ENV_VAR)
    if configured:
        found = _blob_command(Path(configured))
        if found is None:
            raise AzuriteNotFound(f"{ENV_VAR}={configured} does not exist; {INSTALL_HINT}")
        return found
    if shutil.which("node") is None:
        raise AzuriteNotFound(f"Node.js (node) is not on PATH; {INSTALL_HINT}")
    for name in ("azurite-blob", "azurite"):
        on_path = shutil.which(name)
        if on_path:
            found = _blob_command(Path(on_path))
            if found is not None:
                return found
    for candidate in _npm_prefix_candidates():
        if candidate.exists():
            return candidate
    raise AzuriteNotFound(f"azurite-blob was not found; {INSTALL_HINT}")


def project_prefix() -> Path:
    """The project's npm prefix: ``.ci/node`` in the source checkout fsseam is installed
    from (an editable install, as the README's test command makes), else in the nearest
    directory from the working one up that holds a ``pyproject.toml``, else here."""
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "pyproject.toml").exists():
        return checkout / NPM_PREFIX
    here = Path.cwd().resolve()
    for d in (here, *here.parents):
        if (d / "pyproject.toml").exists():
            return d / NPM_PREFIX
    return here / NPM_PREFIX


def install_record(prefix: Path | None = None) -> dict[str, Any] | None:
    """What :func:`ensure_azurite` recorded when it installed Azurite into ``prefix`` (the
    project's by default): ``{"package", "prefix", "seconds", "finished"}``, or None."""
    path = (prefix or project_prefix()) / INSTALL_RECORD
    try:
        record: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return record


_SAID: list[str] = []


def say_installed(terminalreporter: Any, since: float) -> None:
    """A test session's summary line when its tests installed Azurite (since ``since``, the
    session's start): a run that took half a minute more than usual says why. For a
    conftest's ``pytest_terminal_summary``; said once per process, however many conftests
    ask."""
    record = install_record()
    if record is None or float(record.get("finished", 0)) < since or _SAID:
        return
    _SAID.append(str(record.get("prefix")))
    terminalreporter.write_line(
        f"fsseam: installed Azurite ({record.get('package')}) for the Azure tests into "
        f"{record.get('prefix')} with npm in {record.get('seconds')} s; later runs use it."
    )


def ensure_azurite(prefix: Path | None = None) -> Path:
    """The ``azurite-blob`` command, installed first with ``npm`` into ``prefix`` when it
    is not there and ``npm`` and ``node`` are on PATH. Without ``prefix``: the command
    :func:`find_azurite` finds, else one installed into the project's ``.ci/node``.

    Raises :class:`AzuriteNotFound` with the reason when it cannot: no Node.js, or the
    install failed (its output's end). Several processes calling it at once install once:
    the first holds a lock on the prefix while the others wait for it, then find its
    command."""
    if prefix is None:
        if os.environ.get(ENV_VAR):
            return find_azurite()  # the user named the command: not ours to install another
        try:
            return find_azurite()
        except AzuriteNotFound:
            pass
    elif (prefix / "node_modules" / ".bin" / "azurite-blob").exists():
        return prefix / "node_modules" / ".bin" / "azurite-blob"
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise AzuriteNotFound("azurite-blob was not found and Node.js and npm are not both "
                              f"on PATH, so the tests cannot install it; {INSTALL_HINT}")
    target = prefix or project_prefix()
    target.mkdir(parents=True, exist_ok=True)
    with (target / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        command = target / "node_modules" / ".bin" / "azurite-blob"
        if command.exists():  # another process installed it while this one waited
            return command
        started = time.monotonic()
        try:
            done = subprocess.run(
                ["npm", "install", "--prefix", str(target), PACKAGE, "--no-audit",
                 "--no-fund", "--loglevel=error"],
                capture_output=True, text=True, timeout=INSTALL_SECONDS, check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            raise AzuriteNotFound(f"npm install of {PACKAGE} into {target} failed: {e}; "
                                  f"{INSTALL_HINT}") from None
        if done.returncode != 0 or not command.exists():
            tail = (done.stderr or done.stdout)[-1500:]
            raise AzuriteNotFound(f"npm install of {PACKAGE} into {target} failed "
                                  f"(exit {done.returncode}): {tail}; {INSTALL_HINT}")
        record = {"package": PACKAGE, "prefix": str(target),
                  "seconds": round(time.monotonic() - started, 1), "finished": time.time()}
        (target / INSTALL_RECORD).write_text(json.dumps(record))
        return command


@cache
def _supported_flags(command: str) -> frozenset[str]:
    # Older Azurite 3.x releases refuse options they do not know (--disableTelemetry
    # appeared in 3.33): ask the installed one which it has.
    try:
        out = subprocess.run(
            [command, "--help"], capture_output=True, text=True, timeout=60, check=False,
            stdin=subprocess.DEVNULL,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(re.findall(r"--[A-Za-z]+", out))


def connection_string(blob_endpoint: str) -> str:
    """A connection string for the development account at ``blob_endpoint``."""
    return (
        f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT_NAME};AccountKey={ACCOUNT_KEY};"
        f"BlobEndpoint={blob_endpoint};"
    )


@dataclass(frozen=True)
class AzuriteEndpoint:
    """A running Azurite blob service.

    ``blob_endpoint`` is what clients use (the counting proxy's address when counted);
    ``server_url`` is Azurite itself. Paths in request records look like
    ``/devstoreaccount1/CONTAINER/KEY``.
    """

    blob_endpoint: str
    server_url: str
    log_path: Path
    proxy: ForwardingProxy | None

    @property
    def connection_string(self) -> str:
        return connection_string(self.blob_endpoint)

    def storage_options(self) -> dict[str, Any]:
        """Workspace ``storage_options`` (also ``adlfs.AzureBlobFileSystem`` keyword
        arguments) for this server."""
        return {"connection_string": self.connection_string}

    def filesystem(self, **kwargs: Any) -> Any:
        """An ``adlfs.AzureBlobFileSystem`` of its own (no instance cache)."""
        adlfs: Any = importlib.import_module("adlfs")
        return adlfs.AzureBlobFileSystem(
            **self.storage_options(), skip_instance_cache=True, **kwargs
        )

    def create_container(self, name: str | None = None) -> str:
        """A new container (random name unless given); returns its name. Made on the
        server directly, so it does not show in the request counts."""
        blob: Any = importlib.import_module("azure.storage.blob")
        container = name or "c-" + uuid.uuid4().hex[:20]
        admin = f"{self.server_url}/{ACCOUNT_NAME}"
        with blob.BlobServiceClient.from_connection_string(connection_string(admin)) as svc:
            svc.create_container(container)
        return container

    # -- request counts (empty when not counted) ---------------------------
    def take(self) -> list[tuple[str, str]]:
        """(method, path) of every request since the last take, in order (and reset)."""
        return self.proxy.take() if self.proxy is not None else []

    def take_records(self) -> list[ProxiedRequest]:
        return self.proxy.take_records() if self.proxy is not None else []

    def counts(self) -> Counter[str]:
        """Requests per method since the last take, without resetting."""
        return self.proxy.counts() if self.proxy is not None else Counter()


def _wait_listening(proc: subprocess.Popen[bytes], log: Path, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        match = _LISTENING.search(text)
        if match:
            return match.group(1).rstrip("/")
        if proc.poll() is not None:
            raise RuntimeError(f"azurite exited ({proc.returncode}): {text[-2000:]}")
        time.sleep(0.05)
    raise RuntimeError(f"azurite did not start in {timeout} s: {log.read_text()[-2000:]}")


@contextmanager
def azurite_server(
    tmp_dir: str | os.PathLike[str] | None = None,
    *,
    counted: bool = True,
    memory_limit_mib: int = 1024,
    start_timeout: float = 60.0,
) -> Iterator[AzuriteEndpoint]:
    """Start Azurite's blob service on 127.0.0.1 (a free port); stop it on exit.

    ``tmp_dir``: where its output (``azurite.log``) goes and its working directory (a
    temporary directory, removed on exit, when not given). ``counted``: put a counting
    proxy in front. ``memory_limit_mib``: the in-memory blob store's cap.
    """
    command = find_azurite()
    flags = _supported_flags(str(command))
    args = [
        str(command), "--blobHost", "127.0.0.1", "--blobPort", "0",
        "--inMemoryPersistence", "--loose", "--skipApiVersionCheck",
    ]
    if "--disableTelemetry" in flags:
        args.append("--disableTelemetry")
    if "--extentMemoryLimit" in flags:
        args += ["--extentMemoryLimit", str(memory_limit_mib)]
    with ExitStack() as stack:
        if tmp_dir is None:
            directory = stack.enter_context(tempfile.TemporaryDirectory(prefix="azurite-"))
        else:
            os.makedirs(tmp_dir, exist_ok=True)
            directory = os.fspath(tmp_dir)
        log = Path(directory) / "azurite.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [*args, "--silent"] if "--silent" in flags else args,
                cwd=directory,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            server_url = _wait_listening(proc, log, start_timeout)
            proxy = stack.enter_context(counting_proxy(server_url)) if counted else None
            front = proxy.url if proxy is not None else server_url
            yield AzuriteEndpoint(
                blob_endpoint=f"{front}/{ACCOUNT_NAME}",
                server_url=server_url,
                log_path=log,
                proxy=proxy,
            )
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
