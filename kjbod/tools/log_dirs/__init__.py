"""`kjbod log-dirs`: kafka-log-dirs' report from the cluster state (`report`) or from a broker's
real disks (`disk`), and saved kafka-log-dirs output read back (`saved_output`) and loaded into
the state (`importer`)."""
