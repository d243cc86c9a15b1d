"""dynoc_fuzzer: one fuzz target, as a libFuzzer binary and as a replay test."""

def dynoc_fuzzer(name, srcs, deps, hdrs = [], corpus = None):
    """Defines the fuzz target `name` (a `<name>_fuzzer.cpp`).

    - `:<name>_fuzzer`: under --config=fuzz (clang, tools/fuzz.sh) a libFuzzer
      binary; otherwise the same code behind replay_main.cpp.
    - `:<name>_replay`: a test running the target once over its committed seed
      corpus (corpus/<corpus>/, `corpus` defaulting to `name`) and every
      regression input (regressions/<name>/).
    """
    corpus = corpus or name
    native.cc_library(
        name = name + "_target",
        testonly = True,
        srcs = srcs,
        hdrs = hdrs,
        deps = deps,
        alwayslink = True,
    )
    native.cc_binary(
        name = name + "_fuzzer",
        testonly = True,
        deps = [":" + name + "_target"] + select({
            ":fuzzing": [],
            "//conditions:default": [":replay_main"],
        }),
        linkopts = select({
            ":fuzzing": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
    )
    inputs = native.glob(["corpus/%s/*" % corpus, "regressions/%s/*" % name])
    native.cc_test(
        name = name + "_replay",
        size = "small",
        deps = [":" + name + "_target", ":replay_main"],
        data = inputs,
        args = ["test/fuzz/" + f for f in inputs],
    )
