"""The leak scan reads what base64 payloads carry (evalkit.safety.privacy.embedded_text).

A plain substring search over an artifact misses private text that was base64-encoded (a JSON
blob, an SVG, a PNG's metadata); the scan decodes such payloads and searches their text, and
reads only the metadata and printable bytes of images, whose pixels are not text.
"""

from __future__ import annotations

import base64
import io
import random

import pytest
from PIL import Image, PngImagePlugin

from evalkit.errors import LeakError
from evalkit.safety.privacy import PrivateText, assert_no_leaks, embedded_text, find_leaks

SECRET = "The harbour ferry leaves from pier seven at dawn on Sundays"
PRIVATE = [PrivateText("chunk:c-1", SECRET)]


def _png(text_chunks: dict[str, str], *, compressed: bool = False) -> bytes:
    info = PngImagePlugin.PngInfo()
    for key, value in text_chunks.items():
        info.add_itxt(key, value, zip=True) if compressed else info.add_text(key, value)
    buffer = io.BytesIO()
    pixels = random.Random(0).randbytes(64 * 48 * 3)  # noise: a payload of several KB
    Image.frombytes("RGB", (64, 48), pixels).save(buffer, format="PNG", pnginfo=info)
    return buffer.getvalue()


def _data_uri(data: bytes, mime: str) -> str:
    return f'<img src="data:{mime};base64,{base64.b64encode(data).decode()}" alt="figure">'


def test_text_hidden_in_a_base64_blob_is_found() -> None:
    blob = base64.b64encode(f'{{"note": "{SECRET}", "pad": "{"x" * 200}"}}'.encode()).decode()
    assert SECRET.casefold() not in blob.casefold()  # a substring search alone would miss it
    assert find_leaks(f"<p>payload: {blob}</p>", PRIVATE) == ["chunk:c-1"]


@pytest.mark.parametrize("compressed", [False, True], ids=["tEXt", "iTXt-zlib"])
def test_text_in_png_metadata_is_found(compressed: bool) -> None:
    page = _data_uri(_png({"Title": SECRET}, compressed=compressed), "image/png")
    with pytest.raises(LeakError) as caught:
        assert_no_leaks({"HTML": page}, PRIVATE)
    assert list(caught.value.object_ids) == ["chunk:c-1"]
    assert SECRET not in str(caught.value)


def test_svg_payload_is_searched_as_text() -> None:
    svg = f'<svg xmlns="http://www.w3.org/2000/svg"><text>{SECRET}</text></svg>'.encode()
    assert find_leaks(_data_uri(svg, "image/svg+xml"), PRIVATE) == ["chunk:c-1"]


def test_an_image_without_text_is_clean_and_adds_no_payload_to_search() -> None:
    page = _data_uri(_png({"Software": "matplotlib"}), "image/png")
    assert find_leaks(page, PRIVATE) == []
    searched = embedded_text(page)
    assert len(searched) < len(page) // 4  # the pixels' base64 is gone, the markup stays
    assert "matplotlib" in searched
    assert 'alt="figure"' in searched


def test_a_clean_scan_is_not_reused_for_other_text() -> None:
    page = "<p>only IDs here: q-en-001</p>" + "x" * 300
    assert_no_leaks({"HTML": page}, PRIVATE)  # clean, remembered
    assert_no_leaks({"HTML": page}, PRIVATE)  # the same text: still clean
    with pytest.raises(LeakError):
        assert_no_leaks({"HTML": page + SECRET}, PRIVATE)
    other = [PrivateText("query:q-2", "only IDs here: q-en-001")]
    assert find_leaks(page, other) == ["query:q-2"]  # another private set: scanned anew


def test_a_notebook_image_output_is_read_for_metadata() -> None:
    import json

    encoded = base64.b64encode(_png({"Description": SECRET})).decode()
    notebook = json.dumps({"cells": [{"outputs": [{"data": {"image/png": encoded + "\n"}}]}]})
    assert find_leaks(notebook, PRIVATE) == ["chunk:c-1"]
