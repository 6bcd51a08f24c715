/*
 * pointcloud_ply_internal.h - what the two halves of the PLY reader share: the header as parsed
 * (elements, properties, where the kept vertex fields are), parsed by pointcloud_ply_header.c
 * and walked by the body reader in pointcloud_ply.c. Included by those two files only.
 */
#ifndef GHM_POINTCLOUD_PLY_INTERNAL_H
#define GHM_POINTCLOUD_PLY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pointcloud_internal.h"

enum { MAX_ELEMENTS = 32, MAX_PROPS = 64, NAME_LEN = 64, LINE_LEN = 1024, TOKEN_LEN = 96 };

typedef enum PlyScalar {
    S_CHAR, S_UCHAR, S_SHORT, S_USHORT, S_INT, S_UINT, S_FLOAT, S_DOUBLE
} PlyScalar;

typedef enum PlyFormat { FMT_ASCII, FMT_LITTLE, FMT_BIG } PlyFormat;

typedef struct PlyProp {
    char name[NAME_LEN];
    PlyScalar type; /* of the value, or of the items of a list */
    int is_list;
    PlyScalar count_type;
    size_t offset; /* byte offset in a fixed-size binary record (elements without lists) */
} PlyProp;

typedef struct PlyElement {
    char name[NAME_LEN];
    uint64_t count;
    int line; /* header line that declared it, for messages */
    int nprops;
    int has_list;
    size_t min_bytes; /* binary: scalars plus list counts; the record size when no lists */
    PlyProp props[MAX_PROPS];
} PlyElement;

/* The vertex fields the reader keeps, in this order. */
enum { F_X, F_Y, F_Z, F_NX, F_NY, F_NZ, F_R, F_G, F_B, F_COUNT };

typedef struct PlyHeader {
    PlyFormat format;
    int have_format;
    int nelems;
    int vertex; /* index of the vertex element */
    int field[F_COUNT]; /* property index of each field in the vertex element, or -1 */
    size_t body;        /* byte offset of the first body byte */
    int body_line;      /* line number of the first body line (ascii) */
    PlyElement elems[MAX_ELEMENTS];
} PlyHeader;
/* Bytes of each PlyScalar in a binary body. */
extern const size_t ghmi_ply_scalar_size[];

/* The names each kept vertex field goes by (the second may be NULL). */
extern const char *const ghmi_ply_field_names[F_COUNT][2];

static inline int ghmi_ply_is_blank(int c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Parses the header of data[0..size) (which starts with the PLY magic) into h and finds the
 * vertex fields. GHM_ERR_FORMAT or GHM_ERR_UNSUPPORTED with why naming the header line. */
int ghmi_ply_parse_header(const uint8_t *data, size_t size, PlyHeader *h, char *why,
                          size_t why_size);

/* Refuses element counts that the bytes after the header cannot hold (GHM_ERR_TRUNCATED) and
 * vertex counts above GHM_POINTCLOUD_MAX_POINTS (GHM_ERR_TOO_LARGE), before anything is
 * allocated. */
int ghmi_ply_check_counts(const PlyHeader *h, size_t size, char *why, size_t why_size);

#endif /* GHM_POINTCLOUD_PLY_INTERNAL_H */
