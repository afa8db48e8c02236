"""Building the s3fs filesystem from fsseam's storage_options."""

from __future__ import annotations

from typing import Any

from ._moto import attach_to_filesystem

__all__ = ["make_filesystem"]


def make_filesystem(fs_options: dict[str, Any]) -> Any:
    """An ``s3fs.S3FileSystem`` of its own, with no listings cache.

    ``endpoint_url`` and ``region_name`` at the top level are conveniences (a workspace's
    storage_options are ``{"endpoint_url", "key", "secret"}``); s3fs wants them in
    ``client_kwargs``. A custom
    endpoint (MinIO, moto) gets region us-east-1 unless one is given, because botocore
    refuses to sign without a region and those servers accept any.
    """
    import s3fs  # imported here so that the registry can list the entry point cheaply

    options = dict(fs_options)
    client_kwargs = dict(options.pop("client_kwargs", None) or {})
    endpoint = options.pop("endpoint_url", None)
    if endpoint is not None:
        client_kwargs["endpoint_url"] = endpoint
    region = options.pop("region_name", None) or options.pop("region", None)
    if region is not None:
        client_kwargs["region_name"] = region
    if client_kwargs.get("endpoint_url") and not client_kwargs.get("region_name"):
        client_kwargs["region_name"] = "us-east-1"
    if client_kwargs:
        options["client_kwargs"] = client_kwargs
    # An instance of its own: the instance cache would share one client (and its settings)
    # between workspaces; the listings cache would serve stale ETags and sizes.
    options["skip_instance_cache"] = True
    options["use_listings_cache"] = False
    fs = s3fs.S3FileSystem(**options)
    # moto's in-process mock_aws answers this client too (a no-op without an active mock).
    attach_to_filesystem(fs)
    return fs
