"""The simulated cluster around the controller: kjbod's own model of what brokers do with time.

Kafka runs on wall-clock time; kjbod's state has a simulated clock, and advancing it runs the
brokers: replicas being added fetch from their leaders and join the ISR (the leader's
AlterPartition), future replicas fill up and are promoted (AssignReplicasToDirs), each at the
rates and throttles that apply (`copy_model`). `clock` is the operation that moves the clock:
the copies, then the controller quorum's own progress (kjbod.controller.quorum_control).

The simulated brokers send their requests to the control managers, as Kafka's brokers send them
to the controller, so this package sits above kjbod.controller and the controller never imports
it: the clock's operations are built on an image (`ClockControl(image)`), not reached through the
Controller facade. The tools that estimate how long a plan takes (reassign verify, reassign
check) run the same model.
"""
