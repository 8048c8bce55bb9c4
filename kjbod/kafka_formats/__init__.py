"""Kafka's own binary metadata files, written and read byte for byte as Kafka does.

Every KRaft metadata file is a stream of record batches v2 whose records are Kafka's metadata
records (their message codec is kjbod.records.wire):

- `record_batch`: the record batch v2 (DefaultRecordBatch), its control records and CRC32C;
- `kraft_snapshot`: KRaft snapshots (`__cluster_metadata-0/<offset>-<epoch>.checkpoint`), the
  KIP-853 bootstrap snapshot, and the batch boundaries of Kafka's BatchAccumulator;
- `metadata_log`: the `__cluster_metadata-0` log segments after a snapshot;
- `bootstrap_checkpoint`: the `bootstrap.checkpoint` file every formatted directory gets;
- `controller_metadata`: a controller's snapshot and the log after it, read as kjbod records
  (what `import cluster --metadata-snapshot` starts from).

kjbod's own record log and snapshots are a different format (kjbod.log, kjbod.state.snapshots).
"""
