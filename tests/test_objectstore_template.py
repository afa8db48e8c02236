"""The object-store template's glue, which every store uses and none writes again: facts to
capabilities, the option split, the sync bridge, the status ladder, the install hint table."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

import pytest
from fsspec.asyn import get_loop

from fsseam.backends import registry
from fsseam.backends.objectstore import (
    COMMON_OPTIONS,
    HTTP_RUNGS,
    ObjectStoreBackend,
    StatusLadder,
    StoreFacts,
    StoreFault,
    SyncBridge,
    rung,
    split_options,
    unusable_credentials,
)
from fsseam.errors import ErrorCode


class _Store(ObjectStoreBackend):
    facts = StoreFacts(version_kind="etag", note="a store", delete_if_match_atomic=False)
    store_options = ("block_size",)


def test_a_store_that_declares_facts_gets_its_capabilities_built() -> None:
    caps = _Store.capabilities
    assert caps.version_kind == "etag" and caps.note == "a store"
    assert caps.create_only_atomic and caps.if_match_atomic and caps.history
    assert caps.ranged_reads and caps.copy_create_only_atomic
    assert caps.delete_if_match_atomic is False  # the one fact this store denies


def test_options_split_between_the_filesystem_and_the_backend() -> None:
    options = {"block_size": 1, "list_page_size": 5, "endpoint_url": "http://x", "anon": True}
    fs_options, own = _Store.split_options(options)
    assert own == {"block_size": 1, "list_page_size": 5}
    assert fs_options == {"endpoint_url": "http://x", "anon": True}
    assert options["block_size"] == 1  # the caller's dict is left alone
    assert set(COMMON_OPTIONS) <= set(_Store.backend_options())
    assert split_options({}, ("a",)) == ({}, {})


def test_the_sync_bridge_runs_a_coroutine_on_the_filesystems_loop() -> None:
    class FakeFs:
        loop = get_loop()

    seen: list[Any] = []

    async def call(x: int, *, y: int) -> int:
        import asyncio

        seen.append(asyncio.get_running_loop())
        return x + y

    assert SyncBridge(FakeFs())(call, 1, y=2) == 3
    assert seen == [FakeFs.loop]


def test_the_ladder_takes_the_first_rung_that_matches() -> None:
    ladder = StatusLadder(
        rungs=(rung(StoreFault.DENIED, "Leased"),
               rung(StoreFault.PRECONDITION, "Cond", statuses=[412]),
               rung(StoreFault.NOT_FOUND, statuses=[404])),
        bucket_ops=frozenset({"list"}),
        client_errors=StoreFault.INVALID,
    )
    assert ladder.fault(412, "Leased", "put") is StoreFault.DENIED  # the code's rung comes first
    assert ladder.fault(412, "", "put") is StoreFault.PRECONDITION
    assert ladder.fault(None, "Cond", "put") is StoreFault.PRECONDITION
    assert ladder.fault(404, "", "get") is StoreFault.NOT_FOUND
    assert ladder.fault(404, "", "list") is StoreFault.BUCKET_MISSING
    assert ladder.fault(409, "Other", "put") is StoreFault.INVALID
    assert ladder.fault(429, "", "put") is None  # throttling is never the request's fault
    assert ladder.fault(408, "", "put") is None
    assert ladder.fault(503, "", "put") is None
    assert ladder.fault(None, "", "put") is None


def test_the_http_rungs_read_statuses_alone() -> None:
    ladder = StatusLadder()
    assert ladder.rungs == HTTP_RUNGS
    expected = {412: StoreFault.PRECONDITION, 404: StoreFault.NOT_FOUND,
                401: StoreFault.UNAUTHENTICATED,
                403: StoreFault.DENIED, 416: StoreFault.BAD_RANGE, 413: StoreFault.TOO_LARGE,
                400: StoreFault.INVALID, 409: None, 500: None}
    assert {s: ladder.fault(s, "", "get") for s in expected} == expected


def test_refused_credentials_say_what_to_configure() -> None:
    err = unusable_credentials("S3", ValueError("bad key\nmore lines"), "_s3_configure")
    assert err.code is ErrorCode.FS_PERMISSION_DENIED
    assert err.reason == "credentials_unusable"
    assert "(ValueError: bad key)" in err.message
    assert "storage_options=dict(key=..., secret=...)" in err.message


def test_the_install_hint_table_is_data_of_the_adapter_packages() -> None:
    table = json.loads(files("fsseam.backends").joinpath("adapters.json").read_text("utf-8"))
    packages = {k: v for k, v in table.items() if not k.startswith("_")}
    assert {p for p in packages} == set(registry.KNOWN_ADAPTERS.values())
    assert {s for schemes in packages.values() for s in schemes} == set(registry.KNOWN_ADAPTERS)
    assert registry.source_dir("fsseam-azure") == "backends/azure"


def test_a_scheme_missing_from_the_table_is_served_like_any_fsspec_protocol(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The table only words the install hint: a store that has no line there (and no
    installed adapter) is what any other fsspec protocol is, the generic backend."""
    from fsseam.backends import GenericBackend

    monkeypatch.setattr(registry, "_entry_points", lambda: {})
    monkeypatch.setattr(registry, "KNOWN_ADAPTERS", {})
    assert registry.backend_class("s3") is GenericBackend
