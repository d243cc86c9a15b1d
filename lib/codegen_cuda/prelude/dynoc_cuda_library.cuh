// dynoc_cuda_library.cuh - what the kernel library (library/*.cu) compiles
// once per machine and flags, declared for the model's source: GEMMs through
// cuBLASLt (f32, bf16, f16), layer norm, softmax, reductions and attention as
// block/warp kernels (f32, bf16, f16, computing in f32) and 2-D convolutions
// through cuDNN, data movement. library/*.cu define them and instantiate them
// for each of these types; the build links the archive with --no-undefined, so
// a type missing there is a build error, never a load-time one.
#pragma once

namespace dynoc_k {

// Creates the process's cuBLASLt handle once; 0, or 300 + the cuBLAS status
// with its text in `message` (256 bytes).
int gemmInit(char *message);

// Row-major C[M, N] = alpha * op(A) @ op(B) + beta * C.
template <class T>
int gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha,
         const T *A, const T *B, float beta, T *C);
// Row-major C[M, N] = alpha * A @ op(B) + bias[N] (a linear layer).
template <class T>
int gemm_bias(bool transB, int64_t M, int64_t N, int64_t K, float alpha,
              const T *A, const T *B, const T *bias, T *C);
// Batched row-major C[b] = A[b] @ B[b]; sa/sb element strides between batch
// entries (0 broadcasts one operand).
template <class T>
int bmm(int64_t batch, int64_t M, int64_t N, int64_t K, const T *A, int64_t sa,
        const T *B, int64_t sb, T *C);

// Layer norm over the last n elements of each of `rows` rows.
template <class T, class TW>
void layer_norm(T *out, const T *in, const TW *weight, const TW *bias,
                int64_t rows, int64_t n, double eps);
// (Log-)softmax over the middle dim of (outer, n, inner).
template <class T>
void softmax(T *out, const T *in, int64_t outer, int64_t n, int64_t inner,
             bool log);
// Reduces the middle dim of (outer, n, inner): kind 0 sum, 1 mean, 2 max,
// 3 min.
template <class T>
void reduce(T *out, const T *in, int64_t outer, int64_t n, int64_t inner,
            int kind);
// Scaled dot-product attention of (batchHeads, L, E) queries over (S, E)
// keys and (S, Ev) values; an additive mask of type TM read at strides ms.
// `group` query heads share each key/value head (grouped-query attention:
// k and v hold batchHeads / group heads).
template <class T, class TM = T>
int attention(T *out, const T *q, const T *k, const T *v, int64_t batchHeads,
              int64_t L, int64_t S, int64_t E, int64_t Ev, double scale,
              bool causal, void *scores, const TM *mask = nullptr,
              const int64_t *ms = nullptr, int64_t heads = 1,
              int64_t group = 1);

// Losses (library/nn.cu). nll_loss_forward over [N, C] log-probabilities
// (C: a [C] input with one target), reduction 0 none ([N] out), 1 mean,
// 2 sum; `totalWeight` (may be null) gets the summed weight of the targets
// not ignored. A target outside [0, C) that is not ignored makes the loss
// NaN (the device cannot fail the run without a host sync). mse_loss of two
// tensors of n elements each, reduction as above. f32 accumulation.
template <class T>
int nll_loss(T *out, T *totalWeight, const T *in, const int64_t *target,
             const T *weight, int64_t N, int64_t C, int reduction,
             int64_t ignoreIndex);
template <class T>
void mse_loss(T *out, const T *a, const T *b, int64_t n, int reduction);

// Data movement (library/data.cu), for f32, f64, bf16, f16, i64, i32 and
// bool. `in` broadcast to `shape` at strides `s`, times `scale`.
template <class T>
void expand(T *out, const T *in, const int64_t *s, const int64_t *shape,
            int rank, float scale);
// `in` (of inShape) with its dims permuted.
template <class T>
void permute(T *out, const T *in, const int64_t *inShape, const int64_t *perm,
             int rank);
template <class T>
void broadcast_copy(T *out, const T *in, const int64_t *s, const int64_t *shape,
                    int rank);
// Elements start, start + step, ... (len of them) of the middle dim of an
// (outer, n, inner) tensor, into a dense (outer, len, inner) one.
template <class T>
void slice_copy(T *out, const T *in, int64_t outer, int64_t n, int64_t inner,
                int64_t start, int64_t step, int64_t len);
template <class T>
inline void slice(T *out, const T *in, int64_t outer, int64_t n, int64_t inner,
                  int64_t start, int64_t len) {
  slice_copy(out, in, outer, n, inner, start, int64_t(1), len);
}
// A dense (outer, len, inner) tensor at [start, start + len) of the middle
// dim of an (outer, n, inner) one.
template <class T>
void place(T *out, const T *in, int64_t outer, int64_t n, int64_t inner,
           int64_t start, int64_t len);
template <class T> void arange(T *out, int64_t n, double start, double step);
// Rows of `weight` picked by `indices`; an index out of range reads zeros.
template <class T>
int embedding(T *out, const T *weight, const int64_t *indices, int64_t n,
              int64_t rows, int64_t dim);
template <class T>
int gather(T *out, const T *in, const int64_t *index, const int64_t *outShape,
           const int64_t *inShape, int rank, int dim);
// index.Tensor (advanced indexing) as a gather over `shape`; the layout of
// the CPU's index_gather. An index out of range reads zeros.
template <class T>
int index_gather(T *out, const T *in, const int64_t *shape, int rank,
                 const int64_t *inStride, int k, const int64_t *const *idx,
                 const int64_t *idxStride, const int64_t *limit,
                 const int64_t *idxInStride);
// index_put as a scatter through index_gather's layout; `vs` the values'
// strides. An index out of range writes nothing; accumulate takes f32, f64,
// i32 and i64.
template <class T>
int index_scatter(T *out, const T *values, const int64_t *shape, int rank,
                  const int64_t *outStride, const int64_t *vs, int k,
                  const int64_t *const *idx, const int64_t *idxStride,
                  const int64_t *limit, const int64_t *idxInStride,
                  bool accumulate);

// The CPU library caches oneDNN primitives per call site; cuDNN's plans are
// per thread here (no lock on the run path), so a site holds nothing.
struct ConvSite {};
// A 2-D NCHW convolution; `bias` is a T vector of K, or null; the output is
// clamped to [lo, hi] (-INFINITY, INFINITY: no clamp). Returns 0, or the
// run's error code.
template <class T>
int conv2d_primitive(ConvSite &, T *out, const T *in, const T *w,
                     const void *bias, int64_t N, int64_t C, int64_t H,
                     int64_t W, int64_t K, int64_t R, int64_t S, int64_t OH,
                     int64_t OW, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                     int64_t groups, int64_t dh, int64_t dw, float lo,
                     float hi);
// The gradients of that convolution (aten.convolution_backward): of its
// input, of its weight (both through cuDNN; `col`, the CPU library's column
// scratch, is unused), of its bias (the sum of dy per output channel over N
// images of P pixels).
template <class T>
int conv2d_backward_input(T *dx, const T *dy, const T *w, int64_t N, int64_t C,
                          int64_t H, int64_t W, int64_t K, int64_t R, int64_t S,
                          int64_t OH, int64_t OW, int64_t sh, int64_t sw,
                          int64_t ph, int64_t pw, int64_t dh, int64_t dw,
                          int64_t groups, void *col);
template <class T>
int conv2d_backward_weight(T *dW, const T *dy, const T *x, int64_t N, int64_t C,
                           int64_t H, int64_t W, int64_t K, int64_t R,
                           int64_t S, int64_t OH, int64_t OW, int64_t sh,
                           int64_t sw, int64_t ph, int64_t pw, int64_t dh,
                           int64_t dw, int64_t groups, void *col);
template <class T>
void conv_backward_bias(T *db, const T *dy, int64_t N, int64_t K, int64_t P);

} // namespace dynoc_k
