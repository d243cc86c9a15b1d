//===- EmitLayers.cpp - losses, recurrent layers, transposed convolution --===//
//
// The CPU printing of layer ops that real training scripts record at the
// dispatcher: nll_loss_forward (F.cross_entropy), mse_loss, mkldnn_rnn_layer
// (nn.LSTM), transposed convolution (nn.ConvTranspose2d), and the backward of
// convolutions, max pooling and embeddings. Their kernels are in
// prelude/dynoc_kernels_nn.h.
//
//===----------------------------------------------------------------------===//
#include "GraphEmitter.h"

namespace dynoc {
namespace codegen {

/// nll_loss_forward / nll_loss2d_forward over [N, C] or [C] log-probabilities
/// (2-D: [N, C, H, W] is not supported yet).
LogicalResult GraphEmitter::emitNllLoss(Operation *op) {
  Value in = op->getOperand(0), labels = op->getOperand(1);
  Value weight = op->getNumOperands() > 2 ? op->getOperand(2) : Value();
  const DimList &d = dimsOf(in);
  if (d.size() != 1 && d.size() != 2)
    return fail(op) << "'" << op->getName() << "' on a rank-" << d.size()
                    << " input is not supported yet (rank 1 or 2)";
  if (!elementTypeOf(labels).isInteger(64))
    return fail(op) << "'" << op->getName() << "' needs int64 targets";
  int64_t reduction = int64_t(scalarAttr(op, "reduction", 1));
  int64_t ignore = int64_t(scalarAttr(op, "ignore_index", -100));
  if (reduction < 0 || reduction > 2)
    return fail(op) << "unknown reduction " << reduction;
  std::string N = d.size() == 2 ? d[0] : "1", C = d.back();
  Value out = op->getResult(0), total = op->getResult(1);
  setDims(out, op, reduction == 0 && d.size() == 2 ? DimList{N} : DimList{});
  setDims(total, op, {});
  std::string none = "static_cast<" + elemCType(in) + " *>(nullptr)";
  code += llvm::formatv(
      "  if (int rc = dynoc_k::nll_loss({0}, {1}, {2}, {3}, {4}, {5}, {6}, "
      "{7}, int64_t({8}))) return rc;\n",
      name(out), needed(total) ? name(total) : none, name(in), name(labels),
      weight ? name(weight) : none, N, C, reduction, ignore);
  return success();
}

/// mse_loss of two tensors of one shape (nn.MSELoss).
LogicalResult GraphEmitter::emitMseLoss(Operation *op) {
  Value a = op->getOperand(0), b = op->getOperand(1), out = op->getResult(0);
  if (dimsOf(a).size() != dimsOf(b).size())
    return fail(op) << "mse_loss of tensors of "
                       "different ranks (broadcasting) is not "
                       "supported yet";
  require(numelOf(a) + " == " + numelOf(b), op,
          "mse_loss's operands differ in shape");
  int64_t reduction = int64_t(scalarAttr(op, "reduction", 1));
  if (reduction < 0 || reduction > 2)
    return fail(op) << "unknown reduction " << reduction;
  setDims(out, op, reduction == 0 ? dimsOf(a) : DimList{});
  code += llvm::formatv("  dynoc_k::mse_loss({0}, {1}, {2}, {3}, {4});\n",
                        name(out), name(a), name(b), numelOf(a), reduction);
  return success();
}

/// One unidirectional LSTM layer (mode 2 of mkldnn_rnn_layer), as nn.LSTM
/// runs it per layer and direction on the CPU. Inference and training
/// forward alike; the workspace result (for mkldnn's backward) is not made.
LogicalResult GraphEmitter::emitLstmLayer(Operation *op) {
  auto rnn = cast<aten::AtenMkldnnRnnLayerOp>(op);
  if (rnn.getMode() != 2)
    return fail(op) << "mkldnn_rnn_layer mode " << rnn.getMode()
                    << " (only LSTM, mode 2, is supported yet)";
  if (!rnn.getBatchSizes().empty())
    return fail(op) << "packed sequences "
                       "(batch_sizes) are not supported yet";
  if (needed(op->getResult(3)))
    return fail(op) << "mkldnn_rnn_layer's "
                       "workspace result is not supported";
  const DimList &x = dimsOf(rnn.getInput()), &wih = dimsOf(rnn.getWeight0());
  if (x.size() != 3 || wih.size() != 2)
    return fail(op) << "mkldnn_rnn_layer needs a "
                       "3-D input and 2-D weights";
  // The input is time-major whatever batch_first says: at::lstm transposes a
  // batch-first input before the layers and passes the flag along unused.
  bool batchFirst = false;
  std::string T = x[0], B = x[1];
  std::string H = std::to_string(rnn.getHiddenSize());
  require(wih[0] + " == 4 * " + H + " && " + wih[1] + " == " + x[2], op,
          "weight_ih does not match the input and hidden sizes");
  DimList y = x;
  y[2] = H;
  setDims(op->getResult(0), op, y);
  setDims(op->getResult(1), op, {B, H});
  setDims(op->getResult(2), op, {B, H});
  std::string s =
      scratch(product({"4", T, B, H, "4"}) + " + " + product({"4", B, H, "4"}));
  bool bias = rnn.getHasBiases();
  code += llvm::formatv(
      "  if (int rc = dynoc_k::lstm_layer({0}, {1}, {2}, {3}, {4}, {5}, {6}, "
      "{7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, "
      "reinterpret_cast<float *>({16}))) return rc;\n",
      name(op->getResult(0)), name(op->getResult(1)), name(op->getResult(2)),
      name(rnn.getInput()), name(rnn.getWeight0()), name(rnn.getWeight1()),
      bias ? name(rnn.getWeight2()) : "nullptr",
      bias ? name(rnn.getWeight3()) : "nullptr", name(rnn.getHx_()),
      name(rnn.getCx_()), T, B, x[2], H, rnn.getReverse() ? "true" : "false",
      batchFirst ? "true" : "false", s);
  return success();
}

/// aten.convolution with transposed=true, 2-D, NCHW.
LogicalResult GraphEmitter::emitConvTranspose(Operation *op) {
  auto conv = cast<aten::AtenConvolutionOp>(op);
  const DimList &in = dimsOf(conv.getInput()), &w = dimsOf(conv.getWeight());
  if (in.size() != 4 || w.size() != 4)
    return fail(op) << "only 2-D transposed "
                       "convolution (NCHW) is supported so far";
  const Conv2dWindow win = conv2dWindow(conv);
  const int64_t sh = win.sh, sw = win.sw, ph = win.ph, pw = win.pw, dh = win.dh,
                dw = win.dw, oph = win.oph, opw = win.opw;
  int64_t groups = conv.getGroups();
  if (!isLiteral(w[1]) || !isLiteral(w[2]) || !isLiteral(w[3]) || groups < 1)
    return fail(op) << "transposed convolution "
                       "needs a static kernel and groups >= 1";
  int64_t R = std::stoll(w[2]), S = std::stoll(w[3]);
  std::string K = std::to_string(std::stoll(w[1]) * groups);
  auto outDim = [&](const std::string &x, int64_t s, int64_t p, int64_t d,
                    int64_t k, int64_t op_) {
    int64_t c = -2 * p + d * (k - 1) + op_ + 1;
    return isLiteral(x)
               ? std::to_string((std::stoll(x) - 1) * s + c)
               : resolved(llvm::formatv("({0} - 1) * {1} + {2}", x, s, c));
  };
  require(in[1] + " == " + w[0], op, "input channels do not match the weight");
  Value out = op->getResult(0);
  setDims(out, op,
          {in[0], K, outDim(in[2], sh, ph, dh, R, oph),
           outDim(in[3], sw, pw, dw, S, opw)});
  const DimList &o = dimsOf(out);
  Value bias = conv.getBias();
  code += llvm::formatv(
      "  dynoc_k::conv_transpose2d({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, "
      "{8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, {16}, {17}, {18}, "
      "{19});\n",
      name(out), name(conv.getInput()), name(conv.getWeight()),
      bias ? name(bias) : "nullptr", in[0], in[1], in[2], in[3], K, R, S, o[2],
      o[3], sh, sw, ph, pw, dh, dw, groups);
  return success();
}

/// aten.convolution_backward of a 2-D NCHW convolution (transposed =
/// false), each result only where something reads it: the input's gradient
/// as per-image GEMMs of the weight with dy scattered back (col2im), the
/// weight's as per-image GEMMs of dy with the input's columns (im2col), the
/// bias's as sums of dy per channel.
LogicalResult GraphEmitter::emitConvolutionBackward(Operation *op) {
  auto cb = cast<aten::AtenConvolutionBackwardOp>(op);
  if (cb.getTransposed())
    return fail(op) << "the backward of a transposed convolution is not "
                       "supported yet";
  const DimList &dy = dimsOf(cb.getGradOutput()), &x = dimsOf(cb.getInput()),
                &w = dimsOf(cb.getWeight());
  if (dy.size() != 4 || x.size() != 4 || w.size() != 4)
    return fail(op) << "only the backward of 2-D convolutions (NCHW) is "
                       "supported so far";
  int64_t groups = cb.getGroups();
  if (!isLiteral(w[2]) || !isLiteral(w[3]) || groups < 1)
    return fail(op) << "convolution backward needs a static kernel size and "
                       "groups >= 1";
  const int64_t sh = convPair(cb.getStride(), 1, 0),
                sw = convPair(cb.getStride(), 1, 1),
                ph = convPair(cb.getPadding(), 0, 0),
                pw = convPair(cb.getPadding(), 0, 1),
                dh = convPair(cb.getDilation(), 1, 0),
                dw = convPair(cb.getDilation(), 1, 1);
  if (sh < 1 || sw < 1 || dh < 1 || dw < 1 || ph < 0 || pw < 0)
    return fail(op) << "convolution backward needs strides and dilations >= "
                       "1 and paddings >= 0";
  int64_t R = std::stoll(w[2]), S = std::stoll(w[3]);
  require(product({w[1], std::to_string(groups)}) + " == " + x[1], op,
          "input channels do not match the weight");
  require(dy[1] + " == " + w[0] + " && " + dy[0] + " == " + x[0], op,
          "the output gradient does not match the input and weight");
  std::string window = llvm::formatv("{0}, {1}, {2}, {3}, {4}, {5}, {6}", sh,
                                     sw, ph, pw, dh, dw, groups);
  Value dx = op->getResult(0), dW = op->getResult(1), db = op->getResult(2);
  // Column scratch of the input and weight gradients' GEMMs.
  std::string col = "nullptr";
  if ((needed(dx) || needed(dW)) && target.convolutionBackwardColumns())
    col = scratch(product({w[1], std::to_string(R * S), dy[2], dy[3], "4"}));
  if (needed(dx)) {
    setDims(dx, op, x);
    code += llvm::formatv(
        "  if (int rc = dynoc_k::conv2d_backward_input({0}, {1}, {2}, {3}, "
        "{4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13})) return rc;\n",
        name(dx), name(cb.getGradOutput()), name(cb.getWeight()), x[0], x[1],
        x[2], x[3], w[0], R, S, dy[2], dy[3], window, col);
  }
  if (needed(dW)) {
    setDims(dW, op, w);
    code += llvm::formatv(
        "  if (int rc = dynoc_k::conv2d_backward_weight({0}, {1}, {2}, {3}, "
        "{4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13})) return rc;\n",
        name(dW), name(cb.getGradOutput()), name(cb.getInput()), x[0], x[1],
        x[2], x[3], w[0], R, S, dy[2], dy[3], window, col);
  }
  if (needed(db)) {
    setDims(db, op, {w[0]});
    code += llvm::formatv(
        "  dynoc_k::conv_backward_bias({0}, {1}, {2}, {3}, {4});\n", name(db),
        name(cb.getGradOutput()), dy[0], dy[1], product({dy[2], dy[3]}));
  }
  return success();
}

/// aten.max_pool2d_with_indices_backward, NCHW: each output's gradient goes
/// to the input element its window took (the forward's indices).
LogicalResult GraphEmitter::emitMaxPoolBackward(Operation *op) {
  auto mb = cast<aten::AtenMaxPool2dWithIndicesBackwardOp>(op);
  const DimList &dy = dimsOf(mb.getGradOutput()), &x = dimsOf(mb.getSelf()),
                &idx = dimsOf(mb.getIndices());
  if (dy.size() != 4 || x.size() != 4 || idx.size() != 4)
    return fail(op) << "max_pool2d backward expects NCHW";
  if (!mb.getIndices()
           .getType()
           .cast<RankedTensorType>()
           .getElementType()
           .isInteger(64))
    return fail(op) << "max_pool2d backward expects int64 indices";
  require(dy[0] + " == " + idx[0] + " && " + dy[1] + " == " + idx[1] + " && " +
              dy[2] + " == " + idx[2] + " && " + dy[3] + " == " + idx[3],
          op, "the gradient and the indices differ in shape");
  Value dx = op->getResult(0);
  setDims(dx, op, x);
  code +=
      llvm::formatv("  dynoc_k::max_pool2d_backward({0}, {1}, {2}, {3}, "
                    "{4}, {5}, {6}, {7});\n",
                    name(dx), name(mb.getGradOutput()), name(mb.getIndices()),
                    product({x[0], x[1]}), x[2], x[3], dy[2], dy[3]);
  return success();
}

/// aten.embedding_dense_backward: the [num_weights, D] gradient of an
/// embedding table, each row the sum of the gradient rows whose index names
/// it (none for padding_idx). A kernel of its own rather than the one-hot GEMM
/// a decomposition would make: that GEMM is N x V x D multiply-adds and an
/// [N, V] mask, most of a language model's backward on the CPU.
LogicalResult GraphEmitter::emitEmbeddingBackward(Operation *op) {
  auto eb = cast<aten::AtenEmbeddingDenseBackwardOp>(op);
  if (eb.getScaleGradByFreq())
    return fail(op) << "embedding_dense_backward with scale_grad_by_freq is "
                       "not supported yet";
  const DimList &g = dimsOf(eb.getGradOutput()), &idx = dimsOf(eb.getIndices());
  if (g.size() != idx.size() + 1)
    return fail(op) << "embedding_dense_backward's gradient must have one dim "
                       "more than its indices (rank "
                    << g.size() << " and " << idx.size() << ")";
  if (!elementTypeOf(eb.getIndices()).isInteger(64))
    return fail(op) << "embedding_dense_backward expects int64 indices";
  for (size_t i = 0; i < idx.size(); ++i)
    require(g[i] + " == " + idx[i], op,
            "the gradient and the indices differ in shape");
  int64_t rows = int64_t(eb.getNumWeights());
  // ODS gives i64 attributes as uint64_t: read it signed (-1: no padding).
  int64_t padding = int64_t(eb.getPaddingIdx());
  Value out = op->getResult(0);
  setDims(out, op, {std::to_string(rows), g.back()});
  code +=
      llvm::formatv("  if (int rc = dynoc_k::embedding_backward({0}, {1}, "
                    "{2}, {3}, {4}, {5}, int64_t({6}))) return rc;\n",
                    name(out), name(eb.getGradOutput()), name(eb.getIndices()),
                    product(idx), rows, g.back(), padding);
  return success();
}

} // namespace codegen
} // namespace dynoc
