/* Runs a dynoc model on f32 inputs filled with 0.5:
 *   consumer MODEL.so SHAPE...     (a SHAPE is like 3x16, one per user input)
 * and prints each output's shape and the sum of its elements. */
#include "dynrt/dynrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxInputs = 16, kMaxRank = 8 };

static int parseShape(const char *text, int64_t *dims) {
  int ndim = 0;
  for (const char *p = text; *p && ndim < kMaxRank;) {
    char *end;
    long long d = strtoll(p, &end, 10);
    if (end == p || d < 0)
      return -1;
    dims[ndim++] = d;
    p = *end == 'x' ? end + 1 : end;
    if (*end && *end != 'x')
      return -1;
  }
  return ndim;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc - 2 > kMaxInputs) {
    fprintf(stderr, "usage: consumer MODEL.so SHAPE... (e.g. 3x16)\n");
    return 2;
  }
  dynrt_model_t *model = NULL;
  dynrt_status_t *s = dynrt_model_load(argv[1], &model);
  if (s) {
    fprintf(stderr, "%s\n", dynrt_status_message(s));
    dynrt_status_free(s);
    return 1;
  }
  int n = argc - 2;
  DLDevice cpu = {kDLCPU, 0};
  DLTensor tensors[kMaxInputs];
  int64_t shapes[kMaxInputs][kMaxRank];
  const DLTensor *inputs[kMaxInputs];
  for (int i = 0; i < n; ++i) {
    int ndim = parseShape(argv[i + 2], shapes[i]);
    if (ndim <= 0) {
      fprintf(stderr, "consumer: bad shape '%s'\n", argv[i + 2]);
      return 2;
    }
    int64_t count = 1;
    for (int d = 0; d < ndim; ++d)
      count *= shapes[i][d];
    float *data = malloc(sizeof(float) * (size_t)(count ? count : 1));
    for (int64_t k = 0; k < count; ++k)
      data[k] = 0.5f;
    DLTensor t = {data, cpu, ndim, {kDLFloat, 32, 1}, shapes[i], NULL, 0};
    tensors[i] = t;
    inputs[i] = &tensors[i];
  }
  size_t numOutputs = dynrt_model_num_outputs(model);
  DLManagedTensor **outputs = calloc(numOutputs, sizeof(*outputs));
  s = dynrt_model_run(model, inputs, (size_t)n, outputs, numOutputs);
  if (s) {
    fprintf(stderr, "%s\n", dynrt_status_message(s));
    dynrt_status_free(s);
    return 1;
  }
  for (size_t o = 0; o < numOutputs; ++o) {
    DLTensor *t = &outputs[o]->dl_tensor;
    int64_t count = 1;
    printf("output %zu: shape", o);
    for (int d = 0; d < t->ndim; ++d) {
      printf("%s%lld", d ? "x" : " ", (long long)t->shape[d]);
      count *= t->shape[d];
    }
    double sum = 0;
    if (t->dtype.code == kDLFloat && t->dtype.bits == 32)
      for (int64_t k = 0; k < count; ++k)
        sum += ((const float *)t->data)[k];
    printf(" sum %.6f\n", sum);
    outputs[o]->deleter(outputs[o]);
  }
  free(outputs);
  for (int i = 0; i < n; ++i)
    free(tensors[i].data);
  dynrt_model_release(model);
  return 0;
}
