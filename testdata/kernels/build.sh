#!/usr/bin/env bash
# Builds the kernels listed in programs.txt as testdata/c/build.sh builds
# the C test programs.
exec "$(dirname "$0")/../c/build.sh" ../kernels/programs.txt
