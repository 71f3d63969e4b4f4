"""Quality gates, committed baselines and the comparison of two reports.

- :mod:`~evalkit.gates.spec`: the ``gates.yaml`` schema and loading it.
- :mod:`~evalkit.gates.baseline`: committed baselines: writing, reading, staleness.
- :mod:`~evalkit.gates.check`: checking a report against the gates and a baseline.
- :mod:`~evalkit.gates.diff`: what changed between two reports.
"""
