/*
 * pointcloud_load.c - loading a point cloud: the whole file read through the file-I/O unit
 * (copied, not mapped: a mapped file that another process truncates while it is parsed kills
 * the process with SIGBUS; the copy costs about 0.1 s a gigabyte), and the reader chosen by the
 * content's signature, never by the file name. Decoding runs in the "C" locale. See
 * ghm_pointcloud.h.
 */
#include "ghm_file_io.h"
#include "pointcloud_internal.h"

/* Far above the bytes of any cloud of GHM_POINTCLOUD_MAX_POINTS points: it only stops a stream
 * (a pipe) that never ends from growing until memory runs out. */
#define MAX_FILE_BYTES ((size_t)1 << 40)

static int decode(const uint8_t *data, size_t size, GhmPointCloud **out, char *why,
                  size_t why_size)
{
    if (!out || (!data && size))
        return ghmi_pc_fail(why, why_size, GHM_ERR_INVALID, "invalid arguments");
    if (size == 0)
        return ghmi_pc_fail(why, why_size, GHM_ERR_FORMAT, "empty file");
    switch (ghm_file_sniff(data, size, 0)) {
    case GHM_FILE_PLY:
        return ghmi_ply_decode(data, size, out, why, why_size);
    case GHM_FILE_XYZ:
        return ghmi_xyz_decode(data, size, out, why, why_size);
    default: {
        /* Say what it is when we know; else the XYZ reader names the first word it cannot read. */
        int ret = ghmi_pc_refuse_other_formats(data, size, why, why_size);
        if (ret < 0)
            return ret;
        return ghmi_xyz_decode(data, size, out, why, why_size);
    }
    }
}

int ghm_pointcloud_decode(const uint8_t *data, size_t size, GhmPointCloud **out, char *why,
                          size_t why_size)
{
    locale_t previous = ghmi_pc_c_locale_enter();
    int ret = decode(data, size, out, why, why_size);
    ghmi_pc_c_locale_leave(previous);
    return ret;
}

int ghm_pointcloud_load(const char *path, GhmPointCloud **out, char *why, size_t why_size)
{
    if (!path || !out)
        return ghmi_pc_fail(why, why_size, GHM_ERR_INVALID, "invalid arguments");
    GhmFileData in;
    int ret = ghm_file_read(path, MAX_FILE_BYTES, 0, &in, why, why_size);
    if (ret < 0)
        return ret;
    ret = ghm_pointcloud_decode(in.data, in.size, out, why, why_size);
    ghm_file_data_free(&in);
    return ret;
}
