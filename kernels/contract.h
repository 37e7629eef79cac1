// The numbers the host and the kernels share, written once: included by the kernels (embedded
// with them, like common.cl) and by the C++ that launches them, whose enums take their values
// from here. Plain #defines: what OpenCL C and C++ both read alike.
#ifndef HALO_CONTRACT_H
#define HALO_CONTRACT_H

// Border rules (Border in lib/filters/filter.hpp; border_index in common.cl).
#define BORDER_ZERO 0
#define BORDER_CLAMP 1
#define BORDER_REFLECT 2
#define BORDER_WRAP 3

// Discontinuity flags of the guided filters, a bit per side (lib/filters/guides.hpp).
#define FLAG_LEFT 1
#define FLAG_RIGHT 2
#define FLAG_TOP 4
#define FLAG_BOTTOM 8

// The denoise network's input and output transfer functions (lib/filters/denoise.cpp).
#define TRANSFER_LINEAR 0
#define TRANSFER_SRGB 1
#define TRANSFER_PU 2

// Histograms (lib/filters/histogram.cpp): the input's layout (INPUT), what is counted (MODE)
// and the counting strategy (METHOD).
#define HIST_INPUT_U8 1     // 8-bit interleaved
#define HIST_INPUT_U16 2    // 16-bit interleaved
#define HIST_INPUT_FLOAT 3  // float planes of a strip
#define HIST_MODE_CHANNEL 0
#define HIST_MODE_LUMA 1
#define HIST_MODE_LUMA709 2
#define HIST_MODE_RGB 3
#define HIST_METHOD_GLOBAL 0
#define HIST_METHOD_LOCAL 1
#define HIST_METHOD_PRIVATE 2

// Colour tables' shapers (Shaper::Kind in lib/filters/color_lut.hpp).
#define SHAPER_LINEAR 0
#define SHAPER_LOG 1

// rotate's interpolation (lib/filters/rotate.cpp).
#define TAPS_NEAREST 0
#define TAPS_BILINEAR 1
#define TAPS_BICUBIC 2

#endif
