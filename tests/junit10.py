"""The rules of Jenkins' JUnit schema ``junit-10.xsd``, as a small validator (test helper).

Source of the rules: the Jenkins xunit-plugin (MIT),
``src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/junit-10.xsd``. That file is
not copied here (it is third-party); these are its rules restated, the common ground of the
Jenkins, GitLab and GitHub JUnit reporters:

- root ``testsuites``: attributes only ``name, time, tests, failures, errors`` (no
  ``skipped``, no ``timestamp``), children only ``testsuite``;
- ``testsuite``: requires ``name, tests, failures, errors``; may have ``group, time, skipped,
  timestamp, hostname, id, package, file, log, url``; children any of ``testsuite,
  properties, testcase, system-out, system-err``;
- ``testcase``: requires ``name``; may have ``time, classname, group``; children any of
  ``skipped, error, failure, rerunFailure, rerunError, flakyFailure, flakyError, system-out,
  system-err``;
- ``failure``, ``error``, ``skipped``: optional ``type`` and ``message``, text content only;
- ``properties`` holds ``property`` elements with required ``name`` and ``value``;
- ``time`` on ``testsuite``/``testsuites`` matches
  ``(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\\.[0-9]*)?``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?")
SUITES_ATTRIBUTES = {"name", "time", "tests", "failures", "errors"}
SUITE_REQUIRED = {"name", "tests", "failures", "errors"}
SUITE_OPTIONAL = {"group", "time", "skipped", "timestamp", "hostname", "id", "package"}
SUITE_OPTIONAL |= {"file", "log", "url"}
SUITE_CHILDREN = {"testsuite", "properties", "testcase", "system-out", "system-err"}
CASE_OPTIONAL = {"time", "classname", "group"}
CASE_CHILDREN = {"skipped", "error", "failure", "rerunFailure", "rerunError"}
CASE_CHILDREN |= {"flakyFailure", "flakyError", "system-out", "system-err"}
RESULTS = {"failure", "error", "skipped"}


def _attributes(element: ET.Element, required: set[str], optional: set[str]) -> list[str]:
    where = f"<{element.tag}>"
    problems = [f"{where} lacks attribute {a!r}" for a in sorted(required - set(element.attrib))]
    problems += [
        f"{where} has attribute {a!r}, which junit-10.xsd does not allow"
        for a in element.attrib
        if a not in required | optional
    ]
    return problems


def _time(element: ET.Element) -> list[str]:
    time = element.get("time")
    if time is not None and not TIME.fullmatch(time):
        return [f"<{element.tag}> time {time!r} does not match junit-10.xsd's pattern"]
    return []


def _suite(suite: ET.Element) -> list[str]:
    problems = _attributes(suite, SUITE_REQUIRED, SUITE_OPTIONAL) + _time(suite)
    for child in suite:
        if child.tag not in SUITE_CHILDREN:
            problems.append(f"<testsuite> has child <{child.tag}>")
        elif child.tag == "testsuite":
            problems += _suite(child)
        elif child.tag == "properties":
            for item in child:
                if item.tag != "property":
                    problems.append(f"<properties> has child <{item.tag}>")
                else:
                    problems += _attributes(item, {"name", "value"}, set())
        elif child.tag == "testcase":
            problems += _case(child)
    return problems


def _case(case: ET.Element) -> list[str]:
    problems = _attributes(case, {"name"}, CASE_OPTIONAL)
    for child in case:
        if child.tag not in CASE_CHILDREN:
            problems.append(f"<testcase> has child <{child.tag}>")
        elif child.tag in RESULTS:
            problems += _attributes(child, set(), {"type", "message"})
            problems += [f"<{child.tag}> has child <{c.tag}>" for c in child]
    return problems


def junit10_problems(text: str) -> list[str]:
    """Every way ``text`` breaks the rules of junit-10.xsd (module docstring); [] when valid."""
    root = ET.fromstring(text.encode("utf-8"))
    if root.tag != "testsuites":
        return [f"the root is <{root.tag}>, expected <testsuites>"]
    problems = _attributes(root, set(), SUITES_ATTRIBUTES) + _time(root)
    for child in root:
        if child.tag != "testsuite":
            problems.append(f"<testsuites> has child <{child.tag}>")
        else:
            problems += _suite(child)
    return problems
