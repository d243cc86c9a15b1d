// dynoc_kernels_collectives.h - the collectives of torch.distributed
// (lib/codegen/EmitCollectives.cpp): calls into the communicator libdynrt
// binds to the model through its exported dynoc_bind_collectives, on flat
// buffers (libdynrt makes the DLPack tensors its caller's communicator
// takes). The struct is the model/runtime ABI (lib/runtime/collectives.h
// has the runtime's copy; kCollectivesAbi versions it). Appended to
// dynoc_kernels.h in the embedded prelude (lib/codegen_cpu/BUILD.bazel).

extern "C" {
struct dynoc_collectives {
  int abi;
  void *self;
  // Starts collective `kind` (dynoc_k::CollectiveKind) over group `group` on
  // `count` elements of DLPack type (code, bits) at `data` (in and out:
  // all-reduce, broadcast) or from `in` (inCount) into `out` (outCount):
  // 0 and *work (null: done), or an error code, the text kept by the runtime.
  int (*start)(void *self, int kind, const char *group, const void *in,
               void *out, int64_t inCount, int64_t outCount, int dtypeCode,
               int dtypeBits, int reduceOp, int64_t root, void **work);
  int (*wait)(void *self, void *work);
};
}

namespace dynoc_k {

constexpr int kCollectivesAbi = 1;
enum CollectiveKind { kAllReduce = 0, kAllGather = 1, kReduceScatter = 2, kBroadcast = 3 };
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

// The collective's result starts as its input (all-reduce and broadcast work
// in place on it).
template <class T>
inline int collective(int kind, const char *group, const T *in, T *out,
                      int64_t inCount, int64_t outCount, int reduceOp,
                      int64_t root, void **work) {
  const dynoc_collectives *c = boundCollectives();
  if (!c)
    return kNoCommunicator;
  if ((kind == kAllReduce || kind == kBroadcast) && out != in)
    std::memcpy(out, in, size_t(inCount) * sizeof(T));
  return c->start(c->self, kind, group, in, out, inCount, outCount,
                  DLPackTypeOf<T>::code, DLPackTypeOf<T>::bits, reduceOp, root,
                  work);
}

inline int collective_wait(void *work) {
  const dynoc_collectives *c = boundCollectives();
  if (!c)
    return kNoCommunicator;
  return work ? c->wait(c->self, work) : 0;
}

} // namespace dynoc_k
