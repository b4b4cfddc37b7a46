"""The package's version: one place, read by setup.cfg, the CLI and the results folders' scenario.yaml."""

__version__ = "0.1.0"
