"""Running captured graphs in this process: the build cache and built
graphs, the variant (every compiled form), the dispatcher, resuming after
a break at run time, training glue."""
