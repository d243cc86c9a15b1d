//===- model_abi.h - the C ABI a dynoc model .so exports --------*- C -*-===//
//
// Written by the code generator, read by libdynrt. Bump DYNOC_MODEL_ABI_VERSION
// on any change.
//
//   const char *dynoc_model_manifest(void);   // JSON, docs/manifest.md
//   int dynoc_model_abi_version(void);
//   const void *dynoc_model_weights(unsigned long *size);
//       only with embedded weights: the safetensors bytes linked into the .so.
//
// and per graph (names from the manifest's `shapes_symbol` and `symbol`):
//
//   const char *<shapes>(const int64_t *const *in_shapes,
//                        int64_t *const *out_shapes, int64_t *workspace_bytes);
//       Resolves the graph's dynamic dims from the user inputs' shapes
//       (in_shapes[i] points at input i's dims), writes each output's dims and
//       the workspace its intermediates need. Returns NULL, or a static
//       message naming the op and location whose shapes do not fit.
//   int <run>(const int64_t *const *in_shapes, void *const *args,
//             void *const *outputs, void *workspace);
//       args: one data pointer per graph argument (user inputs, then weights,
//       in the manifest's order); outputs: contiguous buffers of the shapes
//       <shapes> gave; workspace: at least workspace_bytes, 64-byte aligned.
//       Returns 0, or nonzero if a kernel failed
//       (DYNOC_RUN_DIVISION_BY_ZERO: an integer division or remainder by
//       zero, where ATen raises ZeroDivisionError; no version change). Reentrant: calls with
//       different workspaces may run at the same time.
//
// A graph may have a prepare function (the manifest's `prepare` object, same
// two signatures, no user inputs): the runtime runs it once at load, on the
// weights, and passes its outputs as the graph's arguments of kind "prepared".
// Version 3 added it.
//
// Version 4 added device models (the manifest's "device" is not "cpu"): every
// pointer a graph function takes is device memory, <run> takes the stream
// its kernels are queued on as a last argument (dynoc_graph_run_on_fn), and
// the .so exports
//
//   const dynoc_device_api *dynoc_model_device(void);
//
// through which the runtime allocates, copies and captures CUDA graphs (so
// libdynrt itself links no device library). Its functions return 0 or a
// nonzero code with a message in last_error(). A CPU model of version 3 is
// still read.
//
// A model that keeps data derived from its weights between runs (the CPU
// target's convolutions keep them packed in oneDNN's layout) exports
//
//   void dynoc_model_weight_changed(const void *weight);
//
// which the runtime calls, holding the lock its runs over written weights
// take, after it writes the weight data at `weight` (a training step's
// write-back, a caller's dynrt_model_write_weight): the model derives its
// data again before the next run. Optional; no version change.
//
// Profiling (dynrt_profile_start, DYNOC_PROFILE): a model exports
//
//   void dynoc_model_set_profiler(const dynoc_profiler_hooks *hooks);
//
// Each graph function reads the hooks once per run (NULL: none, the
// default) and calls begin/end around each kernel or library call with the
// call's index in the graph's manifest entry "kernels" (docs/manifest.md) and
// the stream it queues on (NULL on the CPU). The runtime sets the hooks
// while a trace is recorded and clears them before it frees them. Optional
// (models built before it have none); no version change.
//
// Collectives (a graph captured from a torch.distributed program; the
// manifest's "process_groups"): the model exports
//
//   int dynoc_bind_collectives(const dynoc_collectives *table);
//
// through which libdynrt gives it the caller's communicator
// (dynrt_model_set_communicator) as functions over flat buffers on the
// model's device. Returns 0, or the collectives ABI version the model takes
// where `table` has another. Only models with collectives export it; no
// version change.
//
//===----------------------------------------------------------------------===//
#ifndef DYNRT_MODEL_ABI_H
#define DYNRT_MODEL_ABI_H

#include <stdint.h>

#define DYNOC_MODEL_ABI_VERSION 4
#define DYNOC_MODEL_ABI_VERSION_CPU 3
#define DYNOC_MODEL_MANIFEST_SYMBOL "dynoc_model_manifest"
#define DYNOC_MODEL_ABI_VERSION_SYMBOL "dynoc_model_abi_version"
#define DYNOC_MODEL_WEIGHTS_SYMBOL "dynoc_model_weights"
#define DYNOC_MODEL_DEVICE_SYMBOL "dynoc_model_device"
#define DYNOC_MODEL_WEIGHT_CHANGED_SYMBOL "dynoc_model_weight_changed"
#define DYNOC_RUN_DIVISION_BY_ZERO 602

#define DYNOC_DEVICE_API_VERSION 1
enum dynoc_copy_kind {
  DYNOC_COPY_HOST_TO_DEVICE = 1,
  DYNOC_COPY_DEVICE_TO_HOST = 2,
  DYNOC_COPY_DEVICE_TO_DEVICE = 3,
};
typedef struct dynoc_device_api {
  int version;      // DYNOC_DEVICE_API_VERSION
  const char *name; // "cuda"
  // Binds the calling thread to `device` and makes the library handles.
  int (*init)(int device);
  int (*current_device)(int *device);
  int (*alloc)(void **ptr, uint64_t bytes);
  int (*release)(void *ptr);
  // Queued on `stream` (NULL: the default stream); kind: dynoc_copy_kind.
  int (*copy)(void *dst, const void *src, uint64_t bytes, int kind,
              void *stream);
  int (*sync)(void *stream);
  // A stream that does not synchronize with the legacy default stream (CUDA
  // graphs are captured on one: the caller's may be the default stream).
  int (*stream_create)(void **stream);
  int (*stream_release)(void *stream);
  // CUDA graphs: what `stream` queues between begin and end is captured
  // into an executable graph, launched later as one unit.
  int (*graph_begin)(void *stream);
  int (*graph_end)(void *stream, void **exec);
  int (*graph_launch)(void *exec, void *stream);
  int (*graph_release)(void *exec);
  // The device `ptr` is on, or -1 for host memory.
  int (*pointer_device)(const void *ptr, int *device);
  // This thread's message for the last nonzero code.
  const char *(*last_error)(void);
} dynoc_device_api;

#define DYNOC_MODEL_SET_PROFILER_SYMBOL "dynoc_model_set_profiler"
// The generated code declares the same layout (ModuleEmitter.cpp).
typedef struct dynoc_profiler_hooks {
  void *user;
  void (*begin)(void *user, int kernel, void *stream);
  void (*end)(void *user, int kernel, void *stream);
} dynoc_profiler_hooks;
typedef void (*dynoc_model_set_profiler_fn)(const dynoc_profiler_hooks *hooks);

#define DYNOC_BIND_COLLECTIVES_SYMBOL "dynoc_bind_collectives"
#define DYNOC_COLLECTIVES_ABI_VERSION 2
enum dynoc_collective_kind {
  DYNOC_ALL_REDUCE = 0,
  DYNOC_ALL_GATHER = 1,
  DYNOC_REDUCE_SCATTER = 2,
  DYNOC_BROADCAST = 3,
};
typedef struct dynoc_collectives {
  int abi; // DYNOC_COLLECTIVES_ABI_VERSION
  void *self;
  // Starts collective `kind` (dynoc_collective_kind) over process group
  // `group` on elements of DLPack type (code, bits): in place on `out`
  // (outCount elements; all-reduce and broadcast, whose input the model
  // copied there), or from `in` (inCount) into `out` (all-gather,
  // reduce-scatter). reduceOp: dynrt_reduce_op_t; root: broadcast's source
  // rank in the group. `stream`: the CUDA stream the model's work is queued
  // on (NULL on the CPU); the collective follows that work. Returns 0 with
  // *work set (NULL: completed), or a nonzero code (the runtime keeps the
  // message).
  int (*start)(void *self, int kind, const char *group, const void *in,
               void *out, int64_t inCount, int64_t outCount, int dtypeCode,
               int dtypeBits, int reduceOp, int64_t root, void *stream,
               void **work);
  // The model's later work on `stream` sees the collective's result.
  int (*wait)(void *self, void *work, void *stream);
  // all_to_all_single: inCounts[i] elements of `in` (in order) go to rank i
  // of the `n` ranks, outCounts[i] elements from rank i fill `out` in order.
  int (*all_to_all)(void *self, const char *group, const void *in, void *out,
                    const int64_t *inCounts, const int64_t *outCounts, int n,
                    int dtypeCode, int dtypeBits, void *stream, void **work);
} dynoc_collectives;
typedef int (*dynoc_bind_collectives_fn)(const dynoc_collectives *table);

typedef const char *(*dynoc_model_manifest_fn)(void);
typedef int (*dynoc_model_abi_version_fn)(void);
typedef const void *(*dynoc_model_weights_fn)(unsigned long *size);
typedef const char *(*dynoc_graph_shapes_fn)(const int64_t *const *in_shapes,
                                             int64_t *const *out_shapes,
                                             int64_t *workspace_bytes);
typedef int (*dynoc_graph_run_fn)(const int64_t *const *in_shapes,
                                  void *const *args, void *const *outputs,
                                  void *workspace);
typedef int (*dynoc_graph_run_on_fn)(const int64_t *const *in_shapes,
                                     void *const *args, void *const *outputs,
                                     void *workspace, void *stream);
typedef const dynoc_device_api *(*dynoc_model_device_fn)(void);
typedef void (*dynoc_model_weight_changed_fn)(const void *weight);

#endif // DYNRT_MODEL_ABI_H
