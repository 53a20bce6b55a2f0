/*
 * progress.c - the progress line the long commands share (progress.h):
 * the rate and the ETA of the current stage, drawn over itself with \r
 * and cut to the terminal's width so that it never wraps.
 */
#include "bot/cmd/progress.h"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "scoring/util/pt.h"
#include "bot/cmd/cli.h"

void progress_init(struct progress *pr, const struct cli_ctx *ctx)
{
	memset(pr, 0, sizeof(*pr));
	pr->tty = !ctx->quiet && isatty(STDERR_FILENO);
}

/* Finer than pt_now_ms(): a short stage still has a rate. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void add_time(struct buf *b, double s)
{
	long t = s < 0 ? 0 : s > 360000 ? 360000 : (long)(s + 0.5);

	if (t >= 3600)
		buf_addf(b, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		buf_addf(b, "%ld:%02ld", t / 60, t % 60);
}

static void add_rate(struct buf *b, double rate)
{
	if (rate >= 10)
		buf_addf(b, ", %.0f/s", rate);
	else
		buf_addf(b, ", %.2f/s", rate);
}

/* The line of r after el seconds of its stage. */
static void format(struct buf *b, const struct pt_progress_report *r, double el)
{
	double share = r->share;

	if (!r->unit && !r->total && share <= 0) {
		buf_addf(b, "%s...", r->stage);
		if (r->note)
			buf_addf(b, " (%s)", r->note);
		return;
	}
	buf_addf(b, "%s:", r->stage);
	if (r->unit) {
		buf_addf(b, " %zu", r->done);
		if (r->total)
			buf_addf(b, "/%zu", r->total);
		buf_addf(b, " %s", r->unit);
		if (el > 0)
			add_rate(b, (double)r->done / el);
	}
	if (r->total && r->done <= r->total)
		share = (double)r->done / (double)r->total;
	if (!r->unit && share > 0)
		buf_addf(b, " %.0f%%", 100 * share);
	if (share > 0 && share <= 1 && el > 0) {
		buf_addstr(b, ", ETA ");
		add_time(b, el * (1 - share) / share);
	}
	if (r->note)
		buf_addf(b, " (%s)", r->note);
}

static size_t width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) || ws.ws_col < 20)
		return 0;
	return ws.ws_col - 1;
}

void progress_show(struct progress *pr, const struct pt_progress_report *r)
{
	struct buf b = BUF_INIT;
	double now;
	size_t w;

	if (!pr->tty || !r->stage)
		return;
	now = now_s();
	if (strncmp(pr->stage, r->stage, sizeof(pr->stage) - 1)) {
		snprintf(pr->stage, sizeof(pr->stage), "%s", r->stage);
		pr->t0 = now;
	} else if (now - pr->last < PROGRESS_INTERVAL_MS / 1000.0 &&
		   !(r->total && r->done == r->total) && r->share < 1) {
		return; /* the last item of a stage is always drawn */
	}
	pr->last = now;
	format(&b, r, now - pr->t0);
	w = width();
	if (w && b.len > w)
		b.len = w;
	fprintf(stderr, "\r\033[K%.*s", (int)b.len, b.ptr);
	fflush(stderr);
	pr->shown = 1;
	buf_free(&b);
}

static void draw(const struct pt_progress_report *r, void *ctx)
{
	progress_show(ctx, r);
}

struct pt_progress progress_cb(struct progress *pr)
{
	struct pt_progress p = { draw, pr };

	return p;
}

void progress_end(struct progress *pr)
{
	if (pr->shown)
		fputs("\r\033[K", stderr);
	pr->shown = 0;
	pr->stage[0] = '\0';
}
