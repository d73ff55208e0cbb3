/* A session's Go 1.22+ trace (record --go-version 1.22|1.23): the v2
 * encoder on the session's file, staged, so that the file only ever
 * grows by whole generations (docs/format.md, "Recording v2"). */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/fs_ids.h"
#include "v2/gt_v2enc.h"

/* Every byte, with the owner's file-system ids when there is an owner. */
static int write_all(void *ctx, const void *p, size_t n)
{
	struct gt_session *s = ctx;

	return gt_fs_write_all(s->owner_uid ? gt_session_write_as_owner : NULL, s, s->out_fd, p, n);
}

int gt_session_v2_open(struct gt_session *s, int go_version)
{
	int err;

	s->v2 = calloc(1, sizeof(*s->v2));
	if (!s->v2)
		return -ENOMEM;
	err = gt_v2enc_init(s->v2, go_version - 1000, 1000000000ull, write_all, s);
	if (err) {
		gt_session_v2_free(s);
		return err;
	}
	gt_v2enc_stage(s->v2);
	return 0;
}

int gt_session_v2_close(struct gt_session *s)
{
	return gt_v2enc_finish(s->v2);
}

uint64_t gt_session_v2_bytes(const struct gt_session *s)
{
	return s->v2 ? s->v2->written + s->v2->nstaged : 0;
}

uint64_t gt_session_v2_events(const struct gt_session *s)
{
	return s->v2 ? s->v2->events : 0;
}

const char *gt_session_v2_error(const struct gt_session *s)
{
	return s->v2 && s->v2->failed ? s->v2->error : NULL;
}

void gt_session_v2_free(struct gt_session *s)
{
	if (!s->v2)
		return;
	gt_v2enc_free(s->v2);
	free(s->v2);
	s->v2 = NULL;
}
