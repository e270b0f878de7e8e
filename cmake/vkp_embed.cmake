# cmake -DIN="a.c;b.c" -DOUT=file.inc -P vkp_embed.cmake: writes the bytes of
# the IN files, concatenated in order, as a comma-separated list of hex
# literals (for an unsigned char array). The one way files are embedded in the
# library: the CPU prelude (codegen/c) and the GLSL templates (codegen/spirv).
set(hex "")
foreach(f ${IN})
  file(READ ${f} part HEX)
  string(APPEND hex "${part}")
endforeach()
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE ${OUT}.tmp "${bytes}\n")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
