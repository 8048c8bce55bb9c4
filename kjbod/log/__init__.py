"""The cluster state's durable record log, kjbod's own format: framed, CRC32C-checksummed batches
(`framing`, which the state's snapshots use too), segment files with torn-tail recovery
(`record_log`), the acknowledged end (`acknowledged`), the state directory's lock (`lock`) and its
small name index for shell completion (`name_index`)."""
