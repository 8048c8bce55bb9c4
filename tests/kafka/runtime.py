"""Kafka's released jars on this machine: the pinned versions, their classpaths, their tools.

`kafka/pom.xml` names the artifacts; Maven resolves them into its own cache (~/.m2) and writes one
classpath per version to `kafka/target/classpath-VERSION.txt` (`python -m tests.kafka.fetch`).
Nothing of Kafka is committed. A tool runs as an operator runs it: the main class its `bin/` script
names, the same arguments, stdout, stderr and exit status captured; only the JVM's flags differ
(small heap, quick start-up), which change no output.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAVEN_PROJECT = ROOT / "kafka"
TARGET = MAVEN_PROJECT / "target"
TOOLS_LOG4J = MAVEN_PROJECT / "log4j2-tools.properties"
SERVER_LOG4J = MAVEN_PROJECT / "log4j2-server.properties"

# The releases the differential tests run against, oldest first (profiles of kafka/pom.xml).
KAFKA_VERSIONS = ("4.3.1", "4.4.0")

# Each tool's main class, as its bin/ script names it (bin/kafka-*.sh -> kafka-run-class.sh CLASS).
# The scripts are not on Maven Central; the class is the one whose main() the release's sources
# give for the tool (4.3.1 -sources jars; 4.4.0 publishes no -sources jars, its jars were listed).
_TOOL_CLASSES = {
    "kafka-storage": "kafka.tools.StorageTool",
    "kafka-features": "org.apache.kafka.tools.FeatureCommand",
    "kafka-topics": "org.apache.kafka.tools.TopicCommand",
    "kafka-configs": "kafka.admin.ConfigCommand",
    "kafka-reassign-partitions": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
    "kafka-log-dirs": "org.apache.kafka.tools.LogDirsCommand",
    "kafka-metadata-quorum": "org.apache.kafka.tools.MetadataQuorumCommand",
    "kafka-cluster": "org.apache.kafka.tools.ClusterTool",
    "kafka-leader-election": "org.apache.kafka.tools.LeaderElectionCommand",
    "kafka-dump-log": "org.apache.kafka.tools.DumpLogSegments",
    "kafka-metadata-shell": "org.apache.kafka.shell.MetadataShell",
}
# Where a release moved a tool: 4.4.0's core jar has no kafka.admin.ConfigCommand; kafka-tools has
# org.apache.kafka.tools.ConfigCommand (the Scala command ported to Java).
_TOOL_CLASSES_BY_VERSION = {"4.4.0": {"kafka-configs": "org.apache.kafka.tools.ConfigCommand"}}

# Small heaps and a quick start (C1 only, serial GC: two cores shared with the suite).
TOOL_JVM_FLAGS = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Djava.awt.headless=true")


# A tool whose release is not on Maven Central runs from the nearest release that is: there is
# no kafka-shell 4.4.0 (its versions end at 4.3.1), and 4.3.1's shell cannot run on 4.4.0's
# libraries (kafka.tools.TerseFailure left 4.4.0's core), so 4.4.0's metadata shell is 4.3.1's.
_TOOL_RELEASE = {("4.4.0", "kafka-metadata-shell"): "4.3.1"}


def tool_release(version: str, tool: str) -> str:
    return _TOOL_RELEASE.get((version, tool), version)


def tool_class(version: str, tool: str) -> str:
    return _TOOL_CLASSES_BY_VERSION.get(version, {}).get(tool, _TOOL_CLASSES[tool])


def missing_prerequisite() -> str | None:
    """What this machine lacks to run Kafka (None when it has everything)."""
    for program in ("java", "mvn"):
        if shutil.which(program) is None:
            return f"no `{program}` on PATH"
    return None


def classpath_file(version: str) -> Path:
    return TARGET / f"classpath-{version}.txt"


def resolve(version: str, *, offline: bool = False) -> Path:
    """Resolve one pinned release's artifacts with Maven and write its classpath file."""
    if version not in KAFKA_VERSIONS:
        raise ValueError(f"Kafka {version} is not pinned in kafka/pom.xml (pinned: {', '.join(KAFKA_VERSIONS)})")
    out = classpath_file(version)
    command = ["mvn", "-B", "-q", "-f", str(MAVEN_PROJECT / "pom.xml"), "-P", f"kafka-{version}"]
    command += ["-o"] if offline else []
    command += ["dependency:build-classpath", f"-Dmdep.outputFile={out}"]
    result = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if result.returncode != 0 or not out.is_file():
        raise RuntimeError(f"Maven could not resolve Kafka {version}: {(result.stdout + result.stderr).strip()[-2000:]}")
    return out


_CLASSPATHS: dict[str, str] = {}


def classpath(version: str) -> str:
    """The release's classpath, resolved now if `python -m tests.kafka.fetch` has not run."""
    if version not in _CLASSPATHS:
        path = classpath_file(version)
        if not path.is_file() or path.stat().st_mtime < (MAVEN_PROJECT / "pom.xml").stat().st_mtime:
            resolve(version)
        _CLASSPATHS[version] = path.read_text().strip()
    return _CLASSPATHS[version]


# Class-data sharing (CDS): the classes a tool loads, most of them Kafka's clients shared by every
# admin tool, mapped from an archive instead of read from ~90 jars and verified. It halves the CPU
# of a tool's start (kafka-topics --describe: 0.95 s of user time without, 0.5 s with, on this
# machine), and CI starts some 300 tools. One archive per release, dumped by a kafka-topics
# --describe against the first cluster the session starts at that release (tools_archive_from);
# kept beside the classpath, named by what it is valid for (the classpath and the java binary).
# An archive the JVM cannot use is ignored (-Xshare:auto, its warning silenced by -Xlog:cds*=off):
# it costs speed, never a line of a tool's output.


def _java_identity() -> str:
    java = shutil.which("java")
    if java is None:
        return "no java"
    real = os.path.realpath(java)
    return f"{real} {os.stat(real).st_mtime_ns}"


_ARCHIVES: dict[str, Path] = {}


def tools_archive(version: str) -> Path:
    """Named by everything the JVM checks it against: the java binary, the classpath, each jar's
    size and modification time (a jar Maven fetched again gets a new archive)."""
    if version not in _ARCHIVES:
        jars = [f"{jar} {stat.st_size} {stat.st_mtime_ns}" for jar in classpath(version).split(os.pathsep) if (stat := _stat(jar)) is not None]
        key = hashlib.sha256("\n".join([_java_identity(), *jars]).encode()).hexdigest()[:16]
        _ARCHIVES[version] = TARGET / f"tools-{version}-{key}.jsa"
    return _ARCHIVES[version]


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _cds_flags(version: str) -> tuple[str, ...]:
    archive = tools_archive(version)
    return (f"-XX:SharedArchiveFile={archive}", "-Xlog:cds*=off") if archive.is_file() else ()


_ARCHIVE_LOCK = threading.Lock()


def tools_archive_from(version: str, bootstrap_servers: str) -> None:
    """Dump the release's tools archive, unless it exists, from a kafka-topics --describe of a
    running cluster (written aside, then renamed: a half-written archive is never used)."""
    with _ARCHIVE_LOCK:
        archive = tools_archive(version)
        if archive.is_file():
            return
        partial = archive.with_suffix(f".{os.getpid()}.partial")
        command = java_command(version, tool_class(version, "kafka-topics"), ["--bootstrap-server", bootstrap_servers, "--describe"],
                               jvm_flags=(*TOOL_JVM_FLAGS, f"-XX:ArchiveClassesAtExit={partial}", "-Xlog:cds*=off"))
        done = subprocess.run(command, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
        if done.returncode == 0 and partial.is_file():
            os.replace(partial, archive)
        else:
            partial.unlink(missing_ok=True)


def java_command(version: str, main_class: str, args: list[str] | tuple[str, ...], *, jvm_flags: tuple[str, ...] = TOOL_JVM_FLAGS,
                 log4j: Path = TOOLS_LOG4J) -> list[str]:
    """The JVM of a tool (jvm_flags TOOL_JVM_FLAGS: with the release's tools archive once it exists) or of a server."""
    cds = _cds_flags(version) if jvm_flags == TOOL_JVM_FLAGS else ()
    return ["java", *jvm_flags, *cds, f"-Dlog4j2.configurationFile={log4j}", "-cp", classpath(version), main_class, *map(str, args)]


@dataclass(frozen=True)
class ToolResult:
    tool: str
    args: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    seconds: float = field(compare=False)

    @property
    def lines(self) -> list[str]:
        return self.stdout.splitlines()

    def check(self) -> ToolResult:
        """This result, or an AssertionError that shows the command and both streams."""
        if self.exit_code != 0:
            raise AssertionError(f"{self.tool} {' '.join(self.args)} exited {self.exit_code}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}")
        return self


# Every tool run of the session, for the timing summary (tests/kafka/conftest.py prints it).
TOOL_RUNS: list[ToolResult] = []


def run_tool(version: str, tool: str, *args: str | os.PathLike[str], cwd: Path | None = None, timeout: float = 180) -> ToolResult:
    """Run Kafka's `tool` (e.g. "kafka-topics") of `version` with `args`; capture everything."""
    command = java_command(tool_release(version, tool), tool_class(version, tool), [str(arg) for arg in args])
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=timeout, stdin=subprocess.DEVNULL)
    result = ToolResult(tool, tuple(str(arg) for arg in args), done.returncode, done.stdout, done.stderr, time.monotonic() - started)
    TOOL_RUNS.append(result)
    return result


TOOL_BATCH = MAVEN_PROJECT / "ToolBatch.java"


def run_batch(version: str, invocations: list[tuple[str, list[str]]], work: Path, timeout: float = 600) -> list[ToolResult]:
    """Run several (tool, args) invocations of file-only tools in one JVM (kafka/ToolBatch.java):
    each the tool's own main class with its arguments, with its own stdout, stderr and status."""
    work.mkdir(parents=True, exist_ok=True)
    batch = work / "batch.tsv"
    for tool, args in invocations:
        if any("\t" in arg or "\n" in arg for arg in args):
            raise ValueError(f"{tool} {args}: a batch argument may not hold a tab or a newline")
    batch.write_text("".join("\t".join([tool_class(version, tool), *args]) + "\n" for tool, args in invocations))
    out = work / "out"
    started = time.monotonic()
    command = java_command(version, str(TOOL_BATCH), [str(batch), str(out)])
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    seconds = time.monotonic() - started
    results = []
    for index, (tool, args) in enumerate(invocations):
        if not (out / f"{index}.exit").is_file():
            raise RuntimeError(f"The tool batch ended at invocation {index} ({tool} {' '.join(args)}), status {done.returncode}:\n{done.stderr[-3000:]}")
        read = lambda suffix: (out / f"{index}{suffix}").read_text()  # noqa: B023 - used at once
        results.append(ToolResult(tool, tuple(args), int(read(".exit")), read(".stdout"), read(".stderr"), seconds / len(invocations)))
    TOOL_RUNS.extend(results)
    return results
