"""The evaluator's callbacks have one declaration (capture/evaluator_hooks.py):
the names the C++ evaluator calls on a region's tracker are exactly the
protocol's, and the recorder's Tracker implements every one."""
import inspect
import pathlib
import re

from dynoc.capture.evaluator_hooks import EvaluatorHooks
from dynoc.capture.recorder import Tracker

ROOT = pathlib.Path(__file__).resolve().parents[2]
# callTracker("name", ...), callTrackerForResult("name", ...),
# PyObject_CallMethod(tracker, "name", ...), GetAttrString(<...>tracker, "name").
CALLS = re.compile(r'(?:callTracker(?:ForResult)?\(\s*|PyObject_CallMethod\(\s*(?:st\.)?tracker,\s*'
                   r'|GetAttrString\(\s*(?:st\.)?tracker,\s*)"(\w+)"')
# evaluator_calls.cpp keeps some names in a table of callbacks it looks up.
TABLE = re.compile(r'"(on_size_guard|on_native_method)",')


def names_called_from_cpp():
    found = set()
    for path in sorted((ROOT / "lib" / "capture").glob("*.[ch]*")):
        text = path.read_text()
        found |= set(CALLS.findall(text)) | set(TABLE.findall(text))
    return found


def protocol_names():
    return {n for n, _ in inspect.getmembers(EvaluatorHooks)
            if not n.startswith("_")}


def test_the_cpp_evaluator_calls_exactly_the_declared_hooks():
    called = names_called_from_cpp()
    declared = protocol_names()
    assert called - declared == set(), "called by the evaluator but not declared"
    assert declared - called == set(), "declared but never called by the evaluator"


def test_the_tracker_implements_every_hook():
    for name in protocol_names() - {"resumable"}:
        assert getattr(Tracker, name) is not getattr(EvaluatorHooks, name), name
        declared = inspect.signature(getattr(EvaluatorHooks, name))
        implemented = inspect.signature(getattr(Tracker, name))
        assert list(declared.parameters) == list(implemented.parameters), name
