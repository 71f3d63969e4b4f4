"""``python -m evalkit``: the ``evalkit`` command (:func:`evalkit.cli.console`)."""

import sys

from evalkit.cli.entry import console

if __name__ == "__main__":
    sys.exit(console())
