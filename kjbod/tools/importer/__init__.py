"""`kjbod import cluster`: a new cluster state from a real cluster's exported files (`from_files`)
or from a controller's own snapshot and log (`from_snapshot`), written the same way (`new_state`)."""
