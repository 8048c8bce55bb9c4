"""kjbod: an operator toolkit for Apache Kafka clusters that run JBOD."""

__version__ = "0.1.0"
