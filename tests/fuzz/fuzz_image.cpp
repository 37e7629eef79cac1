// Fuzzes halo's own decoders (PFM, PNG through libpng, JPEG through libjpeg-turbo) and the
// header checks of the resource policy. OpenEXR and TIFF content goes to fuzz_oiio.
#include "read_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size >= 4 && ((data[0] == 0x76 && data[1] == 0x2f) || (data[0] == 'I' && data[1] == 'I') ||
                    (data[0] == 'M' && data[1] == 'M')))
    return 0;
  halo::fuzz::read_as_file(data, size);
  return 0;
}
