"""Quality gates, committed baselines and the comparison of two reports.

- :mod:`~evalkit.gates.check`: ``gates.yaml``, baselines, and checking a report against both.
- :mod:`~evalkit.gates.diff`: what changed between two reports.
"""
