//===- evaluator.h - dynoc's bytecode evaluator with shadow values -*- C++
//-*-===//
#ifndef DYNOC_CAPTURE_EVALUATOR_H
#define DYNOC_CAPTURE_EVALUATOR_H

#include <Python.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace dynoc::capture {

class Evaluator;

/// Objects the evaluator needs from Python, set once by `_dynoc_C.init`.
struct Runtime {
  PyTypeObject *tensorType = nullptr;
  PyObject *moduleType = nullptr;        // torch.nn.Module
  PyObject *followPredicate = nullptr;   // code -> bool: inline this function?
  PyObject *forwardOf = nullptr;         // module -> forward function or None
  PyObject *followCache = nullptr;       // dict: code -> bool
  PyObject *regionType = nullptr;        // dynoc._region.Region
  PyObject *entryCallback = nullptr;     // (fn, args, kwargs) -> result
  PyObject *calleeCallback = nullptr;    // the same, for a function that a
                                         // disable(recursive=False) one calls
  std::vector<std::string> entryModules; // --entry: module __name__s
  std::string entryName;                 // --entry: function name
  PyObject *specialCalls = nullptr;      // dict: callable -> kind (str), the
                                    // seed APIs (graph_break, disable, ...)
  unsigned char inlineCaches[256] = {};
};
Runtime &runtime();

/// A followed call on its way to the frame hook: the callee's code and the
/// shadows of what it is called with.
struct PendingCall {
  PyCodeObject *code = nullptr;
  std::vector<std::string> argSources;    // positional, then keyword values
  PyObject *kwnames = nullptr;            // borrowed; keyword names or null
  std::vector<std::string> varargSources; // items of a forwarded *args
  std::string funcSource;                 // where the callee function came from
  bool entry = false;                     // the region's own function
};

/// Shadows of closure cells' contents, keyed by cell (the map owns a
/// reference to each cell so that an address is never reused meanwhile).
class CellSources {
public:
  ~CellSources();
  const std::string *find(PyObject *cell) const;
  /// An empty source forgets the cell (and drops the map's reference).
  void set(PyObject *cell, std::string source);

private:
  std::unordered_map<PyObject *, std::string> map;
};

/// The capture region running on this thread.
struct RegionState {
  PyObject *tracker = nullptr; // dynoc.capture.recorder.Tracker of the region
  bool passthrough = false;    // inside a call the evaluator does not follow
  bool inEntry = false;        // inside a call of the --entry function
  /// Inside a disable(recursive=False) function called from the region: its
  /// own frame (this code) runs natively, each function it calls is a
  /// region of its own, as in Dynamo.
  PyCodeObject *disabledFrame = nullptr;
  bool inCallee = false; // inside such a callee's region call
  PendingCall pending;
  PyObject *rootGlobals = nullptr; // borrowed: the region function's globals
  std::shared_ptr<CellSources> cells;
  /// The frames the evaluator is running, innermost last: their code and
  /// current instruction (for the location of breaks seen at the dispatcher).
  std::vector<std::pair<PyCodeObject *, const Py_ssize_t *>> frames;
  /// What an evaluated frame returned, for the call that followed it: a size
  /// (or a tuple's sizes) keeps its source across `return`, so that
  /// `n = get_len(x)` still names `L['x'].size()[1]`.
  struct ReturnedSizes {
    PyCodeObject *code = nullptr; // the returning frame's code; null: none
    PyObject *value = nullptr;    // borrowed: compared by identity only
    std::string source;           // the value's size source, or empty
    std::shared_ptr<const std::vector<std::string>> items; // a tuple's
  } returned;
  /// Resuming after a break in process (docs/capture.md, "Graph breaks in
  /// the same process"): while the region function's own frame is inside a
  /// CALL, that frame, so that a break anywhere under the call can name the
  /// state to resume from after it. Kept only when the tracker asks for it.
  bool resumable = false;
  size_t entryDepth = 0; // frames.size() when the region began
  const Evaluator *topCall = nullptr;
};
RegionState &regionState();

} // namespace dynoc::capture

#endif // DYNOC_CAPTURE_EVALUATOR_H
