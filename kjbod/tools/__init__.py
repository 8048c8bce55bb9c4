"""What each command does, one module or package per tool; each takes an image or a controller
(or a node's files) and returns a result the CLI renders. The tools do not import each other,
with the exceptions docs/architecture.md names."""
