// tuna_pad_channels: a copy of an NHWC (or K R S C) tensor of 16-bit elements with its channels
// padded with zeros, for the Hopper kernels' thin inputs (C % 8 != 0: the 3-channel stem), which
// load 16-byte chunks of channels. Include after common/portability.h.
#pragma once

// dst[p][c] = c < C ? src[p][c] : 0 for p < pixels, c < Cp: a copy with the channels padded.
TUNA_GLOBAL void TUNA_LAUNCH_BOUNDS(256)
    tuna_pad_channels(const tuna_u16* TUNA_RESTRICT src, tuna_u16* TUNA_RESTRICT dst, long long dst_offset,
                      long long pixels, int C, int Cp) {
  const long long i = static_cast<long long>(TUNA_BID_X) * TUNA_BDIM_X + TUNA_TID_X;
  if (i >= pixels * Cp) return;
  const long long p = i / Cp;
  const int c = static_cast<int>(i - p * Cp);
  dst[dst_offset + i] = c < C ? src[p * C + c] : tuna_u16(0);
}
