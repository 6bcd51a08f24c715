/*
 * cmd_video.h - the video mode of `geohash-match [OPTIONS] REFERENCE VIDEO`, entered from
 * cmd_match.c when QUERY is "-" or a file that is not a PNG/JPEG by content.
 *
 * Which way round: every decoded frame is the QUERY and the REFERENCE image is the reference,
 * whose tables are built once, so the matrix maps FRAME pixels into the REFERENCE image. That
 * suits a reference that is the larger picture (a frame of the video, a photo the video pans
 * across). When the reference is the smaller picture (a logo to find in every frame), --swap
 * makes each frame the reference and the image the query: the matrix then maps REFERENCE-image
 * pixels into the FRAME, and the frame's tables are rebuilt for every frame (slower).
 */
#ifndef GHM_CMD_VIDEO_H
#define GHM_CMD_VIDEO_H

#include "match_cli.h"
#include "video_cli.h"

/* Matches every selected frame of opt->query against the reference, prints one line per frame
 * (JSON Lines with --json), a progress bar on a terminal and a summary. matcher is the
 * reference's (required); ref_img the decoded reference image (required with --swap; NULL
 * with --load-ref). Returns GHM_EXIT_FOUND when some frame matched, GHM_EXIT_NOT_FOUND when
 * none did, GHM_EXIT_ERROR on an error, after the frames before it were printed (a truncated
 * file gives its frames, then one error line). Owns nothing it is given. */
int ghm_cmd_video(const GhmMatchOptions *opt, const GhmVideoOptions *video, GhmContext *ctx,
                  GhmMatcher *matcher, const GhmImage *ref_img);

/* Under mpirun (ranks.h): 1 when the run's one video file is split between the ranks, each
 * matching a range of its selected frames, rank 0 printing every line in frame order and the
 * summary of all. A video on standard input, or one of several queries, is not split. */
int ghm_video_cli_split(const GhmMatchOptions *opt);

/* Every rank of a split run meets the others at the end of ghm_cmd_video; a rank that fails
 * before it gets there calls this instead, so that no rank waits for it forever. */
void ghm_video_cli_split_abandon(void);

#endif /* GHM_CMD_VIDEO_H */
