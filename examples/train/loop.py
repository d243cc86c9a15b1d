"""The training loop the examples share: run a compiled step, print the loss of
each step, save the batch and the losses for the C++ loop to compare with."""
import argparse
import os

import numpy as np


def arguments(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--losses-from", type=int, default=0,
                        help="print losses from this step on (0-based)")
    parser.add_argument("--save-data", metavar="DIR", help="write the batch (x.npy, y.npy)")
    parser.add_argument("--save-losses", metavar="FILE", help="write the losses printed (.npy)")
    return parser.parse_args()


def run(train_step, x, y, args):
    """Calls train_step(x, y) args.steps times, printing the losses from
    args.losses_from on; saves what --save-data and --save-losses ask for."""
    losses = []
    for step in range(args.steps):
        loss = train_step(x, y).item()
        if step >= args.losses_from:
            losses.append(loss)
            print(f"step {step + 1} loss {loss:.6f}")
    if args.save_data:
        os.makedirs(args.save_data, exist_ok=True)
        np.save(os.path.join(args.save_data, "x.npy"), x.numpy())
        np.save(os.path.join(args.save_data, "y.npy"), y.numpy())
    if args.save_losses:
        np.save(args.save_losses, np.array(losses, dtype=np.float32))
