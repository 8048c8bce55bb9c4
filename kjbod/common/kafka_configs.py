"""Names of the Kafka configs kjbod reads or sets (topic and broker dynamic configs)."""

# Replication throttles (server-common QuotaConfig): rates on brokers, replica lists on topics.
LEADER_THROTTLED_RATE = "leader.replication.throttled.rate"
FOLLOWER_THROTTLED_RATE = "follower.replication.throttled.rate"
LOG_DIRS_THROTTLED_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"
BROKER_THROTTLES = (LEADER_THROTTLED_RATE, FOLLOWER_THROTTLED_RATE, LOG_DIRS_THROTTLED_RATE)
TOPIC_THROTTLES = (LEADER_THROTTLED_REPLICAS, FOLLOWER_THROTTLED_REPLICAS)

MIN_INSYNC_REPLICAS = "min.insync.replicas"

# KIP-1066 (ServerLogConfigs.CORDONED_LOG_DIRS_CONFIG, 4.3.1 server-common ServerLogConfigs.java:54-57):
# a per-broker list of log.dirs entries that take no new replicas, or "*" for all of them.
CORDONED_LOG_DIRS = "cordoned.log.dirs"
CORDONED_LOG_DIRS_ALL = "*"
