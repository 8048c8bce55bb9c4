"""The `kjbod` command line (Typer): one module per command group, each parsing its options,
calling the library once and rendering the result (`render`); `app` holds the global options and
the one error handler, `context` the way a command reaches the cluster state."""
