// The numbers the host and the kernels share, written once: included by the kernels (embedded
// with them, like common.cl) and by the C++ that launches them, whose enums take their values
// from here. Plain #defines: what OpenCL C and C++ both read alike.
#ifndef HALO_CONTRACT_H
#define HALO_CONTRACT_H

// Border rules (Border in lib/filters/filter.hpp; border_index in common.cl).
// Work-group shapes, by how a kernel reads: the host launches with these (lib/cl/groups.hpp)
// and kernels that stage tiles in local memory declare them (reqd_work_group_size).
// Samples of one row of one plane, nothing shared: pointwise, unsharp, box's columns.
#define GROUP_ROW_W 64
// Tiles of a few rows: kernels that gather across rows (geometry, colour, tone, rank).
#define GROUP_TILE_W 64
#define GROUP_TILE_H 4
// Square-ish windows read around each pixel (guided filters, fireflies).
#define GROUP_WINDOW_W 32
#define GROUP_WINDOW_H 8
// One group a block of pixels reduced in local memory (autoexposure's bins, gray).
#define GROUP_SQUARE 16
// The denoise network's tensors in and out: 16 columns, 4 rows.
#define GROUP_NET_W 16
#define GROUP_NET_H 4
// separable.cl's kernel forms (SEP_FORM): a program holds one form's kernels.
#define SEP_FORM_PASSES 1  // _rows and _cols, tiled in local memory (GPUs)
#define SEP_FORM_FUSED 2   // _fused: both passes in one kernel
#define SEP_FORM_DIRECT 3  // _direct: both passes in registers
#define SEP_FORM_VECTOR 4  // _rows_vec and _cols_vec (CPUs)
// Lanes of the fused separable kernel's rows (a work-group is GROUP_FUSED_W x FUSED_STEPS).
#define GROUP_FUSED_W 32

#define BORDER_ZERO 0
#define BORDER_CLAMP 1
#define BORDER_REFLECT 2
#define BORDER_WRAP 3

// Discontinuity flags of the guided filters, a bit per side (lib/filters/guided/guides.hpp).
#define FLAG_LEFT 1
#define FLAG_RIGHT 2
#define FLAG_TOP 4
#define FLAG_BOTTOM 8

// The planes a guided filter weighs as colour among `planes` (firefly luminance and clamp,
// albedo demodulation): R, G, B of 3 or 4 (a fourth is alpha, filtered with premultiplied
// colour), else the first (grey, grey with alpha).
#define GUIDED_COLOURS(planes) ((planes) >= 3 ? 3 : 1)

// The denoise network's input and output transfer functions (lib/filters/denoise/denoise.cpp).
#define TRANSFER_LINEAR 0
#define TRANSFER_SRGB 1
#define TRANSFER_PU 2

// Histograms (lib/filters/measure/histogram.cpp): the input's layout (INPUT), what is counted
// (MODE) and the counting strategy (METHOD).
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
// histogram_local reads 8/16-bit pixels in blocks of this many (16 bytes a channel).
#define HIST_BLOCK 16

// Colour tables' shapers (Shaper::Kind in lib/filters/colour/color_lut.hpp).
#define SHAPER_LINEAR 0
#define SHAPER_LOG 1
// What colour stages give their library (ColorTransformStage::bounds): samples clamped to
// +-2^32 (infinities included), where every transform still computes in float, or to the range
// a baked table covers; a pixel with a NaN colour sample comes out NaN in all three.
#define COLOUR_BOUND 4294967296.0f

// FLIP (lib/verify/flip.cpp, kernels/flip.cl), as NVIDIA's reference implementation writes
// its numbers: the colour exponent, the share of the largest colour difference and the error
// it maps to, the feature filter's width in degrees and exponent; D65 white and its inverse;
// HDR-FLIP's tone mappers (FlipToneMapper) and the curves (a c^2 + b c + k) / (d c^2 + e c + f)
// of the first two (Reinhard works on luminance).
#define FLIP_QC 0.7f
#define FLIP_PC 0.4f
#define FLIP_PT 0.95f
#define FLIP_W 0.082f
#define FLIP_QF 0.5f
#define FLIP_WHITE_X 0.950428545f
#define FLIP_WHITE_Z 1.088900371f
#define FLIP_INV_WHITE_X 1.052156925f
#define FLIP_INV_WHITE_Z 0.918357670f
#define FLIP_TONEMAP_ACES 0
#define FLIP_TONEMAP_HABLE 1
#define FLIP_TONEMAP_REINHARD 2
// clang-format off
#define FLIP_CURVES                                                                      \
  {{0.6f * 0.6f * 2.51f, 0.6f * 0.03f, 0.0f, 0.6f * 0.6f * 2.43f, 0.6f * 0.59f, 0.14f}, \
   {0.231683f, 0.013791f, 0.0f, 0.18f, 0.3f, 0.018f}}
// clang-format on

// rotate's interpolation (lib/filters/geometry/rotate.cpp).
#define TAPS_NEAREST 0
#define TAPS_BILINEAR 1
#define TAPS_BICUBIC 2

// A buffer of image rows as a kernel reads or writes it: the image's width and the buffer's row
// pitch, the rows the buffer holds and the first of them, the image's height.
typedef struct {
  int width, pitch, rows, y0, height;
} StripLayout;

// A strip kernel's rows: its buffers' layout (one layout: input and output alike) and the image
// rows [first, last) it computes. Every kernel that works strip by strip takes it as one
// argument after its buffers (lib/cl/device.hpp's strip_args), unpacked by common.cl's
// STRIP_FIELDS; its own scalars follow.
typedef struct {
  int width, pitch, rows, y0, height, first, last;
} StripArgs;

// Kernels whose output rows read other rows of their input (crop, pad, rotate, resize): both
// buffers, and the output rows [first, last) to compute (lib/cl/device.hpp's move_args).
typedef struct {
  StripLayout in, out;
  int first, last;
} MoveArgs;

// crop: the window's top-left corner in the input.
typedef struct {
  MoveArgs move;
  int left, top;
} CropArgs;

// rotate_any: output pixel centre (x + 0.5, y + 0.5) minus the output's centre, turned by
// (cos + cos_lo, sin + sin_lo: each a pair of floats) about the input's centre; taps: TAPS_*;
// samples outside the input are `background`, 0 in channel `alpha` (-1: none).
typedef struct {
  MoveArgs move;
  float cos, sin, cos_lo, sin_lo, in_cx, in_cy, out_cx, out_cy, background;
  int taps, alpha;
} RotateArgs;

// The scalars of a guided filter's pass, one kernel argument by value instead of a row of
// positional ones (lib/filters/guided/bilateral.cpp, atrous.cpp fill them). Members of 4 bytes
// only, so OpenCL C and C++ lay them out alike (the C++ side static_asserts the size). First the
// strip, as every strip kernel takes it.
typedef struct {
  StripArgs strip;
  int channels, r, border, use_flags, demod, remod;
  float albedo_min, range_inv;
} BilateralPassArgs;

typedef struct {
  StripArgs strip;
  int channels, step, border, has_normal, has_depth, split, demod, remod;
  float colour_inv, radiance_inv, sigma_n, sigma_z, albedo_min, outline;
} AtrousPassArgs;

// The denoise filter's kernels (kernels/denoise.cl, lib/filters/denoise/denoise.cpp). Where a
// planar source's samples lie: sample (c, x, y) at c * plane + ((y - oy) * pitch + (x - ox)) *
// step; `image`: read through the canvas's border rule.
typedef struct {
  int ox, oy, pitch, plane, step, image;
} PlanarLayout;

// The network's transfer function and the range its values are kept in.
typedef struct {
  int kind;  // TRANSFER_*
  float pu_norm, scale;
  int hdr, snorm;
} DenoiseTransfer;

// denoise_input: the tensor (th x tw, its channels by `aux`) holding the region [rx, rx + rw) x
// [ry, ry + rh) of the canvas (the image width x height, its border rule beyond), from the main
// image (main_planes: 1 or 3), the albedo and the normal (aux: how many of those two it takes).
typedef struct {
  int th, tw, rx, ry, rw, rh, width, height, border;
  PlanarLayout main, albedo, normal;
  int main_planes, aux;
  DenoiseTransfer transfer;
} DenoiseInputArgs;

// denoise_output: the core [cx, cx + cw) x [cy, cy + ch) of a th x tw tensor whose (0, 0) is
// pixel (rx, ry), into `planes` planes of an output at (out_ox, out_oy) with out_pitch and
// out_plane.
typedef struct {
  int th, tw, rx, ry, out_ox, out_oy, out_pitch, out_plane, planes, cx, cy, cw, ch;
  DenoiseTransfer transfer;
} DenoiseOutputArgs;

// Temporal denoising (kernels/temporal.cl): a frame of the window is its colour's planes,
// then these guide planes in this order, and which guides a pair of frames both hold.
#define TEMPORAL_NORMAL 0
#define TEMPORAL_DEPTH 3
#define TEMPORAL_ALBEDO 4
#define TEMPORAL_MOTION 7
#define TEMPORAL_GUIDE_PLANES 11
#define TEMPORAL_HAS_NORMAL 1
#define TEMPORAL_HAS_DEPTH 2
#define TEMPORAL_HAS_ALBEDO 4

#endif
