//===- BucketAllReduces.cpp - DDP's buckets in a backward graph -----------===//
//
// dynoc-bucket-all-reduces merges the per-parameter gradient all-reduces a
// DDP backward graph issues into buckets (flatten, concatenate, one
// all-reduce, slice back), so a step makes a few large collectives instead
// of one per parameter; dynoc-defer-waits then moves each wait down to the
// first use of its result, so a bucket is in flight while the rest of the
// backward pass computes. Together they are what DDP's reducer does at run
// time, decided once, at build time (docs/distributed.md).
//
//===----------------------------------------------------------------------===//
#include "dynoc/IR/AtenDialect.h"
#include "dynoc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace dynoc {
#define GEN_PASS_DEF_BUCKETALLREDUCES
#define GEN_PASS_DEF_DEFERWAITS
#include "dynoc/Passes/Passes.h.inc"
} // namespace dynoc

using namespace mlir;
using namespace dynoc::aten;

namespace {
/// The wait that is the only user of `op`'s result, if that is all it has.
dynoc::WaitTensorOp soleWait(dynoc::AllReduceOp op) {
  Value r = op.getResult();
  if (!r.hasOneUse())
    return nullptr;
  auto wait = dyn_cast<dynoc::WaitTensorOp>(*r.getUsers().begin());
  return wait && wait->getBlock() == op->getBlock() ? wait : nullptr;
}

/// Bytes of a static tensor type, or -1.
int64_t staticBytes(Type t) {
  auto rt = t.dyn_cast<RankedTensorType>();
  if (!rt || !rt.hasStaticShape() || !rt.getElementType().isIntOrFloat())
    return -1;
  return rt.getNumElements() *
         std::max<int64_t>(1, rt.getElementTypeBitWidth() / 8);
}

/// Whether a user of `v` (in `v`'s block) comes before `point`.
bool usedBefore(Value v, Operation *point) {
  Block *block = point->getBlock();
  for (Operation *user : v.getUsers()) {
    Operation *at = block->findAncestorOpInBlock(*user);
    if (at && at->isBeforeInBlock(point))
      return true;
  }
  return false;
}

struct Member {
  // Op handles are values: mutable, so that their accessors can be called
  // through a const Member.
  mutable dynoc::AllReduceOp op;
  mutable dynoc::WaitTensorOp wait;
};

/// One bucket's all-reduce in place of its members' (two or more).
void rewriteBucket(ArrayRef<Member> members) {
  dynoc::AllReduceOp last = members.back().op;
  OpBuilder b(last->getContext());
  b.setInsertionPointAfter(last);
  Location loc = last.getLoc();
  auto elementType =
      last.getInput().getType().cast<RankedTensorType>().getElementType();
  SmallVector<Value> flats;
  SmallVector<int64_t> sizes;
  int64_t total = 0;
  for (const Member &m : members) {
    auto t = m.op.getInput().getType().cast<RankedTensorType>();
    int64_t n = t.getNumElements();
    flats.push_back(t.getRank() == 1
                        ? Value(m.op.getInput())
                        : b.create<AtenReshapeOp>(
                              m.op.getLoc(),
                              RankedTensorType::get({n}, elementType),
                              m.op.getInput(), b.getDenseI64ArrayAttr({n})));
    sizes.push_back(n);
    total += n;
  }
  auto flatType = RankedTensorType::get({total}, elementType);
  Value bucket =
      b.create<AtenCatOp>(loc, flatType, flats, b.getI64IntegerAttr(0));
  auto reduced = b.create<dynoc::AllReduceOp>(
      loc, flatType, bucket, last.getReduceOpAttr(), last.getGroupSizeAttr(),
      last.getGroupNameAttr());
  Value done = b.create<dynoc::WaitTensorOp>(loc, flatType, reduced);
  int64_t offset = 0;
  for (auto [m, n] : llvm::zip(members, sizes)) {
    Value piece = b.create<AtenSliceTensorOp>(
        m.op.getLoc(), RankedTensorType::get({n}, elementType), done,
        b.getI64IntegerAttr(0), b.getI64IntegerAttr(offset),
        b.getI64IntegerAttr(offset + n), b.getI64IntegerAttr(1));
    auto t = m.op.getInput().getType().cast<RankedTensorType>();
    Value shaped =
        t.getRank() == 1
            ? piece
            : (Value)b.create<AtenReshapeOp>(m.op.getLoc(), t, piece,
                                      b.getDenseI64ArrayAttr(t.getShape()));
    m.wait.getResult().replaceAllUsesWith(shaped);
    m.wait.erase();
    m.op.erase();
    offset += n;
  }
}

struct BucketAllReducesPass
    : dynoc::impl::BucketAllReducesBase<BucketAllReducesPass> {
  using Base::Base;
  void runOnOperation() override {
    const double mib = 1024.0 * 1024.0;
    struct Open {
      SmallVector<Member> members;
      int64_t bytes = 0;
    };
    // Keyed by what must agree: group, size, reduce op, element type.
    llvm::MapVector<std::tuple<StringRef, int64_t, StringRef, Type>, Open>
        open;
    int closed = 0;
    auto close = [&](Open &bucket) {
      if (bucket.members.size() > 1)
        rewriteBucket(bucket.members);
      bucket = Open();
      ++closed;
    };
    SmallVector<dynoc::AllReduceOp> candidates;
    getOperation().walk([&](dynoc::AllReduceOp op) {
      if (soleWait(op) && staticBytes(op.getInput().getType()) >= 0)
        candidates.push_back(op);
    });
    for (dynoc::AllReduceOp op : candidates) {
      auto key = std::make_tuple(
          op.getGroupName(), op.getGroupSize(), op.getReduceOp(),
          op.getInput().getType().cast<RankedTensorType>().getElementType());
      Open &bucket = open[key];
      // The bucket is issued where its last member is: a member whose
      // result is read before `op` closes it first.
      if (llvm::any_of(bucket.members, [&](const Member &m) {
            return usedBefore(m.wait.getResult(), op);
          }))
        close(bucket);
      bucket.members.push_back({op, soleWait(op)});
      bucket.bytes += staticBytes(op.getInput().getType());
      double cap = (closed == 0 ? firstCapMb : capMb) * mib;
      if (double(bucket.bytes) >= cap)
        close(bucket);
    }
    for (auto &entry : open)
      if (!entry.second.members.empty())
        close(entry.second);
  }
};

bool isCollective(Operation *op) {
  return isa<dynoc::AllReduceOp, dynoc::AllGatherIntoTensorOp,
             dynoc::ReduceScatterTensorOp, dynoc::BroadcastOp,
             dynoc::AllToAllSingleOp>(op);
}

/// Orders a block's ops by the last collective each depends on: first every
/// op that reads no collective's result (the whole backward pass, and every
/// collective's start), then the ops that need the first collective issued
/// (its wait first), then those that need the second, and so on. A stable
/// sort by a key that never decreases along a use (an op's key is the
/// largest of its operands') keeps every value defined before its uses, so
/// the waits land where their results are first needed and, among the ops
/// after the last collective (an optimizer's updates), those of gradients
/// communicated first go first, while the last bucket is still in flight.
void scheduleByCollective(Block &block) {
  llvm::DenseMap<Operation *, int> key;
  int issued = 0;
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator()) {
    int k = -1;
    for (Value v : op.getOperands())
      if (Operation *def = v.getDefiningOp())
        k = std::max(k, key.lookup(def));
    if (isa<dynoc::WaitTensorOp>(op)) {
      Operation *collective = op.getOperand(0).getDefiningOp();
      k = std::max(k, collective ? key.lookup(collective) : -1);
    }
    // A collective's own key is the order it is issued in, which its wait
    // takes; the collective itself sorts with the ops of its operands' key.
    key[&op] = isCollective(&op) ? issued++ : k;
    ops.push_back(&op);
  }
  // The sort key: a collective sorts with its operands' ops, everything else
  // by its key.
  auto sortKey = [&](Operation *op) {
    if (isCollective(op)) {
      int k = -1;
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp())
          k = std::max(k, key.lookup(def));
      return k;
    }
    return key.lookup(op);
  };
  SmallVector<Operation *> sorted(ops);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](Operation *a, Operation *b) {
                     return sortKey(a) < sortKey(b);
                   });
  Operation *terminator = block.getTerminator();
  for (Operation *op : sorted)
    op->moveBefore(terminator);
}

struct DeferWaitsPass : dynoc::impl::DeferWaitsBase<DeferWaitsPass> {
  void runOnOperation() override {
    for (Block &block : getOperation().getBody())
      if (!block.getOps<dynoc::WaitTensorOp>().empty())
        scheduleByCollective(block);
  }
};
} // namespace

std::unique_ptr<Pass> dynoc::createBucketAllReducesPass() {
  return std::make_unique<BucketAllReducesPass>();
}

std::unique_ptr<Pass> dynoc::createBucketAllReducesPass(double capMb,
                                                        double firstCapMb) {
  dynoc::BucketAllReducesOptions options;
  options.capMb = capMb;
  options.firstCapMb = firstCapMb;
  return std::make_unique<BucketAllReducesPass>(options);
}

std::unique_ptr<Pass> dynoc::createDeferWaitsPass() {
  return std::make_unique<DeferWaitsPass>();
}
