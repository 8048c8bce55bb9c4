"""The bad-input campaign: every file kjbod reads, mutated and random, and every command with
random argument lists. The only outcomes allowed are success, or exit 1 or 2 with a message;
never a traceback, never a changed cluster state after a failed command (tests/bad_inputs/).

Generation is derandomized (the same inputs on every run, so CI is reproducible); each test
checks that its file type (or command) got its planned count of inputs, and the counts are
written to bad-inputs-campaign.json in pytest's temporary directory.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from kjbod.errors import KjbodError
from kjbod.storage.config import load_node_config
from tests.cli.support import ASSIGNMENT, BROKERS, LOG_DIRS

from .bad_inputs.harness import CLUSTER_ID, COMMAND, GENERATED, OUTCOMES, PROBLEMS, World, check, fingerprint, run_cli
from .bad_inputs.mutations import json_files, properties_files, text_with_json_files, toml_files

# Inputs per file type (and for random argument lists): the campaign's size (about a minute on 2 cores).
PLANNED = {
    "server.properties": 250,
    "meta.properties": 200,
    "reassignment JSON": 300,
    "topics-to-move JSON": 150,
    "import brokers": 150,
    "import assignment": 150,
    "import log-dirs": 150,
    "kafka-log-dirs output": 200,
    "policy TOML": 200,
    "election JSON": 150,
    "assign-dirs JSON": 150,
    "random arguments": 500,  # shared out over the commands: 10 each
}

CAMPAIGN = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    # No shrinking budget is spent unless something fails; then Hypothesis shows the smallest input.
    phases=[Phase.explicit, Phase.generate, Phase.shrink],
)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return World(tmp_path_factory.mktemp("bad-inputs"))


@pytest.fixture(scope="module", autouse=True)
def report(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Write the tally (inputs per file type and command, outcomes) when the module ends, and
    print it (pytest -s). It only reports: each test checks its own inputs as it runs them (every
    rule, and the planned count of its file type or command), so no test needs another to have
    run first, and any one of them can run alone."""
    yield
    per_type = {kind: sum(n for (k, _), n in GENERATED.items() if k == kind) for kind in PLANNED}
    table = {
        "generatedPerFileType": per_type,
        "generated": {f"{kind} | {command}": count for (kind, command), count in sorted(GENERATED.items())},
        "outcomes": {f"{kind} | {outcome}": count for (kind, outcome), count in sorted(OUTCOMES.items())},
        "brokenRules": dict(PROBLEMS),
    }
    path = tmp_path_factory.getbasetemp() / "bad-inputs-campaign.json"
    path.write_text(json.dumps(table, indent=2) + "\n")
    lines = [f"{kind:<24} {count:>5} inputs" for kind, count in per_type.items() if count]
    lines.append(f"{'total':<24} {sum(GENERATED.values()):>5} inputs; rules broken: {dict(PROBLEMS) or 'none'}")
    print("\nBad-input campaign:\n" + "\n".join(lines))


Command = Callable[[World, Path], tuple[str, list[str]]]


def run_one(world: World, kind: str, content: bytes, target: Path, command: Command, json_output: bool, *, moving: bool = False,
            state: Path | None = None) -> None:
    """Write one generated input, run one command on it, check the rules, count it."""
    world.reset(moving=moving)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    label, args = command(world, target)
    watched = state or world.state
    before = fingerprint(watched)
    run = run_cli(["--state", str(watched), *(["-o", "json"] if json_output else []), *args], world.root)
    outcome = check(run, label, before, fingerprint(watched), json_output=json_output)
    GENERATED[(kind, label)] += 1
    OUTCOMES[(kind, outcome)] += 1


def assert_planned(kind: str) -> None:
    count = sum(n for (k, _), n in GENERATED.items() if k == kind)
    assert count >= PLANNED[kind], f"{kind}: {count} inputs generated, {PLANNED[kind]} planned"


Examples = Callable[[World], list[tuple[bytes, int]]]


def campaign(kind: str, files: st.SearchStrategy[bytes], commands: list[Command], *, target: Callable[[World], Path] | None = None,
             moving: Callable[[str], bool] = lambda label: False, state: Callable[[World], Path] | None = None,
             examples: Examples = lambda world: []) -> Callable[[World], None]:
    """A test body: PLANNED[kind] mutated files, each run by one of `commands`, after the
    `examples` (a file and the index of the command that runs it), which always run."""

    def body(world: World) -> None:
        @settings(CAMPAIGN, max_examples=PLANNED[kind])
        @given(content=files, command=st.sampled_from(commands), json_output=st.booleans())
        def one(content: bytes, command: Command, json_output: bool) -> None:
            label = command(world, world.root / "probe")[0]
            run_one(world, kind, content, (target or (lambda w: w.root / "input"))(world), command, json_output,
                    moving=moving(label), state=state(world) if state else None)

        for content, index in examples(world):
            one = example(content=content, command=commands[index], json_output=False)(one)
        one()
        assert_planned(kind)

    return body


def _cmd(label: str, *args: str, file_option: str | None = None) -> Command:
    """A command that takes the generated file as `file_option FILE` (or as the last argument)."""

    def build(world: World, path: Path) -> tuple[str, list[str]]:
        return label, [*args, *([file_option] if file_option else []), str(path)]

    return build


def _within(world: World, path: Path) -> bool:
    try:
        path.resolve().relative_to(world.root.resolve())
    except ValueError:
        return False
    return True


def _config_command(label: str, *args: str, writes: bool) -> Command:
    """A command reading a generated server.properties. One that writes into the log directories
    (format, meta ensure-ids) is only run when every directory of the file is inside the world;
    otherwise the file is checked with `meta info`, which only reads."""

    def build(world: World, path: Path) -> tuple[str, list[str]]:
        if writes and path.exists():
            try:
                directories = load_node_config(path).directories
            except (KjbodError, OSError, ValueError):
                directories = ()
            if not all(_within(world, world.root / d) for d in directories):
                return "meta info", ["meta", "info", "-c", str(path)]
        return label, [*args, str(path)]

    return build


# The file types ------------------------------------------------------------------------------


def test_the_valid_examples_succeed(world: World) -> None:
    """The campaign starts from files kjbod accepts: unmutated, each command succeeds."""
    world.reset()
    w = world.root
    for args in (
        ["meta", "info", "-c", f"{w}/broker1.properties"],
        ["format", "-c", f"{w}/broker4.properties", "-t", CLUSTER_ID],
        ["reassign", "check", "--reassignment-json-file", f"{w}/reassignment.json", "--policy", f"{w}/policy.toml", "--throttle", "50000000"],
        ["reassign", "generate", "--topics-to-move-json-file", f"{w}/topics.json", "--broker-list", "1,2,3"],
        ["log-dirs", "import", f"{w}/log-dirs.txt"],
        ["elect", "--election-type", "PREFERRED", "--path-to-json-file", f"{w}/election.json"],
        ["assign-dirs", "--broker", "1", "--file", f"{w}/assign-dirs.json"],
        ["reassign", "execute", "--reassignment-json-file", f"{w}/reassignment.json"],
    ):
        run = world.kjbod(*args)
        assert (run.exit_code, run.error) == (0, None), (args, run.stdout, run.stderr)
    world.reset(moving=True)
    for args in (["reassign", "verify", "--reassignment-json-file", f"{w}/reassignment.json"],
                 ["reassign", "cancel", "--reassignment-json-file", f"{w}/reassignment.json"]):
        run = world.kjbod(*args)
        assert (run.exit_code, run.error) == (0, None), (args, run.stdout, run.stderr)


def test_the_rules_catch_a_traceback_and_a_changed_state() -> None:
    """The checks can fail, and count what they catch: an escaped exception, a failed command
    that wrote, a failure without a message, a JSON mix-up."""
    from .bad_inputs.harness import Run

    saved = PROBLEMS.copy()
    try:
        PROBLEMS.clear()
        with pytest.raises(AssertionError, match="an exception escaped"):
            check(Run(["x"], None, "", "", "Traceback ..."), "x", None, None, json_output=False)
        with pytest.raises(AssertionError, match="internal error"):
            check(Run(["x"], 1, "", "internal error: KeyError: 'a' (run with --debug ...)\n"), "x", None, None, json_output=False)
        with pytest.raises(AssertionError, match="changed the cluster state"):
            check(Run(["x"], 1, "", "refused\n"), "topic create", {"a": (1, "x")}, {"a": (2, "y")}, json_output=False)
        with pytest.raises(AssertionError, match="without a message"):
            check(Run(["x"], 1, "", ""), "topic create", None, None, json_output=False)
        with pytest.raises(AssertionError, match="not one JSON document"):
            check(Run(["x"], 0, "{}\n{}\n", ""), "clock show", None, None, json_output=True)
        assert PROBLEMS == {"traceback": 2, "state changed by a failed command": 1, "no message": 1, "not one JSON document": 1}
        PROBLEMS.clear()
        assert check(Run(["x"], 1, "Successfully completed leader election (PREFERRED) for partitions a-0\n", "1 replica(s) could not be elected\n"),
                     "elect", {"a": (1, "x")}, {"a": (2, "y")}, json_output=False) == "exit 1, per-item successes kept"
        elected = json.dumps({"results": [{"topic": "a", "partition": 0, "error": "NONE"}, {"topic": "", "partition": 0, "error": "UNKNOWN_TOPIC_OR_PARTITION"}]})
        assert check(Run(["x"], 1, elected, "1 replica(s) could not be elected\n"), "elect", {"a": (1, "x")}, {"a": (2, "y")},
                     json_output=True) == "exit 1, per-item successes kept"
        with pytest.raises(AssertionError, match="changed the cluster state"):
            check(Run(["x"], 1, elected.replace('"NONE"', '"NOT_LEADER"'), "2 replica(s) could not be elected\n"), "elect",
                  {"a": (1, "x")}, {"a": (2, "y")}, json_output=True)
    finally:
        PROBLEMS.clear()
        PROBLEMS.update(saved)


def _with_setting(text: str, key: str, value: str) -> bytes:
    lines = [line for line in text.splitlines() if not line.startswith(f"{key}=")]
    return "\n".join([*lines, f"{key}={value}"]).encode("utf-8") + b"\n"


def _issue_20_properties(world: World) -> list[tuple[bytes, int]]:
    """Issue 20: a NUL in log.dirs was an internal error for format --dry-run, broker register
    and log-dirs describe --from-disk; its siblings are a lone surrogate (from a \\uXXXX escape)
    in a path or in broker.rack, and a NUL in metadata.log.dir."""
    text = world.files["server.properties"][0]
    nul = _with_setting(text, "log.dirs", "/x/d\0x")
    return [
        *((nul, index) for index in (6, 4, 5)),
        (_with_setting(text, "log.dirs", "/x/d\\ud800x"), 6),
        (_with_setting(text, "metadata.log.dir", "/x/m\0"), 5),
        (_with_setting(text, "broker.rack", "r\\udc00"), 4),
    ]


def test_server_properties(world: World) -> None:
    campaign(
        "server.properties",
        st.deferred(lambda: properties_files(world.files["server.properties"])),
        [
            _config_command("format", "format", "-t", CLUSTER_ID, "-c", writes=True),
            _config_command("format", "format", "-t", CLUSTER_ID, "--ignore-formatted", "-c", writes=True),
            _config_command("meta info", "meta", "info", "-c", writes=False),
            _config_command("meta ensure-ids", "meta", "ensure-ids", "-c", writes=True),
            _config_command("broker register", "broker", "register", "--config", writes=False),
            _config_command("log-dirs describe", "log-dirs", "describe", "--from-disk", "-c", writes=False),
            _config_command("format --dry-run", "format", "-t", CLUSTER_ID, "--dry-run", "-c", writes=False),
        ],
        examples=_issue_20_properties,
    )(world)


def test_meta_properties(world: World) -> None:
    campaign(
        "meta.properties",
        st.deferred(lambda: properties_files(world.files["meta.properties"])),
        [
            lambda w, p: ("meta show", ["meta", "show", str(p.parent)]),
            lambda w, p: ("meta info", ["meta", "info", "-c", str(w.root / "broker1.properties")]),
            lambda w, p: ("meta ensure-ids", ["meta", "ensure-ids", "-c", str(w.root / "broker1.properties")]),
            lambda w, p: ("broker register", ["broker", "register", "--config", str(w.root / "broker1.properties")]),
            lambda w, p: ("format", ["format", "-c", str(w.root / "broker1.properties"), "-t", CLUSTER_ID, "--ignore-formatted"]),
            lambda w, p: ("log-dirs describe", ["log-dirs", "describe", "--from-disk", "-c", str(w.root / "broker1.properties")]),
        ],
        target=lambda w: w.root / "b1" / "d2" / "meta.properties",
    )(world)


def test_reassignment_json(world: World) -> None:
    campaign(
        "reassignment JSON",
        st.deferred(lambda: json_files(world.files["reassignment"])),
        [
            _cmd("reassign execute", "reassign", "execute", file_option="--reassignment-json-file"),
            _cmd("reassign execute", "reassign", "execute", "--throttle", "50000000", "--additional", file_option="--reassignment-json-file"),
            _cmd("reassign verify", "reassign", "verify", file_option="--reassignment-json-file"),
            _cmd("reassign cancel", "reassign", "cancel", file_option="--reassignment-json-file"),
            _cmd("reassign check", "reassign", "check", "--throttle", "50000000", file_option="--reassignment-json-file"),
        ],
        moving=lambda label: label in ("reassign verify", "reassign cancel"),
    )(world)


def test_topics_to_move_json(world: World) -> None:
    campaign(
        "topics-to-move JSON",
        st.deferred(lambda: json_files(world.files["topics"])),
        [
            _cmd("reassign generate", "reassign", "generate", "--broker-list", "1,2,3", "--seed", "7", file_option="--topics-to-move-json-file"),
            _cmd("reassign generate", "reassign", "generate", "--broker-list", "1,2", "--disable-rack-aware", file_option="--topics-to-move-json-file"),
        ],
    )(world)


def _import(which: str) -> Command:
    def build(world: World, path: Path) -> tuple[str, list[str]]:
        files = {"brokers": world.root / "brokers.json", "assignment": world.root / "assignment.json", "log-dirs": world.root / "import-log-dirs.txt"}
        files[which] = path
        return "import cluster", ["import", "cluster", "--brokers", str(files["brokers"]), "--assignment", str(files["assignment"]),
                                  "--log-dirs", str(files["log-dirs"])]

    return build


def _import_campaign(world: World, which: str, files: st.SearchStrategy[bytes], examples: Examples = lambda world: []) -> None:
    (world.template / "brokers.json").write_text(json.dumps(BROKERS))
    (world.template / "assignment.json").write_text(json.dumps(ASSIGNMENT))
    (world.template / "import-log-dirs.txt").write_text(json.dumps(LOG_DIRS))
    campaign(f"import {which}", files, [_import(which)], state=lambda w: w.root / "imported", examples=examples)(world)


def test_import_brokers(world: World) -> None:
    _import_campaign(world, "brokers", json_files([BROKERS, {"brokers": [{"id": 1, "log_dirs": ["/data/b1/d1", "/data/b1/d2"]}, *BROKERS["brokers"][1:]]}]))


def _issue_20_assignments(world: World) -> list[tuple[bytes, int]]:
    """Issue 20: a partition numbered 2147483647 made the numbering check walk (and hold) two
    billion numbers; the same with more topics and gaps."""
    huge = {"topic": "t", "partition": 2147483647, "replicas": [1]}
    return [
        (json.dumps({"version": 1, "partitions": [huge]}).encode(), 0),
        (json.dumps({**ASSIGNMENT, "partitions": [*ASSIGNMENT["partitions"], huge, {**huge, "partition": 5}]}).encode(), 0),
    ]


def test_import_assignment(world: World) -> None:
    _import_campaign(world, "assignment", json_files([ASSIGNMENT, {**ASSIGNMENT, "partitions": [{**ASSIGNMENT["partitions"][0], "leader": 2}]}]),
                     examples=_issue_20_assignments)


HEADER = "Querying brokers for log directories information\nReceived log directory information from brokers 1,2,3\n"


def test_import_log_dirs(world: World) -> None:
    _import_campaign(world, "log-dirs", text_with_json_files([LOG_DIRS], HEADER))


def test_kafka_log_dirs_output(world: World) -> None:
    def documents() -> st.SearchStrategy[bytes]:
        text = world.files["log-dirs output"]
        header, _, document = text.rpartition("\n{")
        return text_with_json_files([json.loads("{" + document)], header + "\n")

    campaign("kafka-log-dirs output", st.deferred(documents), [_cmd("log-dirs import", "log-dirs", "import")])(world)


def _issue_20_policies(world: World) -> list[tuple[bytes, int]]:
    """Issue 20: a broker id past a Java long overflowed the checker's numpy arrays; its siblings
    are the policy's other numbers (counts, byte counts, rates) past their Java types."""
    big = "9223372036854775808"
    return [(text.encode(), 0) for text in (
        f"removing_brokers = [{big}]\n",
        "removing_brokers = [2147483648, -1]\n",
        f"[limits]\nmax_moves_per_broker = {big}\nmax_bytes = {big}\nmax_bytes_per_broker = {big}\n",
        f"[throttle]\nrate = {big}\nreplica_alter_log_dirs_rate = {big}\nrequired_above_bytes = {big}\n",
        '[limits]\nmax_bytes = "99999999999999999999TiB"\nmax_duration = "99999999999999999999999d"\n',
    )]


def test_policy_toml(world: World) -> None:
    campaign(
        "policy TOML",
        st.deferred(lambda: toml_files(world.files["policy"])),
        [
            lambda w, p: ("reassign check", ["reassign", "check", "--reassignment-json-file", str(w.root / "reassignment.json"), "--policy", str(p)]),
            lambda w, p: ("reassign check", ["reassign", "check", "--reassignment-json-file", str(w.root / "reassignment-1.json"), "--policy", str(p),
                                             "--report", "junit", "--report-file", str(w.root / "report.xml")]),
        ],
        examples=_issue_20_policies,
    )(world)


def test_election_json(world: World) -> None:
    campaign(
        "election JSON",
        st.deferred(lambda: json_files(world.files["election"])),
        [
            _cmd("elect", "elect", "--election-type", "PREFERRED", file_option="--path-to-json-file"),
            _cmd("elect", "elect", "--election-type", "UNCLEAN", file_option="--path-to-json-file"),
        ],
    )(world)


def test_assign_dirs_json(world: World) -> None:
    campaign(
        "assign-dirs JSON",
        st.deferred(lambda: json_files(world.files["assign-dirs"])),
        [
            _cmd("assign-dirs", "assign-dirs", "--broker", "1", file_option="--file"),
            _cmd("assign-dirs", "assign-dirs", "--broker", "2", "--broker-epoch", "6", file_option="--file"),
        ],
    )(world)


# Random argument lists -----------------------------------------------------------------------

# Options the campaign never draws, and why.
NEVER = {
    "--state": "every run names its own state (a random one could be created anywhere)",
    "--debug": "prints a traceback on purpose",
    "--install-completion": "writes the developer's shell start-up files",
    "--show-completion": "detects the developer's shell",
    "--spark-master": "starts Spark (seconds per input); the planner's local engine is drawn instead",
}


def _leaves(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = []
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        found += _leaves(sub, (*path, name)) if hasattr(sub, "commands") else [((*path, name), sub)]
    return found


LEAVES = _leaves(COMMAND)
PER_COMMAND = -(-PLANNED["random arguments"] // len(LEAVES))
ROOT_OPTIONS = [p for p in COMMAND.params if not set(p.opts) & set(NEVER)]


def _values(world: World) -> st.SearchStrategy[str]:
    """Values for options and arguments: plausible ones (including the world's valid files, so
    that commands get past their first check) and junk."""
    w = world.root
    plausible = [
        str(w / name) for name in (
            "broker1.properties", "broker4.properties", "reassignment.json", "reassignment-1.json", "topics.json", "election.json",
            "assign-dirs.json", "policy.toml", "log-dirs.txt", "b1/d2", "b2", "missing.json", "state",
        )
    ] + [
        "1", "2", "3", "4", "0", "-1", "1,2,3", "1,2", "orders", "clicks", "orders:0=" + str(w / "b1" / "d2"), "25m", "1d", "1500", "-5s",
        "json", "text", "junit", "PREFERRED", "UNCLEAN", "balance", "add-brokers", "drain-dirs", "local", "4.3", "3.9-IV0",
        "group.version=1", "metadata.version=30", "kraft.version=1", "1:2:3,2:3:1", "retention.ms=1000", "50000000", "0.8",
        "1:" + str(w / "b1" / "d2"), "500GB", CLUSTER_ID, "any", "out.json", "new-policy.toml",
    ]
    # No "/" (so no path outside the world) and never "spark" (see NEVER).
    junk = st.text(max_size=12).filter(lambda t: "/" not in t and "\x00" not in t and t.lower() != "spark")
    return st.one_of(st.sampled_from(plausible), st.sampled_from(["", "9" * 30, "-", "--", "1e999", "NaN", "é", "💥"]), junk)


def _option_names(command: Any) -> list[str]:
    names = []
    for param in command.params:
        if getattr(param, "param_type_name", "") == "option":
            names += [name for name in (*param.opts, *param.secondary_opts) if name not in NEVER]
    return names


@st.composite
def argument_lists(draw: st.DrawFn, world: World, path: tuple[str, ...]) -> tuple[list[str], bool]:
    """An argument list for the command at `path`, and whether it asks for -o json."""
    command = dict(LEAVES)[path]
    values = _values(world)
    args: list[str] = []
    json_output = False
    for param in ROOT_OPTIONS:
        if draw(st.integers(0, 5)) == 0:
            value = [] if param.is_flag else [draw(st.one_of(st.just("json"), values)) if "--output" in param.opts else draw(values)]
            args += [draw(st.sampled_from(param.opts)), *value]
            json_output = json_output or ("--output" in param.opts and value == ["json"])
    # Sometimes only part of the command's path (a group without its command).
    args += list(path[: draw(st.integers(1, len(path)))] if draw(st.integers(0, 9)) == 0 else path)
    options = _option_names(command)
    for _ in range(draw(st.integers(0, 6))):
        choice = draw(st.integers(0, 9))
        if choice <= 5 and options:
            name = draw(st.sampled_from(options))
            args.append(name)
            if draw(st.integers(0, 9)) > 0:  # now and then the value is missing
                args.append(draw(values))
        elif choice == 6:
            args.append(draw(st.sampled_from(["--no-such-option", "-Z", "--", "-h", "--help=x", "--output-file="])))
        else:
            args.append(draw(values))
    return args, json_output


@pytest.mark.parametrize("path", [path for path, _ in LEAVES], ids=" ".join)
def test_random_argument_lists(world: World, path: tuple[str, ...]) -> None:
    """Random argument lists for every command of the tree, PER_COMMAND each."""
    kind, label = "random arguments", " ".join(path)

    @settings(CAMPAIGN, max_examples=PER_COMMAND)
    @given(drawn=argument_lists(world, path))
    def one(drawn: tuple[list[str], bool]) -> None:
        args, json_output = drawn
        world.reset(moving=label in ("reassign verify", "reassign cancel", "reassign list"))
        before = fingerprint(world.state)
        run = run_cli(["--state", str(world.state), *args], world.root)
        outcome = check(run, label, before, fingerprint(world.state), json_output=json_output)
        GENERATED[(kind, label)] += 1
        OUTCOMES[(kind, outcome)] += 1

    one()
    assert GENERATED[(kind, label)] >= PER_COMMAND
