#!/usr/bin/env bash
# Bazel workspace status: the git revision baked into `tuna --version`.
rev=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then rev="${rev}-dirty"; fi
echo "STABLE_GIT_REVISION ${rev}"
