//===- dynrt.h - the dynoc runtime C API -------------------------*- C -*-===//
//
// libdynrt loads a model built by `dynoc build` (a .so with its manifest
// embedded, plus its weights) and runs it. Tensors cross the API as DLPack
// tensors.
//
// Conventions (after IREE's runtime):
//   - every fallible call returns a `dynrt_status_t*`; NULL means success,
//   anything
//     else is an error the caller owns and frees with dynrt_status_free;
//   - results come back through `out_` parameters;
//   - nothing throws or aborts across this API.
//
//===----------------------------------------------------------------------===//
#ifndef DYNRT_DYNRT_H
#define DYNRT_DYNRT_H

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DYNRT_EXPORT __attribute__((visibility("default")))

//===----------------------------------------------------------------------===//
// dynrt_status_t
//===----------------------------------------------------------------------===//

typedef enum dynrt_status_code_e {
  DYNRT_OK = 0,
  DYNRT_INVALID_ARGUMENT = 1, // bad input from the caller (a guard failed, ...)
  DYNRT_NOT_FOUND = 2,        // a file or symbol is missing
  DYNRT_DATA_LOSS = 3,        // a model or weights file is corrupted
  DYNRT_UNIMPLEMENTED = 4,    // the model needs something this runtime lacks
  DYNRT_INTERNAL = 5,         // a kernel failed
  DYNRT_RESOURCE_EXHAUSTED = 6,
  DYNRT_FAILED_PRECONDITION = 7, // the call needs something set up first
                                 // (a communicator), or the ranks disagree
  DYNRT_DEADLINE_EXCEEDED = 8,   // a collective or a rendezvous timed out
} dynrt_status_code_t;

// An error. Immutable; owned by whoever received it.
typedef struct dynrt_status_t dynrt_status_t;

DYNRT_EXPORT dynrt_status_code_t
dynrt_status_code(const dynrt_status_t *status);
// The message, one line naming the thing and the place. Valid until freed.
DYNRT_EXPORT const char *dynrt_status_message(const dynrt_status_t *status);
DYNRT_EXPORT void dynrt_status_free(dynrt_status_t *status);

//===----------------------------------------------------------------------===//
// dynrt_model_t
//===----------------------------------------------------------------------===//

// A loaded model: its code, manifest and weights. Immutable after load; any
// number of threads may call dynrt_model_run on one model at the same time.
typedef struct dynrt_model_t dynrt_model_t;

// Loads the model at `path` (a .so from `dynoc build`) and its weights (the
// sidecar
// `<stem>.weights.safetensors` beside it unless embedded). Validates the
// manifest and that the weights match it.
DYNRT_EXPORT dynrt_status_t *dynrt_model_load(const char *path,
                                              dynrt_model_t **out_model);
// As dynrt_model_load, with the weights read from the safetensors file
// `weights_path` instead of the sidecar or those linked into the .so (the same
// model with fine-tuned weights): each weight the graphs read must be there
// with the manifest's dtype and shape (else DYNRT_DATA_LOSS naming it), and a
// tensor the model does not read is DYNRT_INVALID_ARGUMENT naming it.
DYNRT_EXPORT dynrt_status_t *
dynrt_model_load_with_weights(const char *path, const char *weights_path,
                              dynrt_model_t **out_model);

// Loads a model from the `size` bytes at `data` (a .so from dynoc build, read
// from an archive or received over the network); the bytes may be freed once
// it returns. Its weights come from `weights_path` (as above) or, if NULL,
// from the .so (dynoc build --embed-weights): a model with a sidecar has no
// file beside it to read one from, which is DYNRT_NOT_FOUND. Messages name
// the model "<memory>".
DYNRT_EXPORT dynrt_status_t *
dynrt_model_load_from_memory(const void *data, size_t size,
                             const char *weights_path,
                             dynrt_model_t **out_model);
DYNRT_EXPORT void dynrt_model_release(dynrt_model_t *model);

// The embedded manifest, as JSON text. Valid while the model is loaded.
DYNRT_EXPORT const char *dynrt_model_manifest(const dynrt_model_t *model);

// Number of user inputs and outputs of the model's entry (all variants agree).
DYNRT_EXPORT size_t dynrt_model_num_inputs(const dynrt_model_t *model);
DYNRT_EXPORT size_t dynrt_model_num_outputs(const dynrt_model_t *model);

// Runs the model on `inputs` (user inputs in captured order, on the model's
// device; weights come from the artifact, uploaded once at load). Picks the
// first variant whose guards pass; if none does, the error names the failing
// guard in the manifest's words. Dynamic dims are resolved from the input
// sizes. On success `outputs[i]` receive tensors allocated by the runtime; the
// caller calls each one's deleter. Thread-safe; allocates a workspace per call
// (a context reuses one).
DYNRT_EXPORT dynrt_status_t *dynrt_model_run(dynrt_model_t *model,
                                             const DLTensor *const *inputs,
                                             size_t num_inputs,
                                             DLManagedTensor **outputs,
                                             size_t num_outputs);

//===----------------------------------------------------------------------===//
// dynrt_context_t
//===----------------------------------------------------------------------===//

// Per-caller state for running one model on one device: the workspace that
// holds the model's intermediates (sized by its memory plan, grown on demand
// for larger dynamic shapes) and the device stream. A context is used by one
// thread at a time; give each serving thread its own. The model must outlive
// its contexts.
typedef struct dynrt_context_t dynrt_context_t;

// Creates a context for `model` on `device`. `stream` is the device stream
// kernels are queued on (a cudaStream_t for CUDA devices); NULL for the CPU.
// A device the model was not built for is DYNRT_UNIMPLEMENTED.
DYNRT_EXPORT dynrt_status_t *
dynrt_context_create(dynrt_model_t *model, DLDevice device, void *stream,
                     dynrt_context_t **out_context);
DYNRT_EXPORT void dynrt_context_release(dynrt_context_t *context);

// As dynrt_model_run, reusing the context's workspace.
DYNRT_EXPORT dynrt_status_t *dynrt_context_run(dynrt_context_t *context,
                                               const DLTensor *const *inputs,
                                               size_t num_inputs,
                                               DLManagedTensor **outputs,
                                               size_t num_outputs);

// Runs into caller-provided output buffers: each `outputs[i]` must be a
// contiguous tensor of the output's dtype, on the context's device, with the
// shape the model computes for these inputs (see dynrt_context_output_shapes);
// anything else is DYNRT_INVALID_ARGUMENT naming the output.
DYNRT_EXPORT dynrt_status_t *
dynrt_context_run_into(dynrt_context_t *context, const DLTensor *const *inputs,
                       size_t num_inputs, const DLTensor *const *outputs,
                       size_t num_outputs);

// The shapes the model's outputs have for `inputs` (guards checked, dims
// resolved), without running it. `shapes[i]` must have room for output i's
// rank (dynrt_model_output_ndim).
DYNRT_EXPORT dynrt_status_t *
dynrt_context_output_shapes(dynrt_context_t *context,
                            const DLTensor *const *inputs, size_t num_inputs,
                            int64_t *const *shapes, size_t num_outputs);

// Device models: whether the context captures its calls into CUDA graphs
// (on by default, unless DYNRT_CUDA_GRAPHS=0): the first call of each
// (variant, input shapes) runs directly, the second is captured, later ones
// replay the graph on the context's stream. A no-op for CPU models.
DYNRT_EXPORT dynrt_status_t *
dynrt_context_set_cuda_graphs(dynrt_context_t *context, int enabled);

// The device the model runs on: {kDLCPU, 0}, or {kDLCUDA, ordinal} for a
// model built with --target=cuda (the device current at load). Its inputs
// and outputs live there; a context must be created on it.
DYNRT_EXPORT DLDevice dynrt_model_device(const dynrt_model_t *model);

// The rank of output `index` (all variants agree), or -1 if out of range.
DYNRT_EXPORT int32_t dynrt_model_output_ndim(const dynrt_model_t *model,
                                             size_t index);

//===----------------------------------------------------------------------===//
// Weights: parameters, optimizer state, learning rates, checkpoints
//===----------------------------------------------------------------------===//

// The tensors a model's graphs read besides their inputs (the manifest's
// parameter, buffer and constant inputs: a step model's parameters, its
// optimizer's state and learning rates `<opt>.param_groups[G]['lr']`), by
// manifest name. A weight's current value is the model's own copy once a
// graph changed it in place (a training step) or the caller wrote it, and
// the weights file's otherwise. Writes and checkpoint loads must not run
// while another thread runs the model; reads and saves may.

// How many weights the model has; dynrt_model_weight_name(model, i) names
// weight i (NULL out of range; valid while the model is loaded).
DYNRT_EXPORT size_t dynrt_model_num_weights(const dynrt_model_t *model);
DYNRT_EXPORT const char *dynrt_model_weight_name(const dynrt_model_t *model,
                                                 size_t index);

// A copy of weight `name`'s current value, on the model's device; the
// caller calls its deleter. An unknown name is DYNRT_NOT_FOUND.
DYNRT_EXPORT dynrt_status_t *dynrt_model_read_weight(dynrt_model_t *model,
                                                     const char *name,
                                                     DLManagedTensor **out);

// Sets weight `name` to `value` (its dtype and shape, contiguous, in host
// memory or on the model's device) for every later run: a new learning rate,
// a parameter fine-tuned elsewhere. A weight the model precomputed something
// from at load has that recomputed.
DYNRT_EXPORT dynrt_status_t *dynrt_model_write_weight(dynrt_model_t *model,
                                                      const char *name,
                                                      const DLTensor *value);

// Makes weight `name` live in the caller's memory, `value` (its dtype and
// shape, contiguous, on the model's device), without a copy: later runs read
// it there and a graph that changes the weight in place (a BatchNorm's running
// statistics) writes it there. The caller keeps that memory alive and in place
// until the model is released or the weight is bound elsewhere, and calls this
// again after changing the data itself, so that what the model precomputed
// from the weight at load is recomputed. dynoc.compile binds a module's
// parameters and buffers this way.
DYNRT_EXPORT dynrt_status_t *dynrt_model_bind_weight(dynrt_model_t *model,
                                                     const char *name,
                                                     const DLTensor *value);

// A checkpoint: every weight's current value, written to the safetensors
// file `path` (through a temporary file renamed into place).
DYNRT_EXPORT dynrt_status_t *dynrt_model_save_weights(dynrt_model_t *model,
                                                      const char *path);

// Restores a checkpoint: each tensor of the safetensors file `path` must be
// a weight of the model with its dtype and shape (else
// DYNRT_INVALID_ARGUMENT naming it, and nothing is written); weights the file
// lacks keep their values.
DYNRT_EXPORT dynrt_status_t *dynrt_model_load_weights(dynrt_model_t *model,
                                                      const char *path);

//===----------------------------------------------------------------------===//
// Functions: several graphs in one model (a forward, its backward, an update)
//===----------------------------------------------------------------------===//

// `dynoc build A.mlir B.mlir ...` bundles graph files into one model, each a
// function named after its graph: a training capture's forward (graph_0),
// its backward (graph_1) and the optimizer's update (graph_2). They share the
// model's weights by name, so the update's write-backs are what the next
// forward reads. The model's first function is the one dynrt_model_run and
// dynrt_context_run run; a model built from one graph file or capture
// directory has one function, named "".
//
// A function's inputs named `graph_N.output_K` (what a backward reads of its
// forward, the gradients an update reads) are fed by the context from
// output K of function graph_N's last call on it; the caller gives the
// others (region inputs, the gradient seeds `grad(graph_N.output_K)`), in
// the function's input order.

// How many functions the model has; dynrt_model_function_name(model, i)
// names function i in build order (NULL out of range; valid while the
// model is loaded).
DYNRT_EXPORT size_t dynrt_model_num_functions(const dynrt_model_t *model);
DYNRT_EXPORT const char *dynrt_model_function_name(const dynrt_model_t *model,
                                                   size_t index);

// How many inputs the caller gives `function` and how many outputs it has;
// an unknown function is DYNRT_NOT_FOUND naming the model's functions.
DYNRT_EXPORT dynrt_status_t *
dynrt_model_function_arity(const dynrt_model_t *model, const char *function,
                           size_t *num_inputs, size_t *num_outputs);
// The manifest name of the caller's input `index` of `function` (NULL out
// of range; valid while the model is loaded).
DYNRT_EXPORT const char *
dynrt_model_function_input_name(const dynrt_model_t *model,
                                const char *function, size_t index);

// The model a context runs.
DYNRT_EXPORT dynrt_model_t *dynrt_context_model(dynrt_context_t *context);

// Runs `function` on the caller's `inputs` and the context's kept outputs of
// the functions it reads. `outputs[i]` receive views of its outputs, which
// the context keeps (for the functions that read them) until the next call
// of `function` on it or its release; NULL with num_outputs 0 returns none.
// A kept output a function needs that no call made yet is
// DYNRT_INVALID_ARGUMENT naming the function to call first.
DYNRT_EXPORT dynrt_status_t *
dynrt_context_call(dynrt_context_t *context, const char *function,
                   const DLTensor *const *inputs, size_t num_inputs,
                   const DLTensor **outputs, size_t num_outputs);

//===----------------------------------------------------------------------===//
// Tensors on a model's device (for callers without a device library of their
// own: a C++ app serving a CUDA model need not link cudart)
//===----------------------------------------------------------------------===//

// A new contiguous tensor of `dtype` and `shape` (its contents undefined) on
// the model's device; the caller calls its deleter while the model is
// loaded. A dtype the runtime does not know is DYNRT_INVALID_ARGUMENT.
DYNRT_EXPORT dynrt_status_t *
dynrt_model_alloc_tensor(dynrt_model_t *model, DLDataType dtype, int32_t ndim,
                         const int64_t *shape, DLManagedTensor **out);

// Copies `src` into `dst`: the same dtype and shape, both contiguous, each in
// host memory or on the model's device. Waits for the copy.
DYNRT_EXPORT dynrt_status_t *dynrt_model_copy_tensor(dynrt_model_t *model,
                                                     const DLTensor *src,
                                                     const DLTensor *dst);

// Waits until the work the context queued on its stream is done (device
// models; a no-op on the CPU, where a run returns when it is done).
DYNRT_EXPORT dynrt_status_t *
dynrt_context_synchronize(dynrt_context_t *context);

//===----------------------------------------------------------------------===//
// Collectives: a model captured from a torch.distributed program runs its
// all-reduces, all-gathers, reduce-scatters and broadcasts through a
// communicator its caller provides (docs/distributed.md)
//===----------------------------------------------------------------------===//

typedef enum {
  DYNRT_REDUCE_SUM = 0,
  DYNRT_REDUCE_AVG = 1,
  DYNRT_REDUCE_PRODUCT = 2,
  DYNRT_REDUCE_MIN = 3,
  DYNRT_REDUCE_MAX = 4,
} dynrt_reduce_op_t;

#define DYNRT_COMMUNICATOR_ABI_VERSION 3

// The caller's communicator: function pointers over DLPack tensors on the
// model's device (contiguous, 1-D), each returning 0 or non-zero (then
// `last_error` says why). A collective may return before it completes,
// setting *work to a handle that `wait` waits for (NULL: completed). `group`
// is the process group's name as torch names it ("0" for the default group).
// `stream` is the CUDA stream (cudaStream_t) the model queues its kernels on,
// NULL on the CPU: the collective must read its input only after the work
// queued on `stream` before the call, and after `wait` returns, work queued
// on `stream` must see its result. A communicator that runs on a stream of
// its own orders them with events (no host wait: NCCL through
// torch.distributed does); one may also synchronize `stream` on the host.
// The communicator must outlive the model's runs.
typedef struct dynrt_communicator {
  int abi_version; // DYNRT_COMMUNICATOR_ABI_VERSION
  void *self;
  // The number of ranks in `group` and this process's rank in it.
  int (*group_size)(void *self, const char *group, int *size, int *rank);
  int (*all_reduce)(void *self, const char *group, DLTensor *tensor,
                    dynrt_reduce_op_t op, void *stream, void **work);
  // `output` is the ranks' `input`s concatenated, in rank order.
  int (*all_gather)(void *self, const char *group, const DLTensor *input,
                    DLTensor *output, void *stream, void **work);
  // `output` is this rank's slice of the reduction of the ranks' `input`s.
  int (*reduce_scatter)(void *self, const char *group, const DLTensor *input,
                        DLTensor *output, dynrt_reduce_op_t op, void *stream,
                        void **work);
  // `src` is a rank of `group`.
  int (*broadcast)(void *self, const char *group, DLTensor *tensor, int src,
                   void *stream, void **work);
  int (*wait)(void *self, void *work, void *stream);
  // all_to_all_single over 1-D tensors: input_counts[i] elements of `input`
  // (in order) go to rank i, output_counts[i] elements from rank i fill
  // `output` in order (the group's size entries each).
  int (*all_to_all)(void *self, const char *group, const DLTensor *input,
                    DLTensor *output, const int64_t *input_counts,
                    const int64_t *output_counts, void *stream, void **work);
  // The last failure's text (NULL: none).
  const char *(*last_error)(void *self);
  // ABI version 3 (a version 2 communicator ends above; libdynrt takes both).
  // Optional. NULL: a context's CUDA graphs leave out a model's graphs that
  // run collectives (they run directly). Non-NULL says that the collectives
  // and `wait` may be called while `stream` is being captured into a CUDA
  // graph (thread-local capture mode): they are recorded into it, with no
  // host synchronization, and run again at each replay. libdynrt calls it
  // around each replay of such a graph on `stream`: with `queued` 0 before
  // it is launched (non-zero refuses the replay: a communicator that failed
  // must not launch collectives it can no longer run), with `queued` 1 after,
  // so that the communicator bounds the replay's collectives by its timeout
  // as it bounds its own. NCCL's communicator has it.
  int (*graph_replay)(void *self, void *stream, int queued);
} dynrt_communicator_t;

// libdynrt's NCCL communicator, for CUDA models. NCCL (libnccl.so.2, the
// nvidia-nccl-cu13 wheel's) and the CUDA runtime (libcudart.so.13) are loaded
// when one is first made (DYNRT_UNIMPLEMENTED naming the library if they
// cannot be). Every rank of the group calls dynrt_nccl_communicator_create
// with the same `id`, which one rank made with dynrt_nccl_unique_id and
// handed to the others (its own transport: a file, a store, MPI).
// Collectives run on a stream of the communicator's own, ordered against the
// model's stream by events; `timeout_ms` (0: none) bounds the rendezvous
// (DYNRT_DEADLINE_EXCEEDED) and every collective: one not complete by then
// aborts the communicator, and every later collective fails with a message
// naming the one that timed out. The communicator is process group `group`
// (torch's name of the group the graphs use: "0" for the default group).
#define DYNRT_NCCL_UNIQUE_ID_BYTES 128
DYNRT_EXPORT dynrt_status_t *dynrt_nccl_unique_id(uint8_t *id);
DYNRT_EXPORT dynrt_status_t *
dynrt_nccl_communicator_create(const uint8_t *id, int size, int rank,
                               int device, const char *group, int timeout_ms,
                               dynrt_communicator_t **out);
DYNRT_EXPORT void dynrt_nccl_communicator_free(dynrt_communicator_t *c);

// libdynrt's gloo communicator, for CPU models. It lives in a plugin,
// libdynrt_gloo.so (it links gloo, Debian's libgloo0), loaded when one is
// first made: from $DYNRT_GLOO_PLUGIN, beside libdynrt.so, or the library
// path (DYNRT_UNIMPLEMENTED naming what was tried if none loads). Every rank
// of the group calls it with the same `store`: a folder all ranks reach (a
// new, empty one per rendezvous; gloo's file store), and connects to the
// others over TCP at `hostname` (NULL: 127.0.0.1, ranks on one machine).
// Collectives run on the calling thread and have completed when they return.
// `timeout_ms` (0: none) bounds the rendezvous (DYNRT_DEADLINE_EXCEEDED) and
// every collective; after one fails, every later one fails naming it. The
// communicator is process group `group` ("0" for torch's default group).
DYNRT_EXPORT dynrt_status_t *
dynrt_gloo_communicator_create(const char *store, int size, int rank,
                               const char *group, const char *hostname,
                               int timeout_ms, dynrt_communicator_t **out);
DYNRT_EXPORT void dynrt_gloo_communicator_free(dynrt_communicator_t *c);

// Binds `communicator` to the model (NULL unbinds). Before anything runs it
// checks, for every process group the model's graphs use, that the group
// has the number of ranks capture saw (DYNRT_FAILED_PRECONDITION naming the
// group and both sizes), and that every rank of it loaded the same graphs:
// the ranks exchange a digest of the model's graphs (one all-gather, which
// every rank's call takes part in), and a rank whose graphs differ fails
// with DYNRT_FAILED_PRECONDITION naming the ranks that differ, on every rank,
// before any of the graphs' collectives is issued. A model without
// collectives takes any communicator and ignores it. Running a model with
// collectives before one is bound is DYNRT_FAILED_PRECONDITION.
DYNRT_EXPORT dynrt_status_t *
dynrt_model_set_communicator(dynrt_model_t *model,
                             const dynrt_communicator_t *communicator);

//===----------------------------------------------------------------------===//
// Profiling: a Chrome trace / Perfetto file of what the models ran
//===----------------------------------------------------------------------===//

// Starts recording a trace, written to `path` by dynrt_profile_stop (or at
// process exit): one span per model run and, for models built by this
// dynoc, one per kernel or library call inside it, named after its fusion
// group ("fused_add_relu") with the aten ops and their source location as
// arguments (docs/runtime.md, "Profiling"). Process-wide; every loaded model
// and every one loaded later is traced. While recording, device models run
// without CUDA graphs and synchronize after each kernel, so that spans time
// the device. The environment variable DYNOC_PROFILE=path starts a
// recording at the first model load and writes it at exit. A recording
// already under way is DYNRT_INVALID_ARGUMENT naming its file; a directory
// that cannot be written is DYNRT_NOT_FOUND.
DYNRT_EXPORT dynrt_status_t *dynrt_profile_start(const char *path);
// Stops recording and writes the trace (through a temporary file renamed
// into place). No recording under way is DYNRT_INVALID_ARGUMENT.
DYNRT_EXPORT dynrt_status_t *dynrt_profile_stop(void);

//===----------------------------------------------------------------------===//
// Logging
//===----------------------------------------------------------------------===//

typedef enum dynrt_log_level_e {
  DYNRT_LOG_DEBUG = 0,   // variant selection, CUDA graph captures
  DYNRT_LOG_INFO = 1,    // models loaded, checkpoints, profiles written
  DYNRT_LOG_WARNING = 2, // something the caller may want to act on
  DYNRT_LOG_ERROR = 3,   // failures that no status reports (at exit)
  DYNRT_LOG_OFF = 4,
} dynrt_log_level_t;

typedef void (*dynrt_log_callback_t)(void *user, dynrt_log_level_t level,
                                     const char *message);

// Sends libdynrt's log messages at `min_level` and above to `callback`, with
// `user` (process-wide; NULL turns logging off). Messages are one line,
// without a trailing newline; the pointer is valid during the call. Calls
// are serialized, and once this returns the previous callback is no longer
// called. Without a callback libdynrt logs nothing, unless the environment
// variable DYNRT_LOG=debug|info|warning|error sends those levels to stderr.
// Errors are still reported by statuses; the log adds what no status says.
DYNRT_EXPORT void dynrt_set_log_callback(dynrt_log_callback_t callback,
                                         void *user,
                                         dynrt_log_level_t min_level);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // DYNRT_DYNRT_H
