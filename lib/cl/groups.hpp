// The work-group shapes halo launches its kernels with, from the table in kernels/contract.h
// that the kernels read too. Device::launch rounds each global size up to them.
#pragma once

#include "cl/cl.hpp"
#include "kernels/contract.h"

namespace halo::groups {

inline const cl::NDRange row(GROUP_ROW_W, 1, 1);
inline const cl::NDRange tile(GROUP_TILE_W, GROUP_TILE_H, 1);
inline const cl::NDRange window(GROUP_WINDOW_W, GROUP_WINDOW_H, 1);
inline const cl::NDRange square(GROUP_SQUARE, GROUP_SQUARE, 1);
inline const cl::NDRange net(GROUP_NET_W, GROUP_NET_H, 1);
// One work-item a group: the kernel's own vectors are the parallel width (PoCL).
inline const cl::NDRange single(1, 1, 1);

}  // namespace halo::groups
