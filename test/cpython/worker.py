"""Runs one CPython test module twice per test method: plainly, then with the
method's body as a dynoc capture region (every frame it calls in the `test`
package followed, as the evaluator follows user code). Prints one JSON object
per test on stdout; cpython_suite.py compares the two outcomes.

    python test/cpython/worker.py MODULE [TEST_ID_PREFIX ...]
"""
import contextlib
import doctest
import io
import json
import re
import sys
import types
import unittest
import warnings

import dynoc
from dynoc import _region

# The test package is library code for dynoc (it lives in the stdlib): here
from dynoc.capture import session as _session
# it is the program under capture, followed like user code.
_region.followed_packages.append("test")
_region._followed_dirs = None

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def _last_line(text):
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return _ADDRESS.sub("0x…", lines[-1]) if lines else ""


def outcome(test):
    """(kind, detail) of one run of `test`."""
    result = unittest.TestResult()
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        with warnings.catch_warnings():
            test.run(result)
    finally:
        sys.stdout, sys.stderr = saved
    if result.errors:
        return "error", _last_line(result.errors[0][1])
    if result.failures:
        return "fail", _last_line(result.failures[0][1])
    if result.skipped:
        return "skip", result.skipped[0][1]
    if result.expectedFailures:
        return "xfail", ""
    if result.unexpectedSuccesses:
        return "xpass", ""
    return "pass", ""


def as_region(test):
    """Makes `test`'s method a capture region; None when it is not a plain
    function (the test then runs plainly, and is reported as not captured)."""
    name = test._testMethodName
    fn = getattr(type(test), name, None)
    if not isinstance(fn, types.FunctionType):
        return None
    region = _region.Region(fn, "eager")
    region.record_only = True  # record, never build: no graphs run compiled

    def method(self, *args, **kwargs):
        return region(self, *args, **kwargs)
    # unittest reads expectedFailure's mark from the method it calls.
    method.__unittest_expecting_failure__ = getattr(fn, "__unittest_expecting_failure__",
                                                    False)
    setattr(test, name, types.MethodType(method, test))
    return region


@contextlib.contextmanager
def doctest_examples_as_regions():
    """doctest runs each example with exec(compile(source, name, "single"),
    globs): here each example's code becomes a capture region instead (module
    code, with the doctest's globals as its namespace)."""
    def exec_as_region(code, globs, *rest):
        fn = types.FunctionType(code, globs, "<doctest example>")
        region = _region.Region(fn, "eager")
        region.record_only = True
        region()
    doctest.exec = exec_as_region  # the module's global shadows the builtin
    try:
        yield
    finally:
        del doctest.exec


def iter_tests(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from iter_tests(t)
        else:
            yield t


def main():
    module, prefixes = sys.argv[1], sys.argv[2:]
    mod = __import__("test." + module, fromlist=["*"])
    loader = unittest.TestLoader()
    session = _session.current()
    for t in iter_tests(loader.loadTestsFromModule(mod)):
        if isinstance(t, unittest.FunctionTestCase):
            continue
        tid = t.id().removeprefix("test.")
        if prefixes and not tid.startswith(tuple(prefixes)):
            continue
        before = len(session.breaks)
        if isinstance(t, doctest.DocTestCase):
            plain = outcome(t)
            with doctest_examples_as_regions():
                captured = outcome(t)
        else:
            plain = outcome(t)
            captured_test = type(t)(t._testMethodName)
            region = as_region(captured_test)
            captured = outcome(captured_test) if region is not None else None
        declined = sorted({b["reason"].split(";")[0] for b in session.breaks[before:]
                           if "not interpreted" in b["reason"]})
        print(json.dumps({"id": tid, "plain": plain, "captured": captured,
                          "declined": declined}), flush=True)


if __name__ == "__main__":
    main()
