"""A bucket that is not there: the shared suite (fsseam.testing.stores.MissingBucketSuite)."""

from __future__ import annotations

from fsseam.testing.stores import MissingBucketSuite


class TestMissingBucket(MissingBucketSuite):
    pass
