//===- evaluator_internal.h - the evaluator's shared parts -----*- C++ -*-===//
//
// What the evaluator's files share: a value with its shadow (Slot), the
// scopes its calls run in, helper operations with CPython's semantics, and
// the Evaluator itself. Each opcode family runs in a file of its own:
// evaluator.cpp (the loop, control flow, frame entry), evaluator_names.cpp,
// evaluator_calls.cpp, evaluator_operators.cpp, evaluator_containers.cpp,
// evaluator_match.cpp and evaluator_exceptions.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_CAPTURE_EVALUATOR_INTERNAL_H
#define DYNOC_CAPTURE_EVALUATOR_INTERNAL_H

#include "evaluator.h"
#include "exceptions.h"
#include "frame_hook.h"
#include "opcodes.h"
#include "size_sources.h"

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dynoc::capture {

using ItemSources = std::shared_ptr<const std::vector<std::string>>;

/// A value on the evaluator's stack or in a local, with its shadow.
/// The keyword arguments a `**kwargs` parameter received, by name, with
/// their sources; they hold while the dict keeps `version` (a forwarding
/// call `f(*args, **kwargs)` passes them on; a changed dict passes none).
struct KeywordSources {
  uint64_t version;
  std::vector<std::pair<std::string, std::string>> sources;
};

struct Slot {
  PyObject *value = nullptr; // owned; may be null (PUSH_NULL)
  std::string source;        // empty: unknown origin
  Py_ssize_t iterIndex = 0;  // for iterators: the next item's index
  ItemSources items;         // for tuples built here: each item's source
  bool constant = false;     // loaded by LOAD_CONST: a literal of the code
  std::shared_ptr<const KeywordSources> keywords; // a **kwargs dict's items
};

/// A scoped flag: calls made while it lives are not followed.
struct Passthrough {
  bool saved;
  Passthrough() : saved(regionState().passthrough) {
    regionState().passthrough = true;
  }
  ~Passthrough() { regionState().passthrough = saved; }
};

/// A scope in which dynoc's own Python (the tracker, the follow predicate)
/// runs: never seen by the program's trace or profile function, which is
/// shown the program's frames only, as in a plain run.
struct Untraced {
  bool paused = dynoc_tracing_active();
  Untraced() {
    if (paused)
      dynoc_pause_tracing();
  }
  ~Untraced() {
    if (paused)
      dynoc_resume_tracing();
  }
};

/// Why `co` cannot run in the evaluator, or null. Sets the first opcode it
/// lacks.
const char *unsupportedReason(PyCodeObject *co, int &badOpcode);

/// Does the evaluator run a call of `func` (user code, module forwards, the
/// followed packages), as the follow predicate says (cached per code)?
bool shouldFollow(PyObject *func);

/// BINARY_OP's operation `op` (NB_* of CPython's opcode.h) on a and b.
PyObject *binaryOp(int op, PyObject *a, PyObject *b);

/// A new tuple of the call's argument values (positional and keyword).
PyObject *argsTuple(const std::vector<PyObject *> &args);

/// The code of the function a decorator wrapped (`__wrapped__`, as
/// functools.wraps sets it), else of `fn` itself; null for a builtin.
PyCodeObject *wrappedCode(PyObject *fn);

/// A dict's version tag: changed by every mutation, unique across dicts.
uint64_t dictVersion(PyObject *dict);

/// A Python value a guard can pin: None, bool, int, float or str.
bool isGuardableScalar(PyObject *v);
/// `isinstance`, `issubclass`, `callable` or `type`: a builtin whose result
/// depends on its arguments' types, never on their values.
bool isTypeQuery(PyObject *callable);
/// A builtin method that changes its list, dict, set or bytearray (append,
/// update, pop, ...).
bool isMutatingMethod(PyObject *cfunction);

/// The source of `base[key]` for a str or int key; empty when unnamed.
std::string itemSource(const std::string &base, PyObject *key);

/// The source of item `i` of a sequence: from the per-item shadows of a tuple
/// built in the evaluator, else by indexing the sequence's own source.
std::string itemSource(const Slot &seq, Py_ssize_t i);

/// DICT_MERGE's failure turned into CPython's TypeError naming the called
/// function: not a mapping, or a keyword argument given twice.
void kwargsError(PyObject *func, PyObject *kwargs);

/// `type(obj).name` bound to obj (a new reference), as CPython looks up
/// special methods: null with no error when the type lacks it.
PyObject *lookupSpecial(PyObject *obj, const char *name);

/// The items UNPACK_SEQUENCE (`before` targets) or UNPACK_EX (`before`,
/// a starred one, `after`) takes from `v`, as a new list, by CPython's rules
/// and messages: a plain unpack reads one item past `before` (an endless
/// iterator is "too many values"), a starred one reads the rest.
PyObject *unpackToList(PyObject *v, int before, int after, bool star);

/// In an opcode family's function (Evaluator::exec*): the instruction fails
/// (its exception set) when `x` is null.
#define STEP_FAIL_IF_NULL(x)                                                   \
  if (!(x))                                                                    \
    return Step::Error;

/// Runs one CPython frame, instruction by instruction, with a shadow
/// for every value (evaluator.cpp has the loop; each opcode family its own
/// file).
class Evaluator {
public:
  Evaluator(const dynoc_frame_view &f, PendingCall call)
      : f(f), co(f.code), call_(std::move(call)) {
    int n = co->co_nlocalsplus;
    locals.resize(n);
    for (int i = 0; i < n; ++i) {
      locals[i].value = f.localsplus[i];
      Py_XINCREF(locals[i].value);
    }
    bindArgumentSources();
  }
  ~Evaluator() {
    for (Slot &s : locals)
      Py_XDECREF(s.value);
    for (Slot &s : stack)
      Py_XDECREF(s.value);
    Py_XDECREF(code);
  }

  PyObject *run();
  /// The frame's state inside its current CALL, or at a conditional jump on
  /// a tensor, for resuming after it (RegionState::topCall): {"pc", "next",
  /// "nargs", "kwnames", "stack", "locals", "mark"}, and for a jump "jump":
  /// (condition, target, jump_if_true, fallthrough); each stack item and
  /// local is (value, source, bound).
  PyObject *snapshot() const;

private:
  /// What an opcode family's function did with an instruction.
  enum class Step { Done, Error, Unhandled };
  Step execNames(Op op, int oparg);
  Step execCalls(Op op, int oparg);
  Step execOperators(Op op, int oparg);
  Step execContainers(Op op, int oparg);
  Step execMatch(Op op, int oparg);
  Step execExceptions(Op op, int oparg);

  void bindArgumentSources();
  /// LOAD_FAST of local `i`: false, with UnboundLocalError, when unbound.
  bool loadFast(int i);
  /// STORE_FAST to local `i` of the value on top.
  void storeFast(int i);
  PyObject *runUntilError();
  bool unwindToHandler();

  void push(PyObject *v, std::string src = {}, ItemSources items = {}) {
    stack.push_back({v, std::move(src), 0, std::move(items)});
  }
  Slot pop() {
    Slot s = std::move(stack.back());
    stack.pop_back();
    return s;
  }
  /// Pushes a callable with the NULL slot a call expects beside it (before
  /// or after it, as this version's CALL reads them).
  void pushCallable(PyObject *v, std::string src = {}) {
    if (kNullBeforeCallable)
      push(nullptr);
    push(v, std::move(src));
    if (!kNullBeforeCallable)
      push(nullptr);
  }
  void dropTop(size_t count) {
    for (size_t i = stack.size() - count; i < stack.size(); ++i)
      Py_XDECREF(stack[i].value);
    stack.resize(stack.size() - count);
  }
  int line() { return PyCode_Addr2Line(co, int(pc * 2)); }
  /// The frame CPython made for this call holds the same locals as the
  /// evaluator (written through at each store), so that what looks at it
  /// (locals(), sys._getframe(), a traceback's frame) sees what CPython's own
  /// loop would show, and a deleted local is freed when CPython frees it.
  void mirror(int i) {
    if (f.localsplus[i] != locals[i].value) {
      Py_XINCREF(locals[i].value);
      Py_XSETREF(f.localsplus[i], locals[i].value);
    }
  }
  /// Before code that may look at the frame runs: its current instruction.
  void publish() { dynoc_frame_publish_at(f.frame, int(pc)); }
  bool isTensor(PyObject *v) {
    return v && PyObject_TypeCheck(v, runtime().tensorType);
  }
  void noteTensor(PyObject *v, const std::string &src) {
    if (!src.empty() && isTensor(v))
      callTracker("on_tensor", Py_BuildValue("(Os)", v, src.c_str()));
  }
  /// A Python scalar with a known source that an operation consumes: the
  /// graph or the control flow depends on its value, so it is guarded.
  void guardScalar(const Slot &s) {
    if (!s.source.empty() && s.value && isGuardableScalar(s.value))
      callTracker("on_guard", Py_BuildValue("(sO)", s.source.c_str(), s.value));
  }
  /// guardScalar for an operand that is not itself a size (a size there is
  /// part of a size expression or guard instead).
  void guardUnlessSize(const Slot &s) {
    if (!isSizeInt(s.value, s.source))
      guardScalar(s);
  }
  /// The region writes what `source` names: a later read of it (or of
  /// what hangs off it) sees the region's own value, not one to guard.
  /// `constant`: the value stored is a literal of the code (LOAD_CONST),
  /// the same on every call, so replaying it needs no guard.
  /// The region writes what `source` names; `value` is the slot written
  /// (its source says where the value came from: a tensor's size, say).
  void noteStore(const std::string &source, const Slot *value = nullptr) {
    if (!source.empty())
      callTracker("on_store",
                  Py_BuildValue("(sis)", source.c_str(),
                                int(value && value->constant),
                                value ? value->source.c_str() : ""));
  }
  /// The region writes attribute or item `key` of `owner`, which has no
  /// source: the tracker tells an object the call made (nothing to replay)
  /// from one it must find, or refuse to compile (capture/results.py).
  void noteAnonymousStore(PyObject *owner, PyObject *key, bool isAttr,
                          const Slot *value = nullptr) {
    callTracker("on_anonymous_store",
                Py_BuildValue("(OOiis)", owner, key, int(isAttr),
                              int(value && value->constant),
                              value ? value->source.c_str() : ""));
  }
  /// A match statement tests the subject's type: a subject with a source
  /// has its type guarded (tensors have tensor guards).
  void guardType(const Slot &s) {
    if (!s.source.empty() && s.value && !isTensor(s.value))
      callTracker("on_type_guard",
                  Py_BuildValue("(sO)", s.source.c_str(), s.value));
  }
  /// MATCH_KEYS: pushes the values of `keys` in the mapping `subject`, each
  /// with its item source, or None when one is missing (as CPython does,
  /// through the mapping's `get`). Whether each key is there is guarded.
  bool matchKeys(const Slot &subject, const Slot &keys);
  /// What a MATCH_KEYS/MATCH_CLASS pushes: the tuple it read (owned, with
  /// its items' sources) when the pattern matched, else None; nothing when
  /// an error is set (`ok` false).
  bool pushMatch(bool ok, bool matched, PyObject *tuple, ItemSources items);
  /// MATCH_CLASS: pushes the tuple of `subject`'s attributes that a class
  /// pattern with `nargs` positional sub-patterns and keyword `kwNames`
  /// reads (each with its attribute source), or None when `subject` is not
  /// an instance of `cls` or lacks one. CPython's checks and messages.
  bool matchClass(const Slot &subject, PyObject *cls, int nargs,
                  PyObject *kwNames);
  /// A tensor's source for its sizes: its own source, or for a tensor a
  /// graph of the region computed, the name of that graph value
  /// (`___v[12]`), whose sizes the recorder can express in the inputs'.
  /// Other tensors have none, and a decision on their sizes keeps the
  /// variant static.
  std::string tensorSource(PyObject *tensor, const std::string &source) {
    if (!source.empty())
      return source;
    PyObject *tracker = regionState().tracker;
    PyObject *r =
        tracker ? PyObject_CallMethod(tracker, "value_source", "O", tensor)
                : nullptr;
    std::string out = kUntracked;
    if (r && PyUnicode_Check(r))
      out = PyUnicode_AsUTF8(r);
    else if (!r && tracker)
      PyErr_WriteUnraisable(tracker);
    Py_XDECREF(r);
    return out;
  }
  static bool isBuiltinsModule(PyObject *m) {
    if (!m || !PyModule_Check(m))
      return false;
    const char *n = PyModule_GetName(m);
    if (!n)
      PyErr_Clear();
    return n && std::strcmp(n, "builtins") == 0;
  }
  static const char *cFunctionName(PyObject *f) {
    const char *n = reinterpret_cast<PyCFunctionObject *>(f)->m_ml->ml_name;
    return n ? n : "";
  }
  /// `t.shape` / `t.size()` as built here: a torch.Size with a size source.
  static bool isSizeTuple(const Slot &s) {
    return PyTuple_Check(s.value) && s.source.size() > 7 &&
           s.source.compare(s.source.size() - 7, 7, ".size()") == 0;
  }
  /// The source of `sizes[key]` for a torch.Size `sizes`: one dim, or for a
  /// slice, per-item sources in `items`.
  static std::string sizeItemSource(const Slot &sizes, PyObject *key,
                                    ItemSources &items) {
    std::string tensor = sizes.source.substr(0, sizes.source.size() - 7);
    Py_ssize_t rank = PyTuple_GET_SIZE(sizes.value);
    if (PyLong_CheckExact(key)) {
      long long d = PyLong_AsLongLong(key);
      return d >= -rank && d < rank ? sizeDimSource(tensor, d, rank)
                                    : std::string();
    }
    Py_ssize_t start, stop, step;
    if (PySlice_Check(key) && PySlice_Unpack(key, &start, &stop, &step) == 0) {
      PySlice_AdjustIndices(rank, &start, &stop, step);
      auto list = std::make_shared<std::vector<std::string>>();
      for (Py_ssize_t i = start; step > 0 ? i < stop : i > stop; i += step)
        list->push_back(sizeDimSource(tensor, i, rank));
      items = std::move(list);
    }
    PyErr_Clear();
    return {};
  }
  /// The source of a call's result when it reads sizes: `t.size()`,
  /// `t.size(d)`, `len(t)` (its first dim) and `t.numel()` (untracked).
  std::string sizeCallSource(PyObject *callable, const std::string &callableSrc,
                             const std::vector<PyObject *> &args,
                             const std::vector<std::string> &sources,
                             PyObject *kw, PyObject *result) {
    if (kw || !PyCFunction_Check(callable))
      return {};
    PyObject *self = PyCFunction_GET_SELF(callable);
    const char *name = cFunctionName(callable);
    if (PyLong_CheckExact(result) && args.size() == 1 && isTensor(args[0]) &&
        isBuiltinsModule(self) && std::strcmp(name, "len") == 0)
      return tensorSource(args[0], sources[0]) + ".size()[0]";
    if (!isTensor(self))
      return {};
    bool numel = std::strcmp(name, "numel") == 0;
    if (!numel && std::strcmp(name, "size") != 0)
      return {};
    // `L['x'].size` names its tensor; a method reached another way does not.
    std::string suffix = numel ? ".numel" : ".size";
    bool named = callableSrc.size() > suffix.size() &&
                 callableSrc.compare(callableSrc.size() - suffix.size(),
                                     suffix.size(), suffix) == 0;
    std::string tensor = tensorSource(
        self, named ? callableSrc.substr(0, callableSrc.size() - suffix.size())
                    : std::string());
    if (numel)
      return PyLong_CheckExact(result) && args.empty() ? tensor + ".numel()"
                                                       : std::string();
    if (args.empty() && PyTuple_Check(result))
      return tensor + ".size()";
    if (args.size() != 1 || !PyLong_CheckExact(args[0]) ||
        !PyLong_CheckExact(result))
      return {};
    PyObject *shape = PyObject_GetAttrString(self, "shape");
    if (!shape) {
      PyErr_Clear();
      return {};
    }
    Py_ssize_t rank = PyTuple_Check(shape) ? PyTuple_GET_SIZE(shape) : -1;
    Py_DECREF(shape);
    return rank < 0 ? std::string()
                    : sizeDimSource(tensor, PyLong_AsLongLong(args[0]), rank);
  }
  /// A builtin torch function or Tensor method: it maps to dispatcher calls
  /// directly, with no Python in between that could branch on its arguments.
  bool isAtenCallable(PyObject *callable) {
    if (!PyCFunction_Check(callable))
      return false;
    if (isTensor(PyCFunction_GET_SELF(callable)))
      return true;
    PyObject *mod = reinterpret_cast<PyCFunctionObject *>(callable)->m_module;
    return mod && PyUnicode_Check(mod) &&
           PyUnicode_CompareWithASCIIString(mod, "torch") == 0;
  }
  /// A graph break here; `escaping` is the tensor whose value Python reads
  /// (the graph so far outputs it). False, with the error set, when the
  /// region refuses to break (fullgraph=True): the breaking instruction must
  /// not run, so its side effects never happen.
  bool breakHere(const char *reason, bool escape,
                 PyObject *escaping = nullptr) {
    PyObject *tracker = regionState().tracker;
    if (!tracker)
      return true;
    PyObject *r = PyObject_CallMethod(tracker, "on_break", "sOiiO", reason,
                                      co->co_filename, line(), int(escape),
                                      escaping ? escaping : Py_None);
    Py_XDECREF(r);
    return r != nullptr;
  }
  PyObject *callTracker(const char *method, PyObject *args) {
    PyObject *r = callTrackerForResult(method, args);
    Py_XDECREF(r);
    return r;
  }
  /// As callTracker, returning the tracker's result (a new reference, or
  /// nullptr with the error reported as unraisable).
  PyObject *callTrackerForResult(const char *method, PyObject *args) {
    PyObject *tracker = regionState().tracker;
    if (!tracker || !args) {
      Py_XDECREF(args);
      return nullptr;
    }
    // A notification after a failed call: the program's exception is kept
    // out of the tracker's way and restored untouched.
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    Untraced untraced;
    // A program at the recursion limit still has its calls recorded.
    constexpr int kTrackerHeadroom = 50;
    dynoc_recursion_headroom(kTrackerHeadroom);
    PyObject *m = PyObject_GetAttrString(tracker, method);
    PyObject *r = m ? PyObject_Call(m, args, nullptr) : nullptr;
    dynoc_recursion_headroom(-kTrackerHeadroom);
    Py_XDECREF(m);
    Py_DECREF(args);
    if (!r)
      PyErr_WriteUnraisable(tracker);
    if (type)
      PyErr_Restore(type, value, tb);
    return r;
  }
  /// Truth of a branch condition: a tensor here is a graph break; a Python
  /// value with a known source becomes a guard.
  int truth(const Slot &s);
  PyObject *call(int nargs);
  PyObject *callFunctionEx(bool hasKwargs);
  /// The source of item `key` of the `**` mapping `kwargs` passed on: the
  /// keyword argument's own (a forwarded **kwargs), else by subscript.
  std::string keywordSource(const Slot &kwargs, PyObject *key);
  /// DICT_MERGE of `merged` into the `**` mapping being built, `target`:
  /// the item sources it passes on.
  void mergeKeywordSources(Slot &target, const Slot &merged);
  PyObject *invoke(PyObject *callable, const std::string &callableSrc,
                   std::vector<PyObject *> &args,
                   std::vector<std::string> &sources, PyObject *kw,
                   std::vector<std::string> varargSources = {});
  PyObject *invokeSpecial(PyObject *kind, PyObject *callable,
                          std::vector<PyObject *> &args, PyObject *kw);
  PyObject *callFollowed(PyObject *func, const std::string &funcSrc,
                         std::vector<PyObject *> &args,
                         std::vector<std::string> &sources, PyObject *kwnames,
                         std::vector<std::string> varargSources);
  PyObject *callNative(PyObject *callable, std::vector<PyObject *> &args,
                       PyObject *kw) {
    Passthrough p;
    Py_ssize_t nkw = kw ? PyTuple_GET_SIZE(kw) : 0;
    // f(*t) of a tuple, passed on unchanged: CPython hands a native callee
    // that very tuple (one with tp_call may return or keep it).
    if (!kw && spreadTuple &&
        Py_ssize_t(args.size()) == PyTuple_GET_SIZE(spreadTuple) &&
        std::equal(args.begin(), args.end(), &PyTuple_GET_ITEM(spreadTuple, 0)))
      return PyObject_Call(callable, spreadTuple, nullptr);
    return PyObject_Vectorcall(callable, args.data(), args.size() - nkw, kw);
  }
  /// The exact tuple a CALL_FUNCTION_EX without keywords spreads, while it
  /// runs (borrowed).
  PyObject *spreadTuple = nullptr;
  PyObject *zeroArgSuper();
  /// The source of the global `name` of this frame: `G['name']` in the
  /// region's own module, `___G('pkg.mod')['name']` in a module a followed
  /// call went to (guards evaluate in the region's globals).
  std::string globalSource(PyObject *name) {
    std::string key = std::string("['") + PyUnicode_AsUTF8(name) + "']";
    if (f.globals == regionState().rootGlobals)
      return "G" + key;
    PyObject *mod = PyDict_GetItemString(f.globals, "__name__");
    if (!mod || !PyUnicode_Check(mod))
      return {};
    return std::string("___G('") + PyUnicode_AsUTF8(mod) + "')" + key;
  }
  /// A global or builtin, as a new reference; null with NameError when
  /// neither has it.
  PyObject *lookupGlobal(PyObject *name, std::string &src) {
    if (!PyDict_CheckExact(f.globals) || !PyDict_CheckExact(f.builtins)) {
      // CPython's slow path: mappings' own lookup (a dict subclass's
      // __missing__ runs).
      PyObject *r = PyObject_GetItem(f.globals, name);
      if (r) {
        src = globalSource(name);
        return r;
      }
      if (!PyErr_ExceptionMatches(PyExc_KeyError))
        return nullptr;
      PyErr_Clear();
      r = PyObject_GetItem(f.builtins, name);
      if (!r && PyErr_ExceptionMatches(PyExc_KeyError)) {
        PyErr_Clear();
        raiseNameError("name '%U' is not defined", name);
      }
      return r;
    }
    PyObject *r = PyDict_GetItemWithError(f.globals, name);
    if (r)
      src = globalSource(name);
    else if (!PyErr_Occurred())
      r = PyDict_GetItemWithError(f.builtins, name);
    if (!r && !PyErr_Occurred())
      raiseNameError("name '%U' is not defined", name);
    Py_XINCREF(r);
    return r;
  }
  PyObject *makeFunction(int flags);
  /// SET_FUNCTION_ATTRIBUTE (3.13): [value, function] -> [function].
  bool setFunctionAttribute(int flag);
  int raise(int oparg);
  /// LOAD_DEREF/DELETE_DEREF of an empty cell: CPython's error for a cell
  /// of this frame (UnboundLocalError) or a free variable (NameError).
  void unboundDeref(int oparg) {
    constexpr char kFastFree = char(0x80); // CO_FAST_FREE
    PyObject *name = PyTuple_GET_ITEM(co->co_localsplusnames, oparg);
    if (PyBytes_AS_STRING(co->co_localspluskinds)[oparg] & kFastFree)
      raiseNameError("cannot access free variable '%U' where it is not "
                     "associated with a value in enclosing scope",
                     name);
    else
      PyErr_Format(PyExc_UnboundLocalError,
                   "cannot access local variable '%U' where it is not "
                   "associated with a value",
                   name);
  }

  const dynoc_frame_view &f;
  PyCodeObject *co;
  PendingCall call_;
  PyObject *code = nullptr;
  std::vector<Slot> locals, stack;
  PyObject *kwnames = nullptr; // borrowed from co_consts
  /// Tensor sizes inside tuple/list arguments of the call being made (set by
  /// call(), read by invoke()'s native path).
  std::vector<std::pair<PyObject *, std::string>> pendingItemSizes;
  template <class It> void noteItemSizes(It begin, It end) {
    pendingItemSizes.clear();
    for (It slot = begin; slot != end; ++slot) {
      PyObject *v = slot->value;
      if (!v || !(PyTuple_Check(v) || PyList_Check(v)))
        continue;
      for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(v); ++k) {
        PyObject *item = PySequence_Fast_GET_ITEM(v, k);
        std::string src = itemSource(*slot, k);
        if (isSizeInt(item, src))
          pendingItemSizes.push_back({item, src});
      }
    }
  }
  std::string callSource; // the last CALL's result source (sizes)
  ItemSources callItems;  // and its items' (a followed call's tuple of sizes)
  void noteReturnedSizes(const Slot &s);
  bool takeReturnedSizes(PyObject *result, PyCodeObject *callee);
  Py_ssize_t pc = 0;
  /// This frame becomes the region's top call (RegionState::topCall) for a
  /// CALL of `nargs` arguments or (nargs 0, topCondition set after) a jump,
  /// when it is the region function's own frame and the tracker resumes.
  bool enterTop(int nargs, PyObject *kwnames);
  void leaveTop();
  // The CALL or jump this frame is in while it is the region's top call.
  int topNargs = 0;
  PyObject *topKwnames = nullptr;   // borrowed
  PyObject *topMark = nullptr;      // the tracker's call_mark() at the call
  PyObject *topCondition = nullptr; // borrowed: a jump's condition
  Py_ssize_t topJumpTarget = 0;     // where the jump goes, and where it
  Py_ssize_t topJumpNext = 0;       // falls through (instruction indices)
  bool topJumpIfTrue = false;
  /// Is the instruction after this one (pc) POP_JUMP_IF_FALSE/TRUE? Then
  /// sets topJumpTarget/Next/IfTrue from it (3.13's TO_BOOL before a jump).
  bool nextIsConditionalJump();
  Py_ssize_t lasti = -1;  // set by RERAISE: the offset an exception came from
  bool reraising = false; // RERAISE adds no traceback entry
};

} // namespace dynoc::capture

#endif // DYNOC_CAPTURE_EVALUATOR_INTERNAL_H
