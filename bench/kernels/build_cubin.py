#!/usr/bin/env python3
"""Builds one kernel source of kernels/ into an sm_90a cubin with NVRTC, as the CUDA backend does
(--gpu-architecture, -std=c++17, the solver's -D options), so `cuobjdump -sass` can be read on a
host that has the CUDA toolkit but no compiler of ours:

  bench/kernels/build_cubin.py conv/hopper_tma_wrw.cu out.cubin -DTB_M=256 -DTB_N=128 ...
"""
import ctypes
import ctypes.util
import os
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src_rel, out, opts = sys.argv[1], sys.argv[2], sys.argv[3:]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels")
    lib = ctypes.CDLL(os.environ.get("TUNA_NVRTC_PATH") or ctypes.util.find_library("nvrtc") or "libnvrtc.so.13")
    src = open(os.path.join(root, src_rel), "rb").read()
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src, src_rel.encode(), 0, None, None) != 0:
        sys.exit("nvrtcCreateProgram failed")
    args = [b"--gpu-architecture=sm_90a", b"-std=c++17", b"-DTUNA_BACKEND_CUDA=1", b"--include-path=" + root.encode()]
    args += [o.encode() for o in opts]
    arr = (ctypes.c_char_p * len(args))(*args)
    rc = lib.nvrtcCompileProgram(prog, len(args), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    if rc != 0:
        sys.exit("compile failed:\n" + log.value.decode(errors="replace"))
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    cubin = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetCUBIN(prog, cubin)
    with open(out, "wb") as f:
        f.write(cubin.raw)
    print(log.value.decode(errors="replace").strip())
    print(f"{out}: {size.value} bytes")


if __name__ == "__main__":
    main()
