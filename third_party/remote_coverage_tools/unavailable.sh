#!/bin/sh
echo "bazel coverage is not available offline" >&2
exit 1
