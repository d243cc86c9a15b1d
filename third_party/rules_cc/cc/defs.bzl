"""Re-exports Bazel's native C++ rules under the names rules_cc provides."""
cc_library = native.cc_library
cc_binary = native.cc_binary
cc_test = native.cc_test
cc_import = native.cc_import
cc_toolchain = native.cc_toolchain
cc_toolchain_suite = native.cc_toolchain_suite
objc_library = native.objc_library
cc_proto_library = native.cc_proto_library
objc_import = native.objc_import
