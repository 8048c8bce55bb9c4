"""`kjbod quorum`: kafka-metadata-quorum's describe, add-controller and remove-controller, and
kjbod's own start-controller / stop-controller, on a controller of the cluster state.

- `describe`: describe --status / --replication, Kafka's lines and kjbod's JSON;
- `voter_changes`: add-controller / remove-controller [--unregister], Kafka's line, refusal and
  kjbod's JSON; kafka-cluster's unregister-controller (KIP-1312);
- `controller_config`: a controller's server.properties as add-controller reads it.

The lines are MetadataQuorumCommand's (`tools/src/main/java/org/apache/kafka/tools/MetadataQuorumCommand.java`);
the controller side is kjbod.controller.quorum_control.
"""
