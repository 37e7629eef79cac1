// Fuzzes OpenEXR and TIFF files as halo reads them: EXR through halo's own reader (io/exr.cpp,
// instrumented; its chunk unpacking and ZIP inflating are halo's) over OpenEXRCore, plain TIFF
// through halo's own (io/tiff.cpp) over libtiff, the parts they leave (deep, DWA, subsampled;
// tiled, paged, tagged TIFF) through the OpenImageIO module (libhalo_oiio.so,
// instrumented in this build; OpenImageIO, OpenEXR and libtiff themselves are Debian's, so a
// fault inside them shows as a crash or a sanitizer report on their allocations, not by
// coverage), and the size checks on the headers. Other content is left to fuzz_image.
#include "read_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const bool exr =
      size >= 4 && data[0] == 0x76 && data[1] == 0x2f && data[2] == 0x31 && data[3] == 1;
  const bool tiff =
      size >= 4 && ((data[0] == 'I' && data[1] == 'I') || (data[0] == 'M' && data[1] == 'M'));
  if (exr || tiff) halo::fuzz::read_as_file(data, size);
  return 0;
}
