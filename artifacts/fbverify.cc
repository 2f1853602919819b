// fbverify.cc - memplan-fbverify: FlatBuffers' own verifier over a .pte or
// a .tflite before anything else reads it (issue 49).  The files people ship
// are hostile input; flatc and the Python reader trust every offset in a
// buffer, so every reader in memplan runs this first.  It is the library's
// Verifier (libflatbuffers-dev) over the code flatc generates from the
// upstream schemas (schemas/), with no reading of its own:
//     memplan-fbverify pte|tflite FILE
// exit 0: FILE is a buffer of that schema whose every offset, vector and
// string lies inside it (a .pte: the flatbuffer in front of its segments,
// whose length the extended header gives); 1: it is not, with
// "FILE: why" on stderr; 2: bad usage or an unreadable file.
#include "program_generated.h"
#include "schema_generated.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

// Files up to 2 GiB: FlatBuffers' own limit (32-bit offsets).
constexpr size_t kMaxFile = size_t(1) << 31;

bool read_file(const char *path, std::vector<uint8_t> &out) {
    FILE *f = std::fopen(path, "rb");
    if (!f) return false;
    uint8_t chunk[65536];
    size_t got;
    while ((got = std::fread(chunk, 1, sizeof chunk, f)) > 0 && out.size() <= kMaxFile)
        out.insert(out.end(), chunk, chunk + got);
    bool ok = !std::ferror(f);
    std::fclose(f);
    return ok;
}

uint64_t le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

// The flatbuffer's length in a .pte: program_size from the extended header
// ("eh00" at byte 8, ExecuTorch's schema/extended_header.h), or the whole
// file without one.  0: a header that does not fit the file.
size_t pte_program_size(const std::vector<uint8_t> &b) {
    if (b.size() < 32 || std::memcmp(&b[8], "eh00", 4) != 0) return b.size();
    uint32_t hlen = uint32_t(b[12]) | uint32_t(b[13]) << 8 | uint32_t(b[14]) << 16 | uint32_t(b[15]) << 24;
    if (hlen < 24 || b.size() < 8 + size_t(hlen)) return 0;
    uint64_t size = le64(&b[16]);
    return size >= 8 + hlen && size <= b.size() ? size_t(size) : 0;
}

int fail(const char *path, const char *why) {
    std::fprintf(stderr, "%s: %s\n", path, why);
    return 1;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 3 || (std::strcmp(argv[1], "pte") != 0 && std::strcmp(argv[1], "tflite") != 0)) {
        std::fprintf(stderr, "usage: memplan-fbverify pte|tflite FILE\n");
        return 2;
    }
    const char *path = argv[2];
    std::vector<uint8_t> b;
    if (!read_file(path, b)) {
        std::fprintf(stderr, "%s: cannot read: %s\n", path, std::strerror(errno));
        return 2;
    }
    if (b.size() > kMaxFile) return fail(path, "larger than 2 GiB: no FlatBuffer is");
    bool pte = argv[1][0] == 'p';
    const char *id = pte ? executorch_flatbuffer::ProgramIdentifier() : tflite::ModelIdentifier();
    if (b.size() < 8 || !flatbuffers::BufferHasIdentifier(b.data(), id))
        return fail(path, pte ? "not an ExecuTorch program (no \"ET12\" at byte 4)"
                              : "not a TensorFlow Lite model (no \"TFL3\" at byte 4)");
    size_t len = pte ? pte_program_size(b) : b.size();
    if (len == 0) return fail(path, "its extended header (eh00) gives a program size the file does not hold");
    // Depth 64 and a million tables, FlatBuffers' defaults: a forged buffer
    // cannot make the check itself run long.
    flatbuffers::Verifier v(b.data(), len, 64, 1000000);
    bool ok = pte ? executorch_flatbuffer::VerifyProgramBuffer(v) : tflite::VerifyModelBuffer(v);
    return ok ? 0 : fail(path, pte ? "not a valid ExecuTorch program: FlatBuffers' verifier refuses it (program.fbs)"
                                   : "not a valid TensorFlow Lite model: FlatBuffers' verifier refuses it (schema.fbs)");
}
