#!/usr/bin/env bash
# Installs (apt) every package tuna needs to build, test and run on Debian 12.
# Idempotent: prints what is missing, installs only that, and is a no-op when all is present.
set -euo pipefail

PACKAGES=(
  bazel-bootstrap bazel-bootstrap-source g++ pkg-config git ca-certificates python3
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libmysqlcppconn-dev mariadb-server mariadb-client
  libspdlog-dev libfmt-dev libcli11-dev catch2 nlohmann-json3-dev
  libsqlite3-dev sqlite3 libzstd-dev libbz2-dev libssl-dev libxgboost-dev
  prometheus-cpp-dev libcivetweb-dev
  libamdhip64-dev
  tmux
  systemd curl
)
# Not installed: chromium (about 120 MB of packages, 400 MB on disk), used only by
# tools/report_screenshot.sh; its test (tests/tools:report_screenshot_test) skips without it.

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#PACKAGES[@]} packages present, nothing to do"
  exit 0
fi

echo "install_deps: installing ${#missing[@]} package(s): ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install_deps: done"
