"""`kjbod format` and `kjbod meta`: kafka-storage's format, info and random-uuid, and the KIP-858
start-up rule as `meta ensure-ids`, on a node's real directories.

- `formatter`: Kafka's Formatter: validation and plan first, writing the directories second;
- `voters`: the KIP-853 `--initial-controllers` grammar, and controller.quorum.voters';
- `format`: the command: the formatter, then on a controller the cluster state's bootstrap;
- `meta`: `meta info`, `meta show` and `meta ensure-ids` over a node's directories
  (kjbod.storage.ensemble).
"""
