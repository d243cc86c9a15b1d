"""Recording a call into guarded ATen-level graphs: the recorder, graphs,
guards, dynamic shapes, the session and the MLIR writer, training steps,
resume points at breaks. Imports neither dynoc.jit nor dynoc.runtime."""
