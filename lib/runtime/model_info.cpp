//===- model_info.cpp - what a loaded model says about itself -------------===//
//
// The C API's read-only accessors of a loaded model: its manifest, its first
// graph's inputs and outputs, its device. Loading and running are model.cpp's.
//
//===----------------------------------------------------------------------===//
#include "model_internal.h"

extern "C" const char *dynrt_model_manifest(const dynrt_model_t *model) {
  return model ? model->manifestText.c_str() : "";
}

extern "C" size_t dynrt_model_num_inputs(const dynrt_model_t *model) {
  return model ? model->manifest.graphs.front().numUserInputs : 0;
}

extern "C" size_t dynrt_model_num_outputs(const dynrt_model_t *model) {
  return model ? model->manifest.graphs.front().outputs.size() : 0;
}

extern "C" int32_t dynrt_model_output_ndim(const dynrt_model_t *model,
                                           size_t index) {
  if (!model || index >= model->manifest.graphs.front().outputs.size())
    return -1;
  return (int32_t)model->manifest.graphs.front().outputs[index].shape.size();
}

extern "C" DLDevice dynrt_model_device(const dynrt_model_t *model) {
  return model ? model->device.dl() : DLDevice{kDLCPU, 0};
}
