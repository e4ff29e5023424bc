"""One module per ``cardtable`` subcommand; each exposes ``register(subparsers)``."""
