"""fsspec's own abstract test suites (``fsspec.tests.abstract``) against the guarded
filesystem, on memory, local disk and S3 (moto).

``fixtures`` holds the harness: per store, the fixtures fsspec's suites ask for (``fs``,
``fs_join``, ``fs_path``, ``supports_empty_directories``), as fsspec's own memory and local
conftests and s3fs's tests define them. ``test_*`` modules run the suites, one store each,
with the tests that cannot apply to a guarded filesystem deselected (``NOT_APPLICABLE``,
also tabled in docs/filesystem.md).
"""
