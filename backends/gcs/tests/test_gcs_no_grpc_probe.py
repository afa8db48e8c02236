"""gcsfs >= 2026.3 exports a filesystem class that probes each bucket over gRPC by default
(60 s per bucket against an emulator). The backend must never use it, whatever the
environment says."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from typing import Any

SCRIPT = textwrap.dedent(
    """
    import sys
    import gcsfs.core
    from fsseam import CreateOnly, open_backend

    backend = open_backend(sys.argv[1], {"endpoint_url": sys.argv[2], "token": "anon",
                                         "project": "test"})
    assert type(backend.fs) is gcsfs.core.GCSFileSystem, type(backend.fs)
    v = backend.write("a.txt", b"hi", CreateOnly())
    blob = backend.read("a.txt")
    assert (blob.data, blob.version) == (b"hi", v)
    print("ok")
    """
)


def test_default_gcsfs_environment_never_probes_grpc(
    gcs_bucket: str, gcs_options: dict[str, Any]
) -> None:
    env = dict(os.environ, GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT="true")
    start = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, f"gs://{gcs_bucket}/p", gcs_options["endpoint_url"]],
        env=env,
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
    assert time.monotonic() - start < 30  # a gRPC probe alone would take 60 s
