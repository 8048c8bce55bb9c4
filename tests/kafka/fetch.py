"""Resolve every pinned Kafka release into a classpath: `python -m tests.kafka.fetch`.

Maven downloads the artifacts named in kafka/pom.xml into its own cache (~/.m2) once; each
release's classpath goes to kafka/target/classpath-VERSION.txt. .ci/run runs this before the tests.
"""

from __future__ import annotations

import sys
import time

from tests.kafka.runtime import KAFKA_VERSIONS, missing_prerequisite, resolve


def main() -> int:
    missing = missing_prerequisite()
    if missing:
        print(f"Kafka not fetched: {missing}", file=sys.stderr)
        return 1
    for version in KAFKA_VERSIONS:
        started = time.monotonic()
        path = resolve(version)
        jars = len(path.read_text().strip().split(":"))
        print(f"Kafka {version}: {jars} jars, classpath in {path} ({time.monotonic() - started:.1f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
