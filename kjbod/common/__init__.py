"""Shared utilities below everything else: Java behaviours kjbod reproduces (`java`), Jackson-strict
JSON (`jackson`), Kafka Uuids and directory ids (`kafka_uuid`), metadata.version and the feature
tables (`versions`), Kafka config names, byte units, durable file writes, problem lists for input
files, and the callbacks long operations take."""
