"""A DBOS workflow killed mid-step: a process (tests/integrations/dbos_crash.py) runs a
workflow of fsseam tool calls and SIGKILLs itself after a change landed and before DBOS
saved the step's output; a new process launches DBOS, which recovers the workflow. The
workflow must finish with every call answered ok (no refusal of its own change) and each
change on disk or in the bucket exactly once.

Two kill points: ``call:TOOL``, inside the step right after the call of TOOL returned (the
change and fsseam's records landed, the answer only in the dead process); ``write:N``,
right after the store made the N-th change, before fsseam recorded anything (for N=4, the
move's copy landed and its source is still there). Two forms: plain DBOS
(``DurableTools``) and a Pydantic AI ``DBOSAgent`` (``DBOSFsseamToolset``). SQLite system
database in tmp_path; local disk and moto S3.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos", reason="dbos is not installed: pip install -e '.[dbos]'")
pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed: pip install -e "
                    "'.[pydantic-ai]'")

import fsseam
from fsseam import Workspace
from fsseam.backends.base import ANY_VERSION
from fsseam.paths import reserved

from . import dbos_crash as crash

SCRIPT = Path(crash.__file__)

CASES = [
    ("plain", "local", "call:str_replace_editor"),
    ("plain", "local", "write:4"),
    ("plain", "s3", "call:edit"),
    ("plain", "s3", "write:6"),
    ("agent", "local", "call:move"),
    ("agent", "s3", "write:2"),
]
"""(form, store, kill point): each a first process killed and a second that recovers (every
kill point of both forms passes on local disk: ``python tests/integrations/dbos_crash.py``
with each ``call:TOOL`` and ``write:1`` to ``write:6``; these keep the suite short)."""


def _store(kind: str, tmp_path: Path, request: pytest.FixtureRequest
           ) -> tuple[str, dict[str, Any] | None]:
    if kind == "local":
        root = tmp_path / "root"
        root.mkdir()
        return str(root), None
    moto = request.getfixturevalue("moto_s3")
    return f"s3://{moto.create_bucket()}/r", moto.storage_options()


def stored(url: str, options: dict[str, Any] | None) -> dict[str, bytes]:
    """Every file of the workspace (the reserved folders aside) and its bytes, read from
    the store itself."""
    backend = Workspace(url, storage_options=options).backend
    return {e.key: backend.read(e.key).data for e in backend.walk("")
            if e.kind == "file" and not reserved(e.key)}


def launch(job: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    src = str(Path(fsseam.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, str(SCRIPT), json.dumps(job)], capture_output=True,
                          text=True, env=env, timeout=120, check=False)


@pytest.mark.parametrize(("form", "kind", "kill"), CASES,
                         ids=[f"{f}-{k}-{p}" for f, k, p in CASES])
def test_a_workflow_killed_mid_step_finishes_with_each_change_once(
    form: str, kind: str, kill: str, tmp_path: Path, request: pytest.FixtureRequest,
) -> None:
    url, options = _store(kind, tmp_path, request)
    backend = Workspace(url, storage_options=options).backend
    for key, data in crash.SEED.items():
        backend.write(key, data, ANY_VERSION)
    job = {"url": url, "storage_options": options, "db": str(tmp_path / "dbos.sqlite"),
           "marker": str(tmp_path / "killed"), "form": form, "kill": kill}

    first = launch(job)
    assert first.returncode == -signal.SIGKILL, first.stderr[-3000:]
    assert Path(job["marker"]).exists()
    # The kill came after a change landed: the store is no longer as it was.
    assert stored(url, options) != crash.SEED

    second = launch(job)
    assert second.returncode == 0, second.stderr[-3000:]
    out = json.loads(second.stdout.strip().splitlines()[-1])
    assert out["status"] == "SUCCESS"
    assert out["recovery_attempts"] >= 2  # the second process ran it again: a recovery
    answers = out["result"]
    assert [a["tool"] for a in answers] == [name for name, _ in crash.PLAN]
    refused = [a for a in answers if not a["ok"]]
    assert refused == []
    assert stored(url, options) == crash.AFTER
