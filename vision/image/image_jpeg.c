/*
 * image_jpeg.c - JPEG through libjpeg-turbo: baseline and progressive, grey, YCbCr or RGB,
 * decoded from memory straight to grey (libjpeg takes the Y channel of YCbCr, which is the
 * BT.601 luma, and converts RGB with the same weights). CMYK and YCCK are refused as
 * unsupported: turning ink coverage into a brightness needs a colour profile we do not have.
 *
 * libjpeg's default error handler prints and calls exit(); ours formats the message and
 * longjmps back to the one function that drives the decoder. Warnings (libjpeg calls
 * emit_message with level -1 about damaged data) are errors too: a damaged file must not decode
 * to a half-grey image. Data cut short is caught by our source manager (source_fill).
 *
 * EXIF orientation: a camera that was turned stores the picture as its sensor saw it and says
 * in the APP1 "Exif" block (TIFF tag 0x0112) how to turn it for display. The decoded image is
 * turned so (as viewers, browsers and OpenCV's imread show it), so that a found transform and
 * an overlay are in the coordinates the user sees, and a file and the array OpenCV reads from it
 * give the same answer. Only that one tag is read, by bounds-checked code of our own: a full
 * EXIF library for one short integer would be a dependency larger than the parser. A block we
 * cannot read leaves the picture as stored, as viewers do.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* jpeglib.h uses size_t and FILE without including their headers. */
#include <jerror.h>
#include <jpeglib.h>

#include "image_internal.h"

/* libjpeg-turbo's own TurboJPEG API stops at this many scans (TJFLAG_LIMITSCANS): a
 * progressive file with thousands of tiny scans otherwise costs minutes of CPU. */
#define MAX_SCANS 500

typedef struct JpegFailure {
    struct jpeg_error_mgr mgr; /* first, so that cinfo->err points at the whole struct */
    jmp_buf jump;
    int status;
    char message[JMSG_LENGTH_MAX];
} JpegFailure;

/* Everything the decoder touches after setjmp, owned by ghmi_jpeg_decode. */
typedef struct JpegDecoder {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_progress_mgr progress;
    struct jpeg_source_mgr source;
    JpegFailure failure;
    GhmImage *img;
} JpegDecoder;

static void on_jpeg_error(j_common_ptr cinfo)
{
    JpegFailure *f = (JpegFailure *)cinfo->err;
    cinfo->err->format_message(cinfo, f->message);
    int code = cinfo->err->msg_code; /* truncation never comes here: source_fill says it */
    if (code == JERR_OUT_OF_MEMORY)
        f->status = GHM_ERR_NOMEM;
    else if (code == JERR_BAD_PRECISION || code == JERR_CONVERSION_NOTIMPL ||
             code == JERR_NOT_COMPILED || code == JERR_ARITH_NOTIMPL)
        f->status = GHM_ERR_UNSUPPORTED;
    else
        f->status = GHM_ERR_FORMAT;
    longjmp(f->jump, 1);
}

/* Level -1 is a warning about damaged data: fail. Levels >= 0 are trace output: ignore. */
static void on_jpeg_message(j_common_ptr cinfo, int level)
{
    if (level < 0)
        on_jpeg_error(cinfo);
}

static void on_jpeg_progress(j_common_ptr cinfo)
{
    j_decompress_ptr d = (j_decompress_ptr)cinfo;
    if (cinfo->is_decompressor && d->input_scan_number > MAX_SCANS) {
        JpegFailure *f = (JpegFailure *)cinfo->err;
        snprintf(f->message, sizeof f->message, "more than %d progressive scans", MAX_SCANS);
        f->status = GHM_ERR_UNSUPPORTED;
        longjmp(f->jump, 1);
    }
}

/* The source: the whole file in memory, as jpeg_mem_src, except that running out of data fails
 * here as truncated. jpeg_mem_src pads with a fake EOI and warns (JWRN_JPEG_EOF), and on the GPU
 * machine's libjpeg that warning did not arrive under that number: a cut file was reported as
 * "damaged JPEG data: Premature end of JPEG file". Running out is ours to see, so we say it. */
static void source_init(j_decompress_ptr cinfo) { (void)cinfo; }

static boolean source_fill(j_decompress_ptr cinfo)
{
    JpegFailure *f = (JpegFailure *)cinfo->err;
    snprintf(f->message, sizeof f->message, "premature end of file");
    f->status = GHM_ERR_TRUNCATED;
    longjmp(f->jump, 1);
}

static void source_skip(j_decompress_ptr cinfo, long bytes)
{
    struct jpeg_source_mgr *src = cinfo->src;
    if (bytes <= 0)
        return;
    if ((unsigned long)bytes > src->bytes_in_buffer)
        source_fill(cinfo);
    src->next_input_byte += bytes;
    src->bytes_in_buffer -= (size_t)bytes;
}

static void source_term(j_decompress_ptr cinfo) { (void)cinfo; }

static void use_source(JpegDecoder *d, const uint8_t *data, size_t size)
{
    d->source.init_source = source_init;
    d->source.fill_input_buffer = source_fill;
    d->source.skip_input_data = source_skip;
    d->source.resync_to_restart = jpeg_resync_to_restart;
    d->source.term_source = source_term;
    d->source.next_input_byte = data;
    d->source.bytes_in_buffer = size;
    d->cinfo.src = &d->source;
}

/* --- EXIF orientation -------------------------------------------------------------------- */

#define EXIF_ORIENTATION 0x0112
#define TIFF_SHORT 3

static uint32_t tiff_u16(const uint8_t *p, int le)
{
    return le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 : (uint32_t)p[0] << 8 | p[1];
}

static uint32_t tiff_u32(const uint8_t *p, int le)
{
    return le ? tiff_u16(p, 1) | tiff_u16(p + 2, 1) << 16
              : tiff_u16(p, 0) << 16 | tiff_u16(p + 2, 0);
}

/* The orientation (1..8) in an APP1 segment's data, or 1: not EXIF, no such tag, or a value out
 * of range or out of the segment. */
static int exif_orientation(const uint8_t *p, size_t n)
{
    if (n < 14 || memcmp(p, "Exif\0\0", 6) != 0)
        return 1;
    p += 6, n -= 6; /* the TIFF header: byte order, 42, the first IFD's offset */
    int le = p[0] == 'I' && p[1] == 'I';
    if ((!le && !(p[0] == 'M' && p[1] == 'M')) || tiff_u16(p + 2, le) != 42)
        return 1;
    size_t ifd = tiff_u32(p + 4, le);
    if (ifd > n - 2)
        return 1;
    size_t entries = tiff_u16(p + ifd, le);
    for (size_t i = 0, at = ifd + 2; i < entries && at + 12 <= n; i++, at += 12) {
        if (tiff_u16(p + at, le) != EXIF_ORIENTATION)
            continue;
        uint32_t v = tiff_u16(p + at + 8, le); /* one SHORT sits in the value field's start */
        if (tiff_u16(p + at + 2, le) != TIFF_SHORT || tiff_u32(p + at + 4, le) != 1 || v < 1 ||
            v > 8)
            return 1;
        return (int)v;
    }
    return 1;
}

static int marker_orientation(const struct jpeg_decompress_struct *cinfo)
{
    for (jpeg_saved_marker_ptr m = cinfo->marker_list; m; m = m->next) {
        int o = m->marker == JPEG_APP0 + 1 ? exif_orientation(m->data, m->data_length) : 1;
        if (o != 1)
            return o;
    }
    return 1;
}

/* --- decoding ----------------------------------------------------------------------------- */

/* Chooses grey output, or refuses colour spaces we cannot turn into a brightness. */
static int choose_output(JpegDecoder *d, char *why, size_t why_size)
{
    switch (d->cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE:
    case JCS_YCbCr:
    case JCS_RGB:
        d->cinfo.out_color_space = JCS_GRAYSCALE;
        return GHM_OK;
    case JCS_CMYK:
    case JCS_YCCK:
        ghmi_why(why, why_size, "CMYK JPEG images are not supported");
        return GHM_ERR_UNSUPPORTED;
    default:
        ghmi_why(why, why_size, "JPEG colour space %d is not supported",
                 (int)d->cinfo.jpeg_color_space);
        return GHM_ERR_UNSUPPORTED;
    }
}

/* The only function that calls into libjpeg; returns GHM_OK or a GHM_ERR_*. */
static int decode_with_libjpeg(JpegDecoder *d, const uint8_t *data, size_t size, char *why,
                               size_t why_size)
{
    if (setjmp(d->failure.jump))
        return d->failure.status;
    jpeg_create_decompress(&d->cinfo);
    d->progress.progress_monitor = on_jpeg_progress;
    d->cinfo.progress = &d->progress;
    use_source(d, data, size);
    jpeg_save_markers(&d->cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_read_header(&d->cinfo, TRUE);
    /* read now: the saved markers go with the image's memory at jpeg_finish_decompress */
    int orientation = marker_orientation(&d->cinfo);
    int ret = ghmi_image_check_size(d->cinfo.image_width, d->cinfo.image_height, why, why_size);
    if (ret < 0 || (ret = choose_output(d, why, why_size)) < 0)
        return ret;
    jpeg_start_decompress(&d->cinfo);
    if (d->cinfo.output_components != 1) {
        ghmi_why(why, why_size, "JPEG decoder did not produce grey output");
        return GHM_ERR_EXTERNAL;
    }
    ret = ghm_image_create((int)d->cinfo.output_width, (int)d->cinfo.output_height, &d->img);
    if (ret < 0)
        return ret;
    while (d->cinfo.output_scanline < d->cinfo.output_height) {
        JSAMPROW row = d->img->pixels + (size_t)d->cinfo.output_scanline * d->img->stride;
        jpeg_read_scanlines(&d->cinfo, &row, 1);
    }
    /* Reading to EOI catches a file cut after its last scan. */
    jpeg_finish_decompress(&d->cinfo);
    return ghmi_image_orient(orientation, &d->img);
}

static void describe_failure(const JpegFailure *f, int ret, char *why, size_t why_size)
{
    if (ret == GHM_ERR_TRUNCATED)
        ghmi_why(why, why_size, "truncated JPEG data (premature end of file)");
    else if (ret == GHM_ERR_NOMEM)
        ghmi_why(why, why_size, "out of memory decoding JPEG");
    else if (ret == GHM_ERR_UNSUPPORTED)
        ghmi_why(why, why_size, "unsupported JPEG: %s", f->message);
    else
        ghmi_why(why, why_size, "damaged JPEG data: %s", f->message);
}

int ghmi_jpeg_decode(const uint8_t *data, size_t size, GhmImage **out, char *why,
                     size_t why_size)
{
    JpegDecoder d;
    memset(&d, 0, sizeof d);
    d.cinfo.err = jpeg_std_error(&d.failure.mgr);
    d.failure.mgr.error_exit = on_jpeg_error;
    d.failure.mgr.emit_message = on_jpeg_message;
    int ret = decode_with_libjpeg(&d, data, size, why, why_size);
    /* A message from libjpeg means it longjmped; otherwise why was written where we failed. */
    if (ret < 0 && d.failure.message[0] != '\0')
        describe_failure(&d.failure, ret, why, why_size);
    else if (ret == GHM_ERR_NOMEM)
        ghmi_why(why, why_size, "out of memory decoding JPEG");
    if (ret < 0)
        ghm_image_free(&d.img);
    /* Safe even when creation itself failed: the struct was zeroed and mem is NULL then. */
    jpeg_destroy_decompress(&d.cinfo);
    *out = d.img;
    return ret;
}
