"""Java and Maven, which every other test here needs (the conftest skips them all in one line
without, and fails them with CI=true)."""

from __future__ import annotations

import shutil

from tests.kafka.runtime import KAFKA_VERSIONS, classpath


def test_java_and_maven_run_the_pinned_releases() -> None:
    assert shutil.which("java") and shutil.which("mvn")
    for version in KAFKA_VERSIONS:
        jars = classpath(version).split(":")
        assert any(f"kafka_2.13-{version}.jar" in jar for jar in jars), jars
