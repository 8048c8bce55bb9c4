"""Kafka's text files on a broker's disks, read and written byte-compatibly with Kafka
(reference: kafka-storage-and-features.md §1-§3):

- `properties`: java.util.Properties reading and writing (through javaproperties);
- `config`: the server.properties settings kjbod's tools need (node id, roles, log.dirs,
  listeners, controller.quorum.voters);
- `meta_properties`: the `meta.properties` model, Kafka's parser messages and layout;
- `ensemble`: every directory of a node at once (Kafka's MetaPropertiesEnsemble).

The tools that act on those directories (`format`, `meta`) are kjbod.tools.storage; Kafka's
binary metadata files (bootstrap.checkpoint, KRaft snapshots) are kjbod.kafka_formats.
"""
