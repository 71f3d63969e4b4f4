"""The ``evalkit`` command: :func:`evalkit.cli.main.console` parses and dispatches."""
