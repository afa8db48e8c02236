"""Images and PDFs through ``read``: the exact bytes as image content on every surface that
carries images, a PDF's text by page, both recorded as observations, within their caps;
any other binary file keeps a clear refusal."""

from __future__ import annotations

import base64
import json
import os
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import TypeAdapter

from fsseam import ErrorCode, Limits, Workspace
from fsseam.cli import main as cli_main
from fsseam.messages import Reason
from fsseam.outcomes import ImageOutcome, PdfOutcome
from fsseam.seam import reading
from fsseam.tools import ToolResult
from fsseam.tools.base import facts
from fsseam.versions import Overwrite


def _png(width: int = 1, height: int = 1) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


PNG = _png()
GIF = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00"
       b"\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"
WEBP = (b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11"
        b"\x11\x88\x88\xfe\x07\x00")
IMAGES = {"image/png": PNG, "image/gif": GIF, "image/jpeg": JPEG, "image/webp": WEBP}


def _pdf(pages: list[list[str]]) -> bytes:
    """A minimal PDF, one page per list of lines (each shown by a text operator), with the
    binary comment line real PDFs carry and a correct cross-reference table."""
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(pages)))
    objs.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    font = 3 + 2 * len(pages)
    for i, lines in enumerate(pages):
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents "
                    f"{4 + 2 * i} 0 R /Resources << /Font << /F1 {font} 0 R >> >> >>".encode())
        ops = "BT /F1 12 Tf 72 720 Td 14 TL " + " ".join(f"({x}) Tj T*" for x in lines) + " ET"
        objs.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(ops), ops.encode()))
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (n, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % at for at in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1,
                                                                                 xref)
    return bytes(out)


PDF = _pdf([["Hello page one", "second line"], ["Page two text"], ["Third (and last)"]])
PDF_TEXT = [
    "--- page 1 ---", "Hello page one", "second line",
    "--- page 2 ---", "Page two text",
    "--- page 3 ---", "Third (and last)",
]


def _ws(kind: str, tmp_path: Path, limits: Limits | None = None) -> Workspace:
    if kind == "memory":
        return Workspace("memory://media", {"global_store": False}, limits=limits)
    return Workspace(str(tmp_path), limits=limits)


def put(ws: Workspace, path: str, data: bytes) -> None:
    ws.backend.write(path.lstrip("/"), data, Overwrite())


def stored(ws: Workspace, path: str) -> bytes:
    return ws.backend.read(path.lstrip("/")).data


def read(ws: Workspace, path: str, owner: str = "a", **args: Any) -> ToolResult:
    return ws.context(owner).tools.execute("read", {"file_path": path, **args})


def code(result: ToolResult) -> ErrorCode:
    assert not result.ok and result.error is not None, result.text
    return result.error.code


# -- images --------------------------------------------------------------------------------
@pytest.mark.parametrize("media_type", list(IMAGES))
def test_each_image_type_comes_back_as_its_exact_bytes(media_type: str, tmp_path: Path) -> None:
    ws = _ws("memory", tmp_path)
    data = IMAGES[media_type]
    # The name is only a hint: the bytes decide the type.
    put(ws, "/pics/img.bin", data)
    res = read(ws, "/pics/img.bin")
    assert res.ok, res.text
    assert [(i.media_type, i.data) for i in res.images] == [(media_type, data)]
    assert res.text == f"Image /pics/img.bin ({media_type}, {len(data)} bytes): shown below."
    assert isinstance(res.value, ImageOutcome) and res.value.size == len(data)
    # The structured facts stay small: no bytes in them.
    value = facts(res)["value"]
    assert value["kind"] == "image" and value["size"] == len(data)
    assert "data" not in value and "_data" not in value


@pytest.mark.parametrize("chunk", [1, 7])
def test_kind_is_told_across_small_chunks(chunk: int, tmp_path: Path) -> None:
    ws = _ws("memory", tmp_path, Limits(read_chunk_bytes=chunk))
    put(ws, "/a.webp", WEBP)
    put(ws, "/g.txt", b"GIF89a is a format\nsecond\n")
    assert read(ws, "/a.webp").images[0].data == WEBP
    assert read(ws, "/g.txt").text == "     1\tGIF89a is a format\n     2\tsecond"
    assert read(ws, "/g.txt", offset=2).text == "     2\tsecond\n\n(End of file: lines 2-2 of 2.)"


def test_local_image_read_then_write_replaces_it(tmp_path: Path) -> None:
    ws = _ws("local", tmp_path)
    (tmp_path / "a.png").write_bytes(PNG)
    res = read(ws, "/a.png")
    assert res.images[0].data == PNG and res.images[0].media_type == "image/png"
    assert res.images[0].data_url() == "data:image/png;base64," + base64.b64encode(PNG).decode()
    # The read observed the image's version: the owner may replace it whole.
    done = ws.context("a").tools.execute("write", {"file_path": "/a.png", "content": "svg\n"})
    assert done.ok, done.text
    assert (tmp_path / "a.png").read_bytes() == b"svg\n"


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_an_outside_change_after_the_image_read_is_stale(kind: str, tmp_path: Path) -> None:
    ws = _ws(kind, tmp_path)
    put(ws, "/a.png", PNG)
    assert read(ws, "/a.png").ok
    other = _png(2, 2)
    put(ws, "/a.png", other)
    write = {"file_path": "/a.png", "content": "mine\n"}
    assert code(ws.context("a").tools.execute("write", write)) is ErrorCode.FS_STALE
    assert stored(ws, "/a.png") == other
    # An owner that never read it may not replace it; edits never apply to an image.
    assert code(ws.context("b").tools.execute("write", write)) is ErrorCode.FS_NOT_OBSERVED
    edit = {"file_path": "/a.png", "old_string": "PNG", "new_string": "x"}
    assert read(ws, "/a.png").ok
    assert code(ws.context("a").tools.execute("edit", edit)) is ErrorCode.FS_NOT_TEXT
    assert stored(ws, "/a.png") == other


def test_an_image_over_the_cap_is_refused_and_not_observed(tmp_path: Path) -> None:
    ws = _ws("memory", tmp_path, Limits(max_image_bytes=len(PNG) - 1))
    put(ws, "/a.png", PNG)
    res = read(ws, "/a.png")
    assert code(res) is ErrorCode.FS_TOO_LARGE and res.images == ()
    assert res.text == (
        f"Error [FS_TOO_LARGE]: /a.png is an image (image/png) of {len(PNG)} bytes or more, "
        f"over the {len(PNG) - 1} bytes a read shows; nothing was shown. Ask the user for a "
        "smaller image."
    )
    write = {"file_path": "/a.png", "content": "x\n"}
    assert code(ws.context("a").tools.execute("write", write)) is ErrorCode.FS_NOT_OBSERVED
    assert stored(ws, "/a.png") == PNG
    # At the cap exactly, it is shown.
    ws = _ws("memory", tmp_path, Limits(max_image_bytes=len(PNG)))
    put(ws, "/a.png", PNG)
    assert read(ws, "/a.png").images[0].data == PNG


def test_the_default_cap_keeps_base64_within_five_megabytes() -> None:
    cap = Limits().max_image_bytes
    assert len(base64.b64encode(b"\x00" * cap)) <= 5_000_000 < len(base64.b64encode(
        b"\x00" * (cap * 11 // 10)))


def test_text_that_only_looks_like_an_image_reads_as_text(tmp_path: Path) -> None:
    ws = _ws("memory", tmp_path)
    put(ws, "/a.png", b"not really a png\n")
    put(ws, "/g.txt", b"GIF89a is a format\n")
    put(ws, "/p.txt", b"%PDF-1.4 is a version of the format\n")
    assert read(ws, "/a.png").text == "     1\tnot really a png"
    assert read(ws, "/g.txt").text == "     1\tGIF89a is a format"
    assert read(ws, "/p.txt").text == "     1\t%PDF-1.4 is a version of the format"
    assert all(read(ws, p).images == () for p in ("/a.png", "/g.txt", "/p.txt"))


def test_other_binary_files_are_refused_clearly(tmp_path: Path) -> None:
    ws = _ws("memory", tmp_path)
    data = b"\x7fELF\x02\x01\x01\x00binary"
    put(ws, "/tool", data)
    res = read(ws, "/tool")
    assert code(res) is ErrorCode.FS_NOT_TEXT and res.images == ()
    assert res.text == (
        "Error [FS_NOT_TEXT]: /tool is not a UTF-8 text file (it contains NUL bytes, so it "
        "looks binary), nor an image (PNG, JPEG, GIF, WebP) or a PDF; read cannot show it, "
        "and it was left unchanged. Ask the user if its content matters."
    )
    # Never rewritten: the read observed nothing, and a write is refused.
    write = {"file_path": "/tool", "content": "x\n"}
    assert code(ws.context("a").tools.execute("write", write)) is ErrorCode.FS_NOT_OBSERVED
    assert stored(ws, "/tool") == data
    # ctx.fs.read (text only) keeps its own words for an image.
    put(ws, "/a.png", PNG)
    with pytest.raises(Exception) as info:
        ws.context("a").fs.read("/a.png")
    assert getattr(info.value, "reason", None) == Reason.not_text


def test_s3_image_read_is_one_get_and_a_write_after_it_lands(moto_s3: Any) -> None:
    bucket = moto_s3.create_bucket()
    ws = Workspace(f"s3://{bucket}/p", storage_options=moto_s3.storage_options())
    client = moto_s3.client()
    client.put_object(Bucket=bucket, Key="p/a.png", Body=PNG)
    moto_s3.log.clear()
    res = read(ws, "/a.png")
    assert [(i.media_type, i.data) for i in res.images] == [("image/png", PNG)]
    # One request: the image is the read's stream, not a second download.
    assert moto_s3.log.to_bucket(bucket) == [("GET", f"/{bucket}/p/a.png")]
    done = ws.context("a").tools.execute("write", {"file_path": "/a.png", "content": "t\n"})
    assert done.ok, done.text
    assert client.get_object(Bucket=bucket, Key="p/a.png")["Body"].read() == b"t\n"


# -- surfaces ------------------------------------------------------------------------------
def _use(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_01", "name": name, "input": args}


def test_anthropic_tool_result_carries_an_image_block(tmp_path: Path) -> None:
    from anthropic.types import ToolResultBlockParam

    ws = _ws("memory", tmp_path)
    put(ws, "/a.png", PNG)
    tools = ws.context("a").tools
    tools.native_tools("anthropic")
    b64 = base64.b64encode(PNG).decode()
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": b64}}
    for block in (tools.handle(_use("read", {"file_path": "/a.png"})),
                  tools.handle(_use("str_replace_based_edit_tool",
                                    {"command": "view", "path": "/a.png"}))):
        TypeAdapter(ToolResultBlockParam).validate_python(block)
        assert block["content"] == [
            {"type": "text", "text": "Image /a.png (image/png, 69 bytes): shown below."}, image]
        assert block["is_error"] is False
    # A text result keeps its plain string content.
    put(ws, "/t.txt", b"x\n")
    assert tools.handle(_use("read", {"file_path": "/t.txt"}))["content"] == "     1\tx"


def test_openai_function_call_output_carries_an_input_image(tmp_path: Path) -> None:
    from openai.types.responses.response_input_item_param import FunctionCallOutput

    ws = _ws("memory", tmp_path)
    put(ws, "/a.gif", GIF)
    call = {"type": "function_call", "call_id": "call_1", "name": "read",
            "arguments": json.dumps({"file_path": "/a.gif"})}
    out = ws.context("a").tools.handle(call)
    TypeAdapter(FunctionCallOutput).validate_python(out)
    assert out == {"type": "function_call_output", "call_id": "call_1", "output": [
        {"type": "input_text", "text": f"Image /a.gif (image/gif, {len(GIF)} bytes): shown below."},
        {"type": "input_image",
         "image_url": "data:image/gif;base64," + base64.b64encode(GIF).decode()},
    ]}


def test_mcp_result_has_image_content_after_the_text(tmp_path: Path) -> None:
    types = pytest.importorskip("mcp.types")
    from fsseam.mcp import ToolServer

    ws = _ws("memory", tmp_path)
    put(ws, "/a.webp", WEBP)
    wire = ToolServer.result_dict(read(ws, "/a.webp"))
    result = types.CallToolResult.model_validate(wire)
    assert [c.type for c in result.content] == ["text", "image"]
    assert result.content[1].mime_type == "image/webp"
    assert base64.b64decode(result.content[1].data) == WEBP
    assert wire["structuredContent"]["value"]["media_type"] == "image/webp"


def test_mcp_stdio_server_sends_the_image(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import ClientSession, StdioServerParameters, stdio_client

    (tmp_path / "a.png").write_bytes(PNG)
    # This environment (the SDK passes only a few variables on): the fsseam under test.
    params = StdioServerParameters(command=sys.executable, env=dict(os.environ),
                                   args=["-m", "fsseam.cli", "mcp", str(tmp_path)])

    async def flow() -> Any:
        with anyio.fail_after(60):
            async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
                await session.initialize()
                return await session.call_tool("read", {"file_path": "/a.png"})

    result = anyio.run(flow)
    assert not result.is_error
    assert [c.type for c in result.content] == ["text", "image"]
    assert base64.b64decode(result.content[1].data) == PNG


def test_cli_call_prints_the_line_not_the_bytes(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.png").write_bytes(PNG)
    assert cli_main(["call", str(tmp_path), "read", '{"file_path": "/a.png"}']) == 0
    assert capsys.readouterr().out == "Image /a.png (image/png, 69 bytes): shown below.\n"


# -- PDFs ----------------------------------------------------------------------------------
def test_pdf_reads_as_its_text_with_page_numbers(tmp_path: Path) -> None:
    pytest.importorskip("pypdf")
    ws = _ws("memory", tmp_path)
    put(ws, "/doc.pdf", PDF)
    res = read(ws, "/doc.pdf")
    assert res.ok and res.images == ()
    assert isinstance(res.value, PdfOutcome)
    assert res.value.lines == PDF_TEXT and res.value.pages == 3 and not res.value.partial
    assert res.text == "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(PDF_TEXT, 1))
    # Paginated as any read.
    window = read(ws, "/doc.pdf", offset=4, limit=2)
    assert window.text == ("     4\t--- page 2 ---\n     5\tPage two text\n\n"
                           "(Showing lines 4-5 of 7. Use offset=6 to continue.)")
    assert code(read(ws, "/doc.pdf", offset=9)) is ErrorCode.FS_INVALID_ARGUMENT


def test_pdf_read_is_an_observation_and_edits_stay_refused(tmp_path: Path) -> None:
    pytest.importorskip("pypdf")
    ws = _ws("local", tmp_path)
    (tmp_path / "doc.pdf").write_bytes(PDF)
    ctx = ws.context("a")
    edit = {"file_path": "/doc.pdf", "old_string": "Hello", "new_string": "Bye"}
    write = {"file_path": "/doc.pdf", "content": "text now\n"}
    assert code(ctx.tools.execute("write", write)) is ErrorCode.FS_NOT_OBSERVED
    assert read(ws, "/doc.pdf").ok
    assert code(ctx.tools.execute("edit", edit)) is ErrorCode.FS_NOT_TEXT
    assert (tmp_path / "doc.pdf").read_bytes() == PDF
    assert ctx.tools.execute("write", write).ok
    assert (tmp_path / "doc.pdf").read_bytes() == b"text now\n"


def test_pdf_without_pypdf_says_how_to_install_it(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdf", None)  # import pypdf now fails
    monkeypatch.setattr(reading, "_pdf_cache", type(reading._pdf_cache)())
    ws = _ws("memory", tmp_path)
    put(ws, "/doc.pdf", PDF)
    res = read(ws, "/doc.pdf")
    assert code(res) is ErrorCode.FS_UNSUPPORTED
    assert res.text == (
        "Error [FS_UNSUPPORTED]: /doc.pdf is a PDF; reading its text needs the pypdf package, "
        "which is not installed (pip install 'fsseam[pdf]'). Ask the user to install it."
    )
    write = {"file_path": "/doc.pdf", "content": "x\n"}
    assert code(ws.context("a").tools.execute("write", write)) is ErrorCode.FS_NOT_OBSERVED


def test_pdf_without_text_too_large_or_broken_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("pypdf")
    ws = _ws("memory", tmp_path)
    put(ws, "/scan.pdf", _pdf([[], []]))
    res = read(ws, "/scan.pdf")
    assert code(res) is ErrorCode.FS_NOT_TEXT
    assert "no text to extract (pages: 2)" in res.text
    put(ws, "/bad.pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type")
    bad = read(ws, "/bad.pdf")
    assert code(bad) is ErrorCode.FS_NOT_TEXT and "cannot be read as one" in bad.text
    small = _ws("memory", tmp_path, Limits(max_edit_bytes=len(PDF) - 1))
    put(small, "/doc.pdf", PDF)
    big = read(small, "/doc.pdf")
    assert code(big) is ErrorCode.FS_TOO_LARGE
    assert big.error is not None and big.error.message.startswith(
        f"/doc.pdf is a PDF of {len(PDF)} bytes or more, over the {len(PDF) - 1} bytes")
