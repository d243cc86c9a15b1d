//===- CollectiveOps.td - collectives of torch.distributed -*- tablegen -*-===//
//
// torch's functional collectives (_c10d_functional) as ops of the dynoc
// dialect: each takes a tensor and gives a new one, communicated over the
// process group named `group_name` (torch's name of the group; the runtime
// resolves it through the communicator its caller provides, so no group is
// baked into a graph) of `group_size` ranks (the size capture saw, which the
// runtime checks against the communicator's group). An op issues the collective; `dynoc.wait_tensor` is
// where its result is first needed. Capture records them from the functional
// collectives a program calls and from the in-place ones
// (torch.distributed.all_reduce(t): the functional pair, then t written back).
// Not pure: a collective runs on every rank or none.
//
//===----------------------------------------------------------------------===//

#ifndef DYNOC_IR_COLLECTIVEOPS_TD
#define DYNOC_IR_COLLECTIVEOPS_TD

class Dynoc_CollectiveOp<string mnemonic> : Dynoc_Op<mnemonic, []> {
  let hasVerifier = 1;
}

def Dynoc_AllReduceOp : Dynoc_CollectiveOp<"all_reduce"> {
  let summary = "_c10d_functional.all_reduce: the elementwise reduction of "
                "`input` over the group's ranks";
  let arguments = (ins AnyRankedTensor:$input, StrAttr:$reduce_op,
                   I64Attr:$group_size, StrAttr:$group_name);
  let results = (outs AnyRankedTensor:$result);
}

def Dynoc_AllGatherIntoTensorOp
    : Dynoc_CollectiveOp<"all_gather_into_tensor"> {
  let summary = "_c10d_functional.all_gather_into_tensor: the ranks' inputs "
                "concatenated along dim 0, in rank order";
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$group_size,
                   StrAttr:$group_name);
  let results = (outs AnyRankedTensor:$result);
}

def Dynoc_ReduceScatterTensorOp : Dynoc_CollectiveOp<"reduce_scatter_tensor"> {
  let summary = "_c10d_functional.reduce_scatter_tensor: this rank's slice "
                "(along dim 0) of the reduction of the ranks' inputs";
  let arguments = (ins AnyRankedTensor:$input, StrAttr:$reduce_op,
                   I64Attr:$group_size, StrAttr:$group_name);
  let results = (outs AnyRankedTensor:$result);
}

def Dynoc_BroadcastOp : Dynoc_CollectiveOp<"broadcast"> {
  let summary = "_c10d_functional.broadcast: rank `src`'s input on every rank";
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$src,
                   I64Attr:$group_size, StrAttr:$group_name);
  let results = (outs AnyRankedTensor:$result);
}

def Dynoc_AllToAllSingleOp : Dynoc_CollectiveOp<"all_to_all_single"> {
  let summary = "_c10d_functional.all_to_all_single: slice i of `input` (along "
                "dim 0, input_split_sizes[i] rows) goes to rank i, which "
                "concatenates what it receives in rank order "
                "(output_split_sizes[i] rows from rank i); empty split lists "
                "are equal slices";
  let arguments = (ins AnyRankedTensor:$input,
                   DenseI64ArrayAttr:$output_split_sizes,
                   DenseI64ArrayAttr:$input_split_sizes, I64Attr:$group_size,
                   StrAttr:$group_name);
  let results = (outs AnyRankedTensor:$result);
}

def Dynoc_WaitTensorOp : Dynoc_Op<"wait_tensor", []> {
  let summary = "_c10d_functional.wait_tensor: the collective that made "
                "`input` has completed; its result is `input`'s value";
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let hasVerifier = 1;
}

#endif // DYNOC_IR_COLLECTIVEOPS_TD
