"""`kjbod format` and `kjbod meta`: kafka-storage's lines, streams and exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kjbod.common.java import hashmap_order, string_hash
from kjbod.common.kafka_uuid import DirectoryId, Uuid
from kjbod.storage.meta_properties import (
    MetaProperties,
    read_meta_properties,
    write_meta_properties,
)
from kjbod.storage.properties import read_properties

from ..conftest import Cli

CLUSTER_ID = "XcZZOzUqS4yHOjhMQB6JLQ"
ID_A = "ZNJ-ywU0nnQwRv5eRRU9ow"
ID_B = "3Ysf3XtkRKaFMEp3Xxj5DA"
UUID_TEXT = r"[A-Za-z0-9_-]{21}[AQgw]"


def write_config(tmp_path: Path, name: str = "server.properties", **settings: str) -> Path:
    values = {
        "process.roles": "broker",
        "node.id": "1",
        "controller.quorum.voters": "3000@controller:9093",
        "controller.listener.names": "CONTROLLER",
        "log.dirs": f"{tmp_path}/d2,{tmp_path}/d1",
    }
    values.update({key.replace("_", "."): value for key, value in settings.items()})
    path = tmp_path / name
    path.write_text("".join(f"{key}={value}\n" for key, value in values.items()))
    return path


def controller_config(tmp_path: Path) -> Path:
    return write_config(
        tmp_path,
        "controller.properties",
        process_roles="controller",
        node_id="3000",
        controller_quorum_voters="3000@localhost:9093",
        listeners="CONTROLLER://:9093",
        log_dirs=f"{tmp_path}/meta",
    )


def formatted(directory: Path, meta: MetaProperties) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    write_meta_properties(directory, meta.to_properties())


@pytest.fixture(autouse=True)
def _speaking_kafka_4_3(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests hold kafka-storage 4.3.1's texts and layout (KJBOD_KAFKA_VERSION=4.3); the
    4.4 ones (the default) are at the end."""
    monkeypatch.setenv("KJBOD_KAFKA_VERSION", "4.3")


def bootstrap_line(mv: int, share: int) -> str:
    """kafka-storage format's first line (Formatter.java:417 of 4.3.1), at a release's default
    levels: metadata.version first, then the other features by name (BootstrapMetadata.fromVersions)."""
    levels = [("metadata.version", mv), ("eligible.leader.replicas.version", 1), ("group.version", 1), ("share.version", share),
              ("streams.version", 1), ("transaction.version", 2)]
    records = ", ".join(f"ApiMessageAndVersion(FeatureLevelRecord(name='{name}', featureLevel={level}) at version 0)" for name, level in levels)
    return f"Bootstrap metadata: BootstrapMetadata(records=[{records}], metadataVersionLevel={mv}, source=format command)\n"


BOOTSTRAP_4_3 = bootstrap_line(30, 1)
BOOTSTRAP_4_4 = bootstrap_line(33, 2)


def in_kafka_order(*lines: str) -> str:
    """"Formatting <kind> <path> with ..." lines in Kafka's order: a Java HashMap's of the paths."""
    by_path = {line.split(" with ")[0].rsplit(" ", 1)[1]: line for line in lines}
    return "".join(by_path[path] + "\n" for path in hashmap_order(by_path, string_hash))


# format ----------------------------------------------------------------------------------------


def test_format_a_broker(cli: Cli, tmp_path: Path) -> None:
    config = write_config(tmp_path)
    result = cli("format", "--config", str(config), "--cluster-id", CLUSTER_ID, state=None)
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == BOOTSTRAP_4_3 + in_kafka_order(
        f"Formatting data directory {tmp_path}/d1 with metadata.version 4.3-IV0.",
        f"Formatting metadata directory {tmp_path}/d2 with metadata.version 4.3-IV0.",
    )
    ids = set()
    for name in ("d1", "d2"):
        raw, meta = read_meta_properties(tmp_path / name)
        assert (meta.version, meta.cluster_id, meta.node_id) == (1, CLUSTER_ID, 1)
        assert list(raw) == ["cluster.id", "directory.id", "node.id", "version"]
        lines = (tmp_path / name / "meta.properties").read_text().splitlines()
        assert lines[0] == "#" and re.fullmatch(r"#\w{3} \w{3} \d\d \d\d:\d\d:\d\d \S+ \d{4}", lines[1])
        ids.add(meta.directory_id)
        assert (tmp_path / name / "bootstrap.checkpoint").stat().st_size > 0
    assert len(ids) == 2 and not (tmp_path / "kjbod-state").exists()


def test_format_json_output(cli: Cli, tmp_path: Path) -> None:
    config = write_config(tmp_path)
    result = cli("-o", "json", "format", "-c", str(config), "-t", CLUSTER_ID, "-r", "3.9", "-f", "group.version=1", state=None)
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    directories = document.pop("directories")
    assert document == {
        "dryRun": False,
        "config": str(config),
        "clusterId": CLUSTER_ID,
        "nodeId": 1,
        "metadataVersion": "3.9-IV0",
        "featureLevels": {"eligible.leader.replicas.version": 0, "group.version": 1, "kraft.version": 0, "metadata.version": 21,
                          "share.version": 0, "streams.version": 0, "transaction.version": 0},
        "bootstrapRecords": [
            {"type": "FeatureLevelRecord", "name": "metadata.version", "featureLevel": 21},
            {"type": "FeatureLevelRecord", "name": "group.version", "featureLevel": 1},
        ],
        "initialControllers": [],
        "allFormatted": False,
        "clusterState": None,
    }
    for item, (name, kind) in zip(directories, (("d1", "data"), ("d2", "metadata")), strict=True):
        assert item == {
            "path": f"{tmp_path}/{name}",
            "status": "formatted",
            "type": kind,
            "directoryId": read_meta_properties(tmp_path / name)[1].directory_id,
            "error": None,
        }


def test_a_controller_initialises_the_cluster_state(cli: Cli, tmp_path: Path, state_dir: Path) -> None:
    config = controller_config(tmp_path)
    result = cli("format", "-c", str(config), "-t", CLUSTER_ID)
    assert result.exit_code == 0
    # stdout is exactly kafka-storage's; the cluster state is kjbod's own note, on stderr.
    assert result.stdout == BOOTSTRAP_4_3 + f"Formatting metadata directory {tmp_path}/meta with metadata.version 4.3-IV0.\n"
    assert result.stderr == f"Initialised the cluster state {state_dir} with metadata.version 4.3-IV0.\n"
    dumped = cli("metadata", "dump").stdout.splitlines()
    assert dumped[:8] == [
        '{"offset":0,"type":"FeatureLevelRecord","version":0,"data":{"name":"metadata.version","featureLevel":30}}',
        *(f'{{"offset":{offset},"type":"FeatureLevelRecord","version":0,"data":{{"name":"{name}","featureLevel":{level}}}}}'
          for offset, (name, level) in enumerate((("eligible.leader.replicas.version", 1), ("group.version", 1), ("share.version", 1),
                                                  ("streams.version", 1), ("transaction.version", 2)), start=1)),
        # With ELR finalized, the controller's min.insync.replicas at the cluster level (ActivationRecordsGenerator).
        '{"offset":6,"type":"ConfigRecord","version":0,"data":{"resourceType":4,"resourceName":"","name":"min.insync.replicas","value":"1"}}',
        # Which cluster this is and which controller keeps it: broker register and features use them.
        f'{{"offset":7,"type":"KjbodClusterRecord","version":0,"data":{{"clusterId":"{CLUSTER_ID}","controllerId":3000}}}}',
    ]
    # Then the static quorum of controller.quorum.voters (kjbod's own records: Kafka keeps it in config).
    assert [json.loads(line)["type"] for line in dumped[8:]] == ["KjbodControllerReplicaRecord", "KjbodQuorumRecord"]
    again = cli("format", "-c", str(config), "-t", CLUSTER_ID, "--ignore-formatted")
    assert again.exit_code == 0
    assert again.stdout == "All of the log directories are already formatted.\n"
    assert again.stderr == f"The cluster state {state_dir} already holds records; it was left as it is.\n"


def test_a_controller_creates_a_missing_state(cli: Cli, tmp_path: Path) -> None:
    state = tmp_path / "new-state"
    result = cli("format", "-c", str(controller_config(tmp_path)), "-t", CLUSTER_ID, state=state)
    assert result.exit_code == 0
    assert result.stderr == f"Initialised the cluster state {state} with metadata.version 4.3-IV0.\n"
    assert "metadata.version" in cli("metadata", "dump", state=state).stdout


def test_a_dry_run_writes_nothing(cli: Cli, tmp_path: Path, state_dir: Path) -> None:
    config = controller_config(tmp_path)
    result = cli("format", "-c", str(config), "-t", CLUSTER_ID, "--dry-run")
    assert result.exit_code == 0
    assert result.stdout == f"Would format metadata directory {tmp_path}/meta with metadata.version 4.3-IV0.\n"
    assert result.stderr == f"Would initialise the cluster state {state_dir} with metadata.version 4.3-IV0 if it holds no records yet.\n"
    assert not (tmp_path / "meta").exists()
    assert cli("metadata", "dump").stdout == ""


def test_an_already_formatted_directory(cli: Cli, tmp_path: Path) -> None:
    formatted(tmp_path / "d2", MetaProperties(1, CLUSTER_ID, 1, ID_A))
    before = (tmp_path / "d2" / "meta.properties").read_bytes()
    result = cli("format", "-c", str(write_config(tmp_path)), "-t", CLUSTER_ID, state=None)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        f"Log directory {tmp_path}/d2 is already formatted. "
        "Use --ignore-formatted to ignore this directory and format the others.\n"
    )
    ignored = cli("format", "-c", str(write_config(tmp_path)), "-t", CLUSTER_ID, "-g", state=None)
    assert ignored.stdout == BOOTSTRAP_4_3 + f"Formatting data directory {tmp_path}/d1 with metadata.version 4.3-IV0.\n"
    assert (tmp_path / "d2" / "meta.properties").read_bytes() == before


def test_an_unreadable_directory_is_left_alone_and_the_others_formatted_as_kafka_does(cli: Cli, tmp_path: Path) -> None:
    """Formatter.java:394-401: an "I/O error" line on stdout for each, exit 0; kjbod warns on stderr."""
    (tmp_path / "d1").write_text("a file")
    result = cli("format", "-c", str(write_config(tmp_path)), "-t", CLUSTER_ID, state=None)
    assert result.exit_code == 0
    assert result.stdout == (
        f"I/O error trying to read log directory {tmp_path}/d1. Ignoring...\n" + BOOTSTRAP_4_3
        + f"Formatting metadata directory {tmp_path}/d2 with metadata.version 4.3-IV0.\n"
    )
    assert result.stderr == (
        f"Warning: log directory {tmp_path}/d1 was not formatted: Cannot read {tmp_path}/d1/meta.properties: Not a directory; "
        "fix it or remove it from log.dirs, then run format again with --ignore-formatted\n"
    )
    assert (tmp_path / "d2" / "meta.properties").exists() and (tmp_path / "d1").read_text() == "a file"
    as_json = cli("-o", "json", "format", "-c", str(write_config(tmp_path)), "-t", CLUSTER_ID, "-g", state=None)
    assert as_json.exit_code == 0
    assert [(d["path"], d["status"]) for d in json.loads(as_json.stdout)["directories"]] == [
        (f"{tmp_path}/d1", "unreadable"), (f"{tmp_path}/d2", "alreadyFormatted"),
    ]


def test_no_directory_left_to_format_fails_after_kafkas_lines(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "d1").write_text("a file")
    only = write_config(tmp_path, "only.properties", log_dirs=f"{tmp_path}/d1")
    failed = cli("format", "-c", str(only), "-t", CLUSTER_ID, state=None)
    assert failed.exit_code == 1
    assert failed.stdout == f"I/O error trying to read log directory {tmp_path}/d1. Ignoring...\n"
    assert failed.stderr == (
        f"Warning: log directory {tmp_path}/d1 was not formatted: Cannot read {tmp_path}/d1/meta.properties: Not a directory; "
        "fix it or remove it from log.dirs, then run format again\n"
        "No available log directories to format.\n"
    )
    as_json = cli("-o", "json", "format", "-c", str(only), "-t", CLUSTER_ID, state=None)
    assert as_json.exit_code == 1
    assert json.loads(as_json.stdout) == {"error": {"message": "No available log directories to format.", "exitCode": 1}}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-r", "9.9"], "Unknown metadata.version '9.9'. Supported metadata.version are: 3.3-IV3, 3.4-IV0, 3.5-IV0, 3.5-IV1, "
         "3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, 3.7-IV3, 3.7-IV4, 3.8-IV0, 3.9-IV0, 4.0-IV0, 4.0-IV1, "
         "4.0-IV2, 4.0-IV3, 4.1-IV0, 4.1-IV1, 4.2-IV0, 4.2-IV1, 4.3-IV0"),
        (["-f", "metadata.version=31"], "metadata.version 4.4-IV0 is not yet stable."),
        (["-r", "4.4-IV0"], "Unknown metadata.version '4.4-IV0'. Supported metadata.version are: 3.3-IV3, 3.4-IV0, 3.5-IV0, "
         "3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, 3.7-IV3, 3.7-IV4, 3.8-IV0, 3.9-IV0, 4.0-IV0, "
         "4.0-IV1, 4.0-IV2, 4.0-IV3, 4.1-IV0, 4.1-IV1, 4.2-IV0, 4.2-IV1, 4.3-IV0"),
        (["-f", "group.version"], "Can't parse feature=level string group.version: equals sign not found."),
        (["-f", "foo=1"], "Unsupported feature: foo. Supported features are: eligible.leader.replicas.version, group.version, "
         "kraft.version, share.version, streams.version, transaction.version"),
        (["-I", "1@host", "--no-voters"], "No colon following hostname could be found."),
        (["-s", "--no-voters"], "You can only use --standalone on a controller."),
        (["-s"], "You cannot specify controller.quorum.voters and format the node with --initial-controllers or --standalone. "
         "If you want to use dynamic quorum, please remove controller.quorum.voters and specify controller.quorum.bootstrap.servers "
         "instead."),
    ],
)
def test_refusals_are_one_line_and_exit_1(cli: Cli, tmp_path: Path, args: list[str], message: str) -> None:
    """`--no-voters` (the test's own flag): a config without controller.quorum.voters."""
    settings = {"controller_quorum_voters": ""} if "--no-voters" in args else {}
    args = [arg for arg in args if arg != "--no-voters"]
    result = cli("format", "-c", str(write_config(tmp_path, **settings)), "-t", CLUSTER_ID, *args, state=None)
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", message + "\n")
    assert not (tmp_path / "d1").exists()


def test_a_missing_config_names_it(cli: Cli, tmp_path: Path) -> None:
    result = cli("format", "-c", str(tmp_path / "nope.properties"), "-t", CLUSTER_ID, state=None)
    assert (result.exit_code, result.stderr) == (1, f"Cannot read {tmp_path}/nope.properties: No such file or directory\n")


def test_structural_errors_exit_2(cli: Cli, tmp_path: Path) -> None:
    config = str(write_config(tmp_path))
    assert cli("format", "-c", config, state=None).exit_code == 2  # --cluster-id is required
    result = cli("format", "-c", config, "-t", CLUSTER_ID, "-s", "-N", state=None)
    assert result.exit_code == 2
    assert result.stderr == "argument --no-initial-controllers/-N: not allowed with argument --standalone/-s\n"


def test_standalone_writes_the_kip_853_bootstrap_snapshot(cli: Cli, tmp_path: Path, state_dir: Path) -> None:
    from kjbod.kafka_formats.kraft_snapshot import Voter, VoterEndpoint, read_kraft_snapshot

    config = write_config(
        tmp_path, "c.properties", process_roles="controller", node_id="3000", controller_quorum_voters="",
        listeners="CONTROLLER://:9093", log_dirs=f"{tmp_path}/meta",
    )
    result = cli("format", "-c", str(config), "-t", CLUSTER_ID, "--standalone")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[1] == (
        f"Formatting dynamic metadata voter directory {tmp_path}/meta with metadata.version 4.3-IV0."
    )
    assert "KIP-853" not in result.stderr
    directory_id = (tmp_path / "meta" / "meta.properties").read_text().split("directory.id=")[1].split()[0]
    snapshot = read_kraft_snapshot(tmp_path / "meta" / "__cluster_metadata-0" / "00000000000000000000-0000000000.checkpoint")
    assert (snapshot.kraft_version, snapshot.data_record_count) == (1, 0)
    assert snapshot.voters == (Voter(3000, directory_id, (VoterEndpoint("CONTROLLER", "localhost", 9093),)),)


def test_a_write_failure_shows_what_was_done(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kjbod.tools.storage import formatter

    real_write = formatter.write_meta_properties

    def fail_on_d2(directory: Path, props: dict, date: object = None) -> None:
        if directory.name == "d2":
            raise OSError(28, "No space left on device", str(directory / "meta.properties.tmp"))
        real_write(directory, props, date)

    monkeypatch.setattr(formatter, "write_meta_properties", fail_on_d2)
    config = str(write_config(tmp_path))
    result = cli("format", "-c", config, "-t", CLUSTER_ID, state=None)
    assert result.exit_code == 1
    assert result.stdout == BOOTSTRAP_4_3 + in_kafka_order(
        f"Formatting data directory {tmp_path}/d1 with metadata.version 4.3-IV0.",
        f"Formatting metadata directory {tmp_path}/d2 with metadata.version 4.3-IV0.",
    )
    assert result.stderr == (
        f"Error while writing meta.properties file {tmp_path}/d2: No space left on device: {tmp_path}/d2/meta.properties.tmp "
        f"(nothing was left in {tmp_path}/d2; {tmp_path}/d1 stays formatted)\n"
    )
    as_json = cli("-o", "json", "format", "-c", config, "-t", CLUSTER_ID, "-g", state=None)
    assert as_json.exit_code == 1
    document = json.loads(as_json.stdout)  # exactly one document: the partial result
    assert [(d["status"], d["error"]) for d in document["directories"]] == [
        ("alreadyFormatted", None),
        ("failed", f"No space left on device: {tmp_path}/d2/meta.properties.tmp"),
    ]


def test_format_as_kafka_storage_4_4(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default release: metadata.version 4.4-IV2 with share.version 2, and KAFKA-19648's layout:
    a broker's directories get meta.properties alone, a controller's metadata directory the
    bootstrap snapshot with the bootstrap records (no bootstrap.checkpoint anywhere)."""
    from kjbod.kafka_formats.kraft_snapshot import read_kraft_snapshot

    monkeypatch.delenv("KJBOD_KAFKA_VERSION")
    broker = cli("format", "-c", str(write_config(tmp_path)), "-t", CLUSTER_ID, state=None)
    assert (broker.exit_code, broker.stderr) == (0, "")
    assert broker.stdout == BOOTSTRAP_4_4 + in_kafka_order(
        f"Formatting data directory {tmp_path}/d1 with metadata.version 4.4-IV2.",
        f"Formatting metadata directory {tmp_path}/d2 with metadata.version 4.4-IV2.",
    )
    assert [sorted(p.name for p in (tmp_path / name).iterdir()) for name in ("d1", "d2")] == [["meta.properties"]] * 2
    controller = cli("format", "-c", str(controller_config(tmp_path)), "-t", CLUSTER_ID, state=tmp_path / "state")
    assert controller.stdout == BOOTSTRAP_4_4 + f"Formatting metadata directory {tmp_path}/meta with metadata.version 4.4-IV2.\n"
    assert sorted(p.name for p in (tmp_path / "meta").iterdir()) == ["__cluster_metadata-0", "meta.properties"]
    snapshot = read_kraft_snapshot(tmp_path / "meta" / "__cluster_metadata-0" / "00000000000000000000-0000000000.checkpoint")
    assert (snapshot.kraft_version, snapshot.voters, snapshot.data_record_count) == (None, None, 6)  # no KRaftVersion record at 0
    as_43 = cli("--kafka-version", "4.3", "format", "-c", str(write_config(tmp_path, log_dirs=f"{tmp_path}/e")), "-t", CLUSTER_ID, state=None)
    assert as_43.exit_code == 0 and (tmp_path / "e" / "bootstrap.checkpoint").exists()


def test_add_scram_bootstraps_a_credential_the_state_and_an_export_carry(cli: Cli, tmp_path: Path) -> None:
    """kafka-storage's -S: a UserScramCredentialRecord after the feature levels, in the Bootstrap
    metadata line (Java's signed bytes), the bootstrap records and the cluster state; an export
    writes it and an import of that export keeps it."""
    from kjbod.kafka_formats.kraft_snapshot import read_kraft_snapshot
    from kjbod.records.wire import decode_record

    config = str(controller_config(tmp_path))
    scram = 'SCRAM-SHA-512=[name=alice,iterations=8192,salt="N3E=",saltedpassword="YCE="]'
    result = cli("--kafka-version", "4.4", "format", "-c", config, "-t", CLUSTER_ID, "-S", scram, state=tmp_path / "state")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(BOOTSTRAP_4_4.split("], metadataVersionLevel")[0] + ", ApiMessageAndVersion(UserScramCredentialRecord("
                                    "name='alice', mechanism=2, salt=[55, 113], storedKey=[")
    assert result.stdout.split("\n")[0].endswith("], iterations=8192) at version 0)], metadataVersionLevel=33, source=format command)")
    snapshot = read_kraft_snapshot(tmp_path / "meta" / "__cluster_metadata-0" / "00000000000000000000-0000000000.checkpoint")
    (last,) = [decode_record(r.buffer, r.start, r.end) for r in snapshot.data_records()][-1:]
    assert (type(last).__name__, last.name, last.mechanism, last.salt, last.iterations) == ("UserScramCredentialRecord", "alice", 2, b"7q", 8192)
    dumped = [json.loads(line) for line in cli("metadata", "dump", state=tmp_path / "state").stdout.splitlines()]
    assert [d["data"]["salt"] for d in dumped if d["type"] == "UserScramCredentialRecord"] == ["N3E="]
    (tmp_path / "export").mkdir()
    exported = cli("metadata", "export", "--kafka-snapshot", str(tmp_path / "export"), state=tmp_path / "state")
    assert exported.exit_code == 0, exported.stderr
    assert "UserScramCredentialRecord 1" in exported.stdout
    (written,) = (tmp_path / "export").glob("*.checkpoint")
    again = cli("import", "cluster", "--metadata-snapshot", str(written), state=tmp_path / "again")
    assert again.exit_code == 0, again.stderr
    assert "UserScramCredentialRecord" not in again.stdout  # kept, not counted as left out
    dumped = [json.loads(line) for line in cli("metadata", "dump", state=tmp_path / "again").stdout.splitlines()]
    assert [(d["data"]["name"], d["data"]["salt"]) for d in dumped if d["type"] == "UserScramCredentialRecord"] == [("alice", "N3E=")]


def test_add_scram_needs_3_5_iv2_and_a_well_formed_argument(cli: Cli, tmp_path: Path) -> None:
    config = str(write_config(tmp_path))
    old = cli("format", "-c", config, "-t", CLUSTER_ID, "-r", "3.5-IV1", "-S", "SCRAM-SHA-256=[name=a,password=b]", state=None)
    assert (old.exit_code, old.stdout, old.stderr) == (1, "", "SCRAM is only supported in metadata.version 3.5-IV2 or later.\n")
    bad = cli("format", "-c", config, "-t", CLUSTER_ID, "-S", "SCRAM-SHA-256=[name=a]", state=None)
    assert (bad.exit_code, bad.stdout, bad.stderr) == (1, "", "You must supply one of 'password' or 'saltedpassword' to add-scram\n")
    # Kafka dies on Java's "Empty key" before writing anything (ScramFormatter.hi :76).
    empty = cli("format", "-c", config, "-t", CLUSTER_ID, "-S", "SCRAM-SHA-256=[name=a,password=]", state=None)
    assert (empty.exit_code, empty.stdout) == (1, "") and empty.stderr.startswith("Empty key: the SCRAM-SHA-256 credential of a has an empty password")
    assert not (tmp_path / "d1").exists()


# meta info -------------------------------------------------------------------------------------


def test_meta_info_healthy(cli: Cli, tmp_path: Path) -> None:
    formatted(tmp_path / "d1", MetaProperties(1, CLUSTER_ID, 1, ID_A))
    formatted(tmp_path / "d2", MetaProperties(1, CLUSTER_ID, 1, ID_B))
    result = cli("meta", "info", "-c", str(write_config(tmp_path)), state=None)
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        "Found log directories:\n"
        f"  {tmp_path}/d1\n"
        f"  {tmp_path}/d2\n"
        "\n"
        f"Found metadata: {{cluster.id={CLUSTER_ID}, directory.id={ID_A}, node.id=1, version=1}}\n"
        "\n"
    )


def test_meta_info_problems_exit_1_without_an_error_line(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "d1").mkdir()
    config = write_config(tmp_path)
    result = cli("meta", "info", "-c", str(config), state=None)
    assert (result.exit_code, result.stderr) == (1, "")
    as_json = cli("-o", "json", "meta", "info", "-c", str(config), state=None)
    assert (as_json.exit_code, as_json.stderr) == (1, "")
    assert json.loads(as_json.stdout)["problems"][0] == f"{tmp_path}/d1 is not formatted."  # the report, and no error document
    assert result.stdout == (
        "Found log directory:\n"
        f"  {tmp_path}/d1\n"
        "\n"
        "Found problems:\n"
        f"  {tmp_path}/d1 is not formatted.\n"
        f"  {tmp_path}/d2 does not exist\n"
        "\n"
    )
    document = json.loads(cli("-o", "json", "meta", "info", "-c", str(config), state=None).stdout)
    assert document["foundDirectories"] == [f"{tmp_path}/d1"]
    assert document["metadata"] is None
    assert document["problems"] == [f"{tmp_path}/d1 is not formatted.", f"{tmp_path}/d2 does not exist"]


# meta show / random-uuid -----------------------------------------------------------------------


def test_meta_show(cli: Cli, tmp_path: Path) -> None:
    formatted(tmp_path / "d1", MetaProperties(1, CLUSTER_ID, 1, ID_A))
    (tmp_path / "d2").mkdir()
    result = cli("meta", "show", str(tmp_path / "d1"), str(tmp_path / "d2"), state=None)
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        f"{tmp_path}/d1: MetaProperties(version=1, clusterId={CLUSTER_ID}, nodeId=1, directoryId={ID_A})\n"
        f"{tmp_path}/d2: not formatted (no meta.properties)\n"
    )
    (tmp_path / "d3").mkdir()
    (tmp_path / "d3" / "meta.properties").write_text("version=1\nnode.id=x\n")
    bad = cli("meta", "show", str(tmp_path / "d3"), str(tmp_path / "d1"), state=None)
    assert bad.exit_code == 1
    assert bad.stdout.splitlines()[0] == (
        f"{tmp_path}/d3: Error loading {tmp_path}/d3/meta.properties: Unable to read node.id as a base-10 number."
    )
    assert bad.stderr == "1 out of 2 operation(s) failed.\n"
    document = json.loads(cli("-o", "json", "meta", "show", str(tmp_path / "d1"), state=None).stdout)
    assert document == {
        "directories": [
            {"path": f"{tmp_path}/d1", "status": "formatted", "version": 1, "clusterId": CLUSTER_ID, "nodeId": 1, "directoryId": ID_A}
        ]
    }
    assert cli("meta", "show", state=None).exit_code == 2


def test_random_uuid(cli: Cli) -> None:
    results = [cli("meta", "random-uuid", state=None).stdout.strip() for _ in range(20)]
    assert len(set(results)) == 20
    for text in results:
        assert re.fullmatch(UUID_TEXT, text) and str(Uuid.from_string(text)) == text and not text.startswith("-")
    directory_id = cli("meta", "random-uuid", "--directory-id", state=None).stdout.strip()
    assert not DirectoryId.reserved(directory_id)
    document = json.loads(cli("-o", "json", "meta", "random-uuid", state=None).stdout)
    assert list(document) == ["uuid"] and re.fullmatch(UUID_TEXT, document["uuid"])


# meta ensure-ids -------------------------------------------------------------------------------


def test_ensure_ids(cli: Cli, tmp_path: Path) -> None:
    formatted(tmp_path / "d1", MetaProperties(1, CLUSTER_ID, 1, ID_A))
    formatted(tmp_path / "d2", MetaProperties(1, CLUSTER_ID, 1, None))
    config = str(write_config(tmp_path))
    dry = cli("meta", "ensure-ids", "-c", config, "--dry-run", state=None)
    assert dry.exit_code == 0
    assert dry.stdout.splitlines()[0] == f"{tmp_path}/d1: {ID_A}"
    assert re.fullmatch(rf"{re.escape(str(tmp_path))}/d2: {UUID_TEXT} \(new; not written: dry run\)", dry.stdout.splitlines()[1])
    assert "directory.id" not in read_properties(tmp_path / "d2" / "meta.properties")
    result = cli("meta", "ensure-ids", "-c", config, state=None)
    new_id = read_meta_properties(tmp_path / "d2")[1].directory_id
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == f"{tmp_path}/d1: {ID_A}\n{tmp_path}/d2: {new_id} (new)\n"
    document = json.loads(cli("-o", "json", "meta", "ensure-ids", "-c", config, state=None).stdout)
    assert document["directories"] == [
        {"path": f"{tmp_path}/d1", "status": "existing", "directoryId": ID_A, "written": False, "error": None},
        {"path": f"{tmp_path}/d2", "status": "existing", "directoryId": new_id, "written": False, "error": None},
    ]


def test_ensure_ids_refuses_duplicates(cli: Cli, tmp_path: Path) -> None:
    formatted(tmp_path / "d1", MetaProperties(1, CLUSTER_ID, 1, ID_A))
    formatted(tmp_path / "d2", MetaProperties(1, CLUSTER_ID, 1, ID_A))
    result = cli("meta", "ensure-ids", "-c", str(write_config(tmp_path)), state=None)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == f"Duplicate directory ID {ID_A} found. It was the ID of {tmp_path}/d1, but also of {tmp_path}/d2\n"


def test_every_command_documents_itself(cli: Cli) -> None:
    for args in (["format"], ["meta", "info"], ["meta", "show"], ["meta", "random-uuid"], ["meta", "ensure-ids"]):
        result = cli(*args, "--help", state=None)
        assert result.exit_code == 0 and "Example: kjbod " in result.stdout
    assert "\n  meta " in cli("--help", state=None).stdout
