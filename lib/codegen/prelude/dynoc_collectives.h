// dynoc_collectives.h - the collectives of torch.distributed in a generated
// model (lib/codegen/EmitCollectives.cpp), for every target: calls into the
// communicator libdynrt binds through the model's exported
// dynoc_bind_collectives (model_abi.h's dynoc_collectives), on flat buffers
// of the model's device. Each target's core defines copy() and
// collective_stream() (the stream the collective is ordered on: the run's
// CUDA stream, NULL on the CPU); both preludes embed this file after their core
// (lib/codegen_cpu/BUILD.bazel, lib/codegen_cuda/BUILD.bazel).

namespace dynoc_k {

enum CollectiveKind {
  kAllReduce = DYNOC_ALL_REDUCE,
  kAllGather = DYNOC_ALL_GATHER,
  kReduceScatter = DYNOC_REDUCE_SCATTER,
  kBroadcast = DYNOC_BROADCAST
};
constexpr int kCollectivesAbi = DYNOC_COLLECTIVES_ABI_VERSION;
// A graph's collective with no communicator bound (libdynrt refuses to run
// such a model first: this is a second line).
constexpr int kNoCommunicator = 600;

inline const dynoc_collectives *&boundCollectives() {
  static const dynoc_collectives *c = nullptr;
  return c;
}

template <class T> struct DLPackTypeOf;
template <> struct DLPackTypeOf<float> { static constexpr int code = 2, bits = 32; };
template <> struct DLPackTypeOf<double> { static constexpr int code = 2, bits = 64; };
template <> struct DLPackTypeOf<int64_t> { static constexpr int code = 0, bits = 64; };
template <> struct DLPackTypeOf<int32_t> { static constexpr int code = 0, bits = 32; };
template <> struct DLPackTypeOf<bool> { static constexpr int code = 6, bits = 8; };
#if !defined(DYNOC_HALF_TYPES) || DYNOC_HALF_TYPES
template <> struct DLPackTypeOf<bf16> { static constexpr int code = 4, bits = 16; };
template <> struct DLPackTypeOf<f16> { static constexpr int code = 2, bits = 16; };
#endif

// The collective's result starts as its input (all-reduce and broadcast work
// in place on it).
template <class T>
inline int collective(int kind, const char *group, const T *in, T *out,
                      int64_t inCount, int64_t outCount, int reduceOp,
                      int64_t root, void **work) {
  const dynoc_collectives *c = boundCollectives();
  if (!c)
    return kNoCommunicator;
  if (kind == kAllReduce || kind == kBroadcast)
    copy(out, in, inCount * int64_t(sizeof(T)));
  return c->start(c->self, kind, group, in, out, inCount, outCount,
                  DLPackTypeOf<T>::code, DLPackTypeOf<T>::bits, reduceOp, root,
                  collective_stream(), work);
}

// all_to_all_single: counts in elements, one per rank of the group.
template <class T>
inline int all_to_all(const char *group, const T *in, T *out,
                      const int64_t *inCounts, const int64_t *outCounts, int n,
                      void **work) {
  const dynoc_collectives *c = boundCollectives();
  if (!c)
    return kNoCommunicator;
  return c->all_to_all(c->self, group, in, out, inCounts, outCounts, n,
                       DLPackTypeOf<T>::code, DLPackTypeOf<T>::bits,
                       collective_stream(), work);
}

inline int collective_wait(void *work) {
  const dynoc_collectives *c = boundCollectives();
  if (!c)
    return kNoCommunicator;
  return work ? c->wait(c->self, work, collective_stream()) : 0;
}

} // namespace dynoc_k
