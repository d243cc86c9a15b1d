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
DYNRT_EXPORT void dynrt_model_release(dynrt_model_t *model);

// The embedded manifest, as JSON text. Valid while the model is loaded.
DYNRT_EXPORT const char *dynrt_model_manifest(const dynrt_model_t *model);

// Number of user inputs and outputs of the model's entry (all variants agree).
DYNRT_EXPORT size_t dynrt_model_num_inputs(const dynrt_model_t *model);
DYNRT_EXPORT size_t dynrt_model_num_outputs(const dynrt_model_t *model);

// Runs the model on `inputs` (user inputs in captured order; weights come from
// the artifact). Picks the first variant whose guards pass; if none does, the
// error names the failing guard in the manifest's words. On success
// `outputs[i]` receive tensors allocated by the runtime; the caller calls each
// one's deleter. Thread-safe.
DYNRT_EXPORT dynrt_status_t *dynrt_model_run(dynrt_model_t *model,
                                             const DLTensor *const *inputs,
                                             size_t num_inputs,
                                             DLManagedTensor **outputs,
                                             size_t num_outputs);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // DYNRT_DYNRT_H
