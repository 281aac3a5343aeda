// libvips, for the avatar (LedgerImages/AvatarImage.swift). Its operations take options as C
// varargs, which Swift cannot call: each wrapper below fixes the options it passes.
#include <vips/vips.h>

/// Reads only the header of a JPEG, PNG or WebP in memory: nothing is decoded until pixels are
/// asked for. `fail_on=error` refuses a truncated or damaged file instead of decoding its garbage.
static inline VipsImage *ledger_vips_load(const void *bytes, size_t length, int format) {
    VipsImage *image = NULL;
    int failed;
    switch (format) {
    case 0: failed = vips_jpegload_buffer((void *)bytes, length, &image, "fail_on", VIPS_FAIL_ON_ERROR, "access", VIPS_ACCESS_SEQUENTIAL, NULL); break;
    case 1: failed = vips_pngload_buffer((void *)bytes, length, &image, "fail_on", VIPS_FAIL_ON_ERROR, "access", VIPS_ACCESS_SEQUENTIAL, NULL); break;
    case 2: failed = vips_webpload_buffer((void *)bytes, length, &image, "fail_on", VIPS_FAIL_ON_ERROR, "access", VIPS_ACCESS_SEQUENTIAL, NULL); break;
    default: return NULL;
    }
    return failed ? NULL : image;
}

/// The picture (checked by `ledger_vips_load` first) decoded again, turned upright by its EXIF
/// orientation, cropped to its centre square and shrunk (never enlarged) to at most `size`
/// pixels a side; a JPEG or WebP is shrunk while it is decoded, so a large one never sits whole in memory.
static inline VipsImage *ledger_vips_square(const void *bytes, size_t length, int size) {
    VipsImage *out = NULL;
    if (vips_thumbnail_buffer((void *)bytes, length, &out, size, "height", size, "crop", VIPS_INTERESTING_CENTRE, "size",
            VIPS_SIZE_DOWN, "option_string", "fail_on=error", NULL)) return NULL;
    return out;
}

/// The centre square of `in` (a picture smaller than the avatar is not enlarged by
/// `ledger_vips_square`, nor cropped): its shorter side, each way.
static inline VipsImage *ledger_vips_centre_square(VipsImage *in) {
    VipsImage *out = NULL;
    int width = vips_image_get_width(in), height = vips_image_get_height(in);
    int side = width < height ? width : height;
    if (vips_crop(in, &out, (width - side) / 2, (height - side) / 2, side, side, NULL)) return NULL;
    return out;
}

/// Starts libvips for untrusted input: no loader but JPEG's, PNG's (libspng's or libpng's) and
/// WebP's from memory, so `vips_thumbnail_buffer`, which picks its loader again from the bytes,
/// can pick no other (no ImageMagick, PDF, SVG, TIFF or GIF); no operation cache (no picture
/// stays in memory after its request); one thread per operation.
static inline int ledger_vips_start(void) {
    if (VIPS_INIT("ledger")) return -1;
    vips_block_untrusted_set(TRUE);
    vips_operation_block_set("VipsForeignLoad", TRUE);
    vips_operation_block_set("VipsForeignLoadJpegBuffer", FALSE);
    vips_operation_block_set("VipsForeignLoadPngBuffer", FALSE);
    vips_operation_block_set("VipsForeignLoadSpngBuffer", FALSE);
    vips_operation_block_set("VipsForeignLoadWebpBuffer", FALSE);
    vips_cache_set_max(0);
    vips_concurrency_set(1);
    return 0;
}

/// sRGB without an alpha channel: transparency laid on white.
static inline VipsImage *ledger_vips_flat_srgb(VipsImage *in) {
    VipsImage *srgb = NULL, *out = NULL;
    if (vips_colourspace(in, &srgb, VIPS_INTERPRETATION_sRGB, NULL)) return NULL;
    if (!vips_image_hasalpha(srgb)) return srgb;
    double white[3] = {255, 255, 255};
    VipsArrayDouble *background = vips_array_double_new(white, 3);
    int failed = vips_flatten(srgb, &out, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    g_object_unref(srgb);
    return failed ? NULL : out;
}

/// A baseline JPEG with no metadata at all (no EXIF, GPS, XMP, ICC or comment).
static inline int ledger_vips_jpeg(VipsImage *in, void **bytes, size_t *length) {
    return vips_jpegsave_buffer(in, bytes, length, "Q", 85, "strip", TRUE, "optimize_coding", TRUE, NULL);
}
