"""Frequent old_string and huge directories on s3://, against the moto server: the
refusal is bounded and writes nothing; a directory view keeps what it can show."""

from __future__ import annotations

from typing import Any

from fsseam import Workspace
from fsseam.testing.stores import BoundsSuite

MiB = 1 << 20


def methods(moto: Any, bucket: str) -> list[str]:
    out = [m for m, _ in moto.log.to_bucket(bucket)]
    moto.log.clear()
    return out


def test_a_directory_view_keeps_what_it_can_show(
    moto: Any, bucket: str, s3_direct: Any, s3_options: dict[str, Any]
) -> None:
    n = 2500
    for i in range(n):
        s3_direct.put_object(Bucket=bucket, Key=f"p/big/f{i:05d}.txt", Body=b"x")
    ctx = Workspace(f"s3://{bucket}/p", storage_options=dict(s3_options)).context("a")
    moto.log.clear()
    res = ctx.tools.execute("str_replace_editor", {"command": "view", "path": "/big"})
    assert res.ok, res.text
    head, *rows, notice = res.text.split("\n")
    assert head == ("Here's the files and directories up to 2 levels deep in /big, excluding "
                    "hidden items:")
    assert rows == [f"/big/f{i:05d}.txt" for i in range(len(rows))]
    assert notice == (f"<response clipped: {n - len(rows)} more entries not shown; view a "
                      "subdirectory to see them.>")
    listing = res.value
    assert len(listing.entries) <= 16_000 // len("/big/f00000.txt\n") + 1
    assert listing.more == n - len(listing.entries)
    assert methods(moto, bucket).count("GET") >= 3  # every page is counted


class TestBounds(BoundsSuite):
    pass
