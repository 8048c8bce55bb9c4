"""Tools that act on a broker's real directories: `kjbod format` and `kjbod meta`.

They read and write Kafka's own files (`server.properties`, `meta.properties`) byte-compatibly
(reference: kafka-storage-and-features.md §1-§3):

- `properties`: java.util.Properties reading and writing (through javaproperties);
- `config`: the few server.properties settings the storage tools need;
- `meta_properties`: the `meta.properties` model, Kafka's parser messages and layout;
- `ensemble`: every directory of a node at once (Kafka's MetaPropertiesEnsemble), `meta info`
  and the KIP-858 start-up rule `meta ensure-ids`;
- `voters`: the KIP-853 `--initial-controllers` grammar;
- `formatter`: `kjbod format`, validation and plan first, writing second;
- `bootstrap_checkpoint`: the binary `bootstrap.checkpoint` file every formatted directory gets.
"""
