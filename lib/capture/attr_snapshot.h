//===- attr_snapshot.h - what nn.Module attribute reads depended on -*- C++
//-*-===//
//
// A module region's guards read many attributes of its submodules
// (`L['self'].bn1.eps == 1e-05`), the same on every call. An AttrSnapshot
// records what such reads looked at: the instance dicts and the
// _parameters/_buffers/_modules dicts they searched, and the types whose
// attributes they consulted, each with its version tag. While no tag moved,
// the same reads give the same objects, so the guards over them need not
// run again (Dynamo's guards use dict version tags the same way).
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_CAPTURE_ATTR_SNAPSHOT_H
#define DYNOC_CAPTURE_ATTR_SNAPSHOT_H

#include <Python.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace dynoc::capture {

class AttrSnapshot {
public:
  AttrSnapshot() = default;
  AttrSnapshot(const AttrSnapshot &) = delete;
  AttrSnapshot &operator=(const AttrSnapshot &) = delete;
  ~AttrSnapshot() { clear(); }

  /// Forgets everything recorded; the snapshot is cacheable again.
  void clear();

  /// getattr(obj, name), found as attrLookup finds it, with what the read
  /// depended on recorded. A new reference, or null with an error set. A
  /// read whose result depends on more than dicts and types (a property,
  /// a module type with its own __getattr__, any other object) makes the
  /// snapshot not cacheable.
  PyObject *read(PyObject *obj, PyObject *name);

  /// The value read is compared by equality: only an immutable builtin
  /// keeps that compare's result while the dicts stay the same.
  void noteCompared(PyObject *value);

  /// Did every read recorded so far depend only on what was recorded?
  bool cacheable() const { return cacheable_; }

  /// Is every recorded dict and type at the version it was recorded at?
  bool unchanged() const;

  int traverse(visitproc visit, void *arg) const;

private:
  void recordDict(PyObject *dict);
  bool recordType(PyTypeObject *type);

  std::vector<std::pair<PyObject *, uint64_t>> dicts_;
  std::vector<std::pair<PyTypeObject *, unsigned>> types_;
  bool cacheable_ = true;
};

} // namespace dynoc::capture

#endif // DYNOC_CAPTURE_ATTR_SNAPSHOT_H
