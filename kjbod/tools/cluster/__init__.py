"""The cluster-state commands' tool side (`broker`, `topic`, `assign-dirs`, `elect`): reading what
the operator typed or wrote into controller requests (`requests`, `registration`) and the views
of brokers, directories and topics (`describe`)."""
