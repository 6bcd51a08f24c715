/*
 * video_output.c - the lines of the video mode (video_run.h): one per selected frame on
 * stdout (JSON Lines with --json), damaged frames, the summary, and the progress bar on a
 * terminal's stderr. What they hold is the contract described in cmd_video.c.
 */
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "json_out.h"
#include "video_run.h"

double ghm_video_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------- progress bar */


void ghm_video_progress_clear(GhmVideoProgress *p)
{
    if (p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->drawn = 0;
    }
}

static void format_duration(double s, char *buf, size_t n)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}

void ghm_video_progress_draw(GhmVideoProgress *p, int64_t done, int force)
{
    if (!p->active)
        return;
    double t = ghm_video_now_s();
    if (!force && t - p->last_draw < 0.1)
        return;
    p->last_draw = t;
    double fps = t > p->t0 ? done / (t - p->t0) : 0.0;
    char line[160], left[32] = "?";
    if (p->total > 0 && fps > 0)
        format_duration((double)(p->total - done) / fps, left, sizeof left);
    if (p->total > 0) {
        enum { WIDTH = 30 };
        char bar[WIDTH + 1];
        int filled = (int)(WIDTH * (done > p->total ? 1.0 : (double)done / p->total));
        for (int i = 0; i < WIDTH; i++)
            bar[i] = i < filled ? '#' : '.';
        bar[WIDTH] = '\0';
        snprintf(line, sizeof line, "[%s] %lld/%lld frames  %.1f frames/s  %s left", bar,
                 (long long)done, (long long)p->total, fps, left);
    } else {
        snprintf(line, sizeof line, "%lld frames  %.1f frames/s", (long long)done, fps);
    }
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    p->drawn = 1;
}

/* ------------------------------------------------------------------------------ output */


static json_t *pts_json(double pts)
{
    return isnan(pts) ? json_null() : json_real(pts);
}

/* {"path": the video} for the lines of one of several queries; json_null() if out of memory. */
static json_t *query_json(const GhmVideoRun *run)
{
    json_t *q = json_pack("{s:o}", "path", ghm_json_string_lossy(run->subject));
    return q ? q : json_null();
}

/* "VIDEO: " before a text line when the video is one of several queries. */
static int print_prefix(const GhmVideoRun *run)
{
    return run->name_query && fprintf(run->out, "%s: ", run->subject) < 0 ? -1 : 0;
}

/* "frame" and "pts" first, then the image mode's fields for the same result; the query size
 * (for its corners) is the frame's, or the reference image's with --swap. */
static int print_frame_json(const GhmVideoRun *run, const GhmVideoFrame *f,
                            const GhmMatchResult *res)
{
    const GhmImage *query = run->video->swap ? run->reference : f->image;
    json_t *fields = ghm_match_result_json(res, query->width, query->height);
    json_t *obj = json_object();
    if (!fields || !obj) {
        json_decref(fields);
        json_decref(obj);
        return -1;
    }
    json_object_set_new(obj, "frame", json_integer(f->index));
    json_object_set_new(obj, "pts", pts_json(f->pts));
    json_object_update(obj, fields);
    if (run->name_query)
        json_object_set_new(obj, "query", query_json(run));
    json_decref(fields);
    if (run->video->swap)
        json_object_set_new(obj, "swapped", json_true());
    int ret = ghm_json_print(run->out, obj);
    json_decref(obj);
    return ret;
}

static int print_frame_text(const GhmVideoRun *run, const GhmVideoFrame *f,
                            const GhmMatchResult *res)
{
    int n;
    if (print_prefix(run) < 0)
        return -1;
    if (res->found)
        n = fprintf(run->out,
                    "frame %lld  %.3f s  found  scale %.4f  rotation %+.2f deg  translation "
                    "(%.2f, %.2f)  votes %u  confidence %.3f\n",
                    (long long)f->index, f->pts, res->scale, res->rotation_deg, res->tx, res->ty,
                    res->votes, res->confidence);
    else
        n = fprintf(run->out, "frame %lld  %.3f s  not found\n", (long long)f->index, f->pts);
    return n < 0 ? -1 : 0;
}

int ghm_video_print_frame(const GhmVideoRun *run, const GhmVideoFrame *f,
                          const GhmMatchResult *res)
{
    return run->common->json ? print_frame_json(run, f, res) : print_frame_text(run, f, res);
}

int ghm_video_print_damaged(const GhmVideoRun *run, const GhmQueuedFrame *item)
{
    const GhmCommonOptions *common = run->common;
    if (common->quiet)
        return 0;
    if (!common->json) {
        if (print_prefix(run) < 0)
            return -1;
        return fprintf(run->out, "frame %lld  %.3f s  damaged: %s\n",
                       (long long)item->frame.index, item->frame.pts, item->why) < 0 ? -1 : 0;
    }
    json_t *obj = json_object();
    json_object_set_new(obj, "frame", json_integer(item->frame.index));
    json_object_set_new(obj, "pts", pts_json(item->frame.pts));
    json_object_set_new(obj, "found", json_false());
    json_object_set_new(obj, "damaged", ghm_json_string_lossy(item->why));
    if (run->name_query)
        json_object_set_new(obj, "query", query_json(run));
    int ret = ghm_json_print(run->out, obj);
    json_decref(obj);
    return ret;
}

void ghm_video_print_summary(const GhmVideoRun *run, const GhmVideoStats *s)
{
    const GhmCommonOptions *c = run->common;
    if (!c->quiet && s->frames == 0 && s->damaged == 0 && run->video->start > 0)
        ghm_cli_warn(run->subject, "no frame at or after --start %ld: the video ends before it",
                     run->video->start);
    if (c->quiet || (c->json && !c->verbose && !isatty(2)))
        return;
    double wall = ghm_video_now_s() - s->t0;
    char line[512], worst[64] = ""; /* no frame matched: no worst one to name */
    if (s->worst_frame >= 0)
        snprintf(worst, sizeof worst, ", worst %.1f ms (frame %lld)", s->match_ms_worst,
                 (long long)s->worst_frame);
    snprintf(line, sizeof line,
             "%lld frames, %lld found, %lld damaged; matching %.1f ms per frame on average%s; "
             "%.1f frames/s overall",
             (long long)s->frames, (long long)s->found, (long long)s->damaged,
             s->frames ? s->match_ms_sum / s->frames : 0.0, worst,
             wall > 0 ? s->frames / wall : 0.0);
    if (c->json)
        fprintf(stderr, "%s: summary: %s\n", GHM_PROGRAM, line);
    else if (print_prefix(run) == 0)
        fprintf(run->out, "summary: %s\n", line);
}


/* The counts of another part of the frames added to s. */
void ghm_video_add_stats(GhmVideoStats *s, const GhmVideoStats *t)
{
    s->frames += t->frames;
    s->found += t->found;
    s->damaged += t->damaged;
    s->match_ms_sum += t->match_ms_sum;
    if (t->match_ms_worst > s->match_ms_worst) {
        s->match_ms_worst = t->match_ms_worst;
        s->worst_frame = t->worst_frame;
    }
}

