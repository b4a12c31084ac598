"""Generates @system: one cc_library per Debian system library.

Link flags come from pkg-config where the library ships a .pc file (so the dozen abseil
libraries gRPC needs are always the right ones for this distribution), otherwise from a
fixed -l list. Headers live under /usr/include and need no include path.
Bazel does not track system libraries: run `bazel clean --expunge` after an apt upgrade.
"""

# name -> (pkg-config modules, fallback linkopts, defines)
_LIBS = {
    "grpc": (["grpc++", "grpc", "protobuf"], ["-lgrpc++", "-lgrpc", "-lgpr", "-lprotobuf"], []),
    "grpc_reflection": ([], ["-lgrpc++_reflection"], []),
    "protobuf": (["protobuf"], ["-lprotobuf"], []),
    "absl": (
        ["absl_status", "absl_statusor", "absl_strings", "absl_str_format", "absl_synchronization", "absl_hash", "absl_time"],
        ["-labsl_status", "-labsl_statusor", "-labsl_strings", "-labsl_str_format_internal"],
        [],
    ),
    "mysqlcppconn": ([], ["-lmysqlcppconn"], []),
    "spdlog": ([], ["-lspdlog", "-lfmt"], ["SPDLOG_SHARED_LIB", "SPDLOG_COMPILED_LIB", "SPDLOG_FMT_EXTERNAL"]),
    "fmt": ([], ["-lfmt"], []),
    "sqlite3": (["sqlite3"], ["-lsqlite3"], []),
    "zstd": (["libzstd"], ["-lzstd"], []),
    "bz2": ([], ["-lbz2"], []),
    "crypto": (["libcrypto"], ["-lcrypto"], []),
    "dl": ([], ["-ldl"], []),
    # Gradient-boosted trees (tuner_core/model), C API in /usr/include/xgboost/c_api.h.
    "xgboost": (["xgboost"], ["-lxgboost"], []),
    # Metrics: prometheus-cpp's registry and text format; civetweb (what its pull exposer runs
    # on) serves /metrics and /healthz.
    "prometheus_cpp": (["prometheus-cpp-core"], ["-lprometheus-cpp-core"], []),
    "civetweb": ([], ["-lcivetweb-cpp", "-lcivetweb"], []),
    "pthread": ([], ["-lpthread"], []),
    # Header-only libraries.
    "cli11": ([], [], []),
    "catch2": ([], [], []),
    "nlohmann_json": ([], [], []),
    # HIP headers for types only: the HIP backend dlopens libamdhip64 at run time.
    "hip_headers": ([], [], ["__HIP_PLATFORM_AMD__"]),
}

def _pkg_config_libs(rctx, modules):
    if not modules:
        return None
    res = rctx.execute(["pkg-config", "--libs"] + modules)
    if res.return_code != 0:
        return None
    return [flag for flag in res.stdout.strip().split(" ") if flag]

def _system_libs_impl(rctx):
    lines = ["package(default_visibility = [\"//visibility:public\"])", ""]
    for name, (modules, fallback, defines) in _LIBS.items():
        linkopts = _pkg_config_libs(rctx, modules) or fallback
        lines.append("cc_library(")
        lines.append("    name = \"%s\"," % name)
        lines.append("    linkopts = %s," % repr(linkopts))
        lines.append("    defines = %s," % repr(defines))
        lines.append(")")
        lines.append("")
    rctx.file("WORKSPACE", "workspace(name = \"system\")\n")
    rctx.file("BUILD", "\n".join(lines))

system_libs = repository_rule(
    implementation = _system_libs_impl,
    local = True,
    environ = ["PKG_CONFIG_PATH"],
)
