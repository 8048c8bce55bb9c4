"""java.util.Properties reading and writing (storage reference §1.6, §0.4)."""

from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjbod.errors import KjbodError
from kjbod.storage.properties import (
    PropertiesError,
    format_properties,
    parse_properties,
    read_properties,
)

SOURCE = Path("server.properties")
DATE = datetime(2024, 10, 25, 3, 33, 1, tzinfo=UTC)


def test_the_full_properties_syntax_is_read() -> None:
    text = (
        "# a comment\n"
        "! another comment\n"
        "   \n"
        "plain=value\n"
        "colon:value\n"
        "space value\n"
        "  spaced   =   leading spaces go, trailing stay  \n"
        "continued = first, \\\n"
        "            second\n"
        "escaped\\ key\\:x = a\\=b\\tc\\\\d\n"
        "unicode = caf\\u00e9\n"
        "empty=\n"
        "keyonly\n"
        "dup=1\n"
        "dup=2\n"
    )
    assert parse_properties(text.encode("latin-1"), SOURCE) == {
        "plain": "value",
        "colon": "value",
        "space": "value",
        "spaced": "leading spaces go, trailing stay  ",
        "continued": "first, second",
        "escaped key:x": "a=b\tc\\d",
        "unicode": "café",
        "empty": "",
        "keyonly": "",
        "dup": "2",
    }


def test_files_are_decoded_as_iso_8859_1_as_kafka_does() -> None:
    # Properties.load(InputStream): one byte per character, whatever the bytes mean in UTF-8.
    assert parse_properties("cluster.id=é".encode(), SOURCE) == {"cluster.id": "Ã©"}


def test_a_malformed_unicode_escape_names_the_file() -> None:
    with pytest.raises(PropertiesError) as caught:
        parse_properties(b"a=\\u12x4\n", SOURCE)
    assert caught.value.message == "Malformed \\uxxxx encoding (\\u12x4) in server.properties"
    assert caught.value.exit_code == 1


def test_reading_failures_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(PropertiesError) as missing:
        read_properties(tmp_path / "nope.properties")
    assert missing.value.message == f"Cannot read {tmp_path / 'nope.properties'}: No such file or directory"
    assert missing.value.missing
    with pytest.raises(PropertiesError) as directory:
        read_properties(tmp_path)
    assert directory.value.message == f"Cannot read {tmp_path}: Is a directory"
    assert not directory.value.missing
    (tmp_path / "file").write_text("x")
    with pytest.raises(PropertiesError) as under_a_file:
        read_properties(tmp_path / "file" / "meta.properties")
    assert under_a_file.value.message.endswith(": Not a directory")
    assert not under_a_file.value.missing


def test_store_layout_and_escaping_match_java() -> None:
    # The reference's verified example: only a *leading* space of a value is escaped.
    written = format_properties([("cluster.id", "a:b=c#d!e f\\g"), ("a key", " lead\ttab\nnl")], date=DATE)
    assert written == (
        b"#\n"
        b"#Fri Oct 25 03:33:01 UTC 2024\n"
        b"cluster.id=a\\:b\\=c\\#d\\!e f\\\\g\n"
        b"a\\ key=\\ lead\\ttab\\nnl\n"
    )


def test_non_ascii_is_written_as_unicode_escapes_so_it_reads_back() -> None:
    written = format_properties([("k", "é😀")], date=DATE)
    assert written.splitlines()[-1] == b"k=\\u00e9\\ud83d\\ude00"
    assert parse_properties(written, SOURCE) == {"k": "é😀"}


@given(st.binary(max_size=300))
@settings(max_examples=300)
def test_reading_arbitrary_bytes_raises_only_kjbod_errors(data: bytes) -> None:
    try:
        result = parse_properties(data, SOURCE)
    except KjbodError:
        return
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in result.items())


@given(st.text(max_size=200))
@settings(max_examples=300)
def test_reading_arbitrary_text_raises_only_kjbod_errors(text: str) -> None:
    try:
        parse_properties(text, SOURCE)
    except KjbodError:
        pass


@given(st.dictionaries(st.text(max_size=30), st.text(max_size=60), max_size=8))
@settings(max_examples=300)
def test_write_then_read_round_trips_any_keys_and_values(props: dict[str, str]) -> None:
    written = format_properties(props.items(), date=DATE)
    assert parse_properties(written, SOURCE) == props


JAVA_ROUND_TRIP = """
import java.io.*;
import java.util.*;

public class RoundTrip {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        try (InputStream in = new FileInputStream(args[0])) { props.load(in); }
        for (String key : new TreeSet<>(props.stringPropertyNames())) {
            System.out.println(key.codePoints().mapToObj(Integer::toString).reduce("", (a, b) -> a + " " + b)
                + " =" + props.getProperty(key).codePoints().mapToObj(Integer::toString).reduce("", (a, b) -> a + " " + b));
        }
    }
}
"""


def _code_points(text: str) -> str:
    return "".join(f" {ord(c)}" for c in text)


@pytest.mark.skipif(shutil.which("java") is None, reason="needs a Java runtime")
def test_java_properties_load_reads_what_kjbod_writes(tmp_path: Path) -> None:
    """Cross-check with the real java.util.Properties, the reader Kafka uses."""
    props = {
        "cluster.id": "a:b=c#d!e f\\g",
        " lead": " space\tand\nnewline",
        "unicode": "café 😀",
        "#not a comment": "!value",
        "empty": "",
    }
    (tmp_path / "t.properties").write_bytes(format_properties(props.items(), date=DATE))
    (tmp_path / "RoundTrip.java").write_text(JAVA_ROUND_TRIP)
    result = subprocess.run(
        ["java", str(tmp_path / "RoundTrip.java"), str(tmp_path / "t.properties")],
        capture_output=True, text=True, check=True, timeout=120,
    )
    expected = sorted(props.items(), key=lambda item: item[0].encode("utf-16-be"))
    assert result.stdout.splitlines() == [f"{_code_points(k)} ={_code_points(v)}" for k, v in expected]
